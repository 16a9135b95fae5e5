#!/usr/bin/env bash
# Installs what the build and the tests need, skipping what is already there.
# Debian packages through apt-get, Python packages through pip (no other source).
set -euo pipefail

APT_PKGS=(cmake ninja-build g++ make protobuf-compiler libprotobuf-dev flatbuffers-compiler
          libflatbuffers-dev libgtest-dev libgmock-dev libbenchmark-dev python3 python3-pip
          nlohmann-json3-dev chromium libgloo-dev iproute2 libopenmpi-dev openmpi-bin ccache
          libturbojpeg0-dev libspng-dev libpcre2-dev libicu-dev libcpp-httplib-dev)  # libcpp-httplib-dev: the LLM server's HTTP (docs/llm.md, "Server"); libpcre2-dev, libicu-dev: the LLM tokenizer's regexes and Unicode normalization (docs/llm.md); libturbojpeg0-dev, libspng-dev: the DVPP JPEG and PNG codecs (docs/dvpp.md); nlohmann-json3-dev: atc --fusion_switch_file, HCCL rank tables; chromium: tests/python/test_msprof.py renders the profiling report headless; libgloo-dev: libhccl's transport; iproute2: the multi-host HCCL tests (network namespaces); OpenMPI: hccl_test runs under mpirun; ccache: rebuilds in a fresh clone (CI builds four trees) come from the cache
# magika: a 3 MB ONNX model with trained weights inside its wheel (16 MB; needs only
# click + onnxruntime), the real-weights check of tests/python/test_real_models.py
# opencv-python-headless: the independent resize reference of tests/python/test_dvpp.py
# tokenizers: Hugging Face's tokenizer library, the reference of tests/python/test_llm_tokenizer.py
# aiohttp: bench/llm_serving_bench.py's HTTP client (streamed SSE requests) and the scripted
#   OpenAI-like server of tests/python/test_llm_bench_client.py
# torch: the reference of the training tests (tests/python/test_mindspore_torch.py) and bench/train_bench.py's peer
# openai, schemathesis: the LLM server's client and API fuzzer in tests/python/test_llm_server.py
# gguf: llama.cpp's GGUF writer and quantizers (pure Python + numpy), which write the
# files of tests/python/test_llm_gguf.py; sentencepiece: the reference of its SentencePiece
# (tokenizer.ggml.model "llama") tokenizer test
# aiohttp: the asyncio HTTP client of bench/llm_serving_bench.py and its test's scripted server
PY_PKGS=(numpy onnx onnxruntime scikit-learn pytest pillow magika ml_dtypes opencv-python-headless torch transformers tokenizers
         openai schemathesis aiohttp gguf sentencepiece)

# `install_deps.sh --fuzz`: only the compiler for the fuzz targets (make fuzz);
# make test never needs it.
if [ "${1:-}" = "--fuzz" ]; then
  APT_PKGS=(clang-14 libclang-rt-14-dev)
fi
# `install_deps.sh --arm64`: the Arm cross toolchain, qemu's user-mode emulator
# and the arm64 builds of the libraries we link (Debian multiarch), for
# `make arm64-test`.
if [ "${1:-}" = "--arm64" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO dpkg --add-architecture arm64
  fi
  APT_PKGS=(g++-aarch64-linux-gnu qemu-user libprotobuf-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
            libflatbuffers-dev:arm64 libturbojpeg0-dev:arm64 libspng-dev:arm64 libpcre2-dev:arm64 libicu-dev:arm64)
fi

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3/pip may come from elsewhere (pyenv): accept a working interpreter.
if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
  tmp=(); for p in "${missing[@]}"; do [[ $p == python3 || $p == python3-pip ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--fuzz" ]; then
  echo "install_deps: clang and libFuzzer present"
  exit 0
fi
if [ "${1:-}" = "--arm64" ]; then
  echo "install_deps: aarch64 cross toolchain, qemu-user and arm64 libraries present"
  exit 0
fi

py_missing=()
for p in "${PY_PKGS[@]}"; do
  mod=$p
  [ "$p" = scikit-learn ] && mod=sklearn
  [ "$p" = pillow ] && mod=PIL
  [ "$p" = opencv-python-headless ] && mod=cv2
  python3 -c "import $mod" 2>/dev/null || py_missing+=("$p")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "install_deps: pip install ${py_missing[*]}"
  pip_flags=(-q)
  python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && pip_flags+=(--break-system-packages)
  python3 -m pip install "${pip_flags[@]}" "${py_missing[@]}"
fi
# The reference for tests/python/test_mindspore_reference.py: the real MindSpore CPU wheel,
# in its own virtual environment (it needs numpy<2, and its package is named mindspore as
# ours is). About 47 s and 2.8 GB fresh. OPENCANN_MINDSPORE_VENV overrides the path.
MS_VENV="${OPENCANN_MINDSPORE_VENV:-/opt/opencann/mindspore-venv}"
# (A marker written after a complete install: importing mindspore to check takes seconds.)
if [ ! -f "$MS_VENV/.opencann-installed" ]; then
  echo "install_deps: MindSpore reference venv at $MS_VENV"
  SUDO=""; [ ! -w "$(dirname "$MS_VENV")" ] && [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO mkdir -p "$(dirname "$MS_VENV")"
  $SUDO python3 -m venv "$MS_VENV"
  $SUDO env -u PYTHONPATH "$MS_VENV/bin/pip" install -q "numpy<2" mindspore==2.10.0
  env -u PYTHONPATH "$MS_VENV/bin/python" -c "import mindspore" >/dev/null 2>&1
  $SUDO touch "$MS_VENV/.opencann-installed"
fi
echo "install_deps: all dependencies present"
