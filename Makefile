# The README's two commands: `make demo` and `make test`.
BUILD   ?= build
TYPE    ?= Release
PYTHON  ?= python3
OUT     ?= out
JOBS    ?= $(shell nproc)
# ccache (installed by install_deps.sh) makes builds in a fresh clone cheap:
# paths are hashed relative to the clone, so another clone of the same commit
# hits the cache. `make CCACHE= ...` turns it off.
CCACHE  ?= $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
export CMAKE_C_COMPILER_LAUNCHER ?= $(CCACHE)
export CMAKE_CXX_COMPILER_LAUNCHER ?= $(CCACHE)
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
endif

.PHONY: all deps configure build demo test clean

all: build

deps:
	@bash scripts/install_deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(TYPE) -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Compile the bundled digit classifier with atc, run it with msame on the
# bundled samples, and print predictions, accuracy and latency.
demo: build
	@mkdir -p $(OUT)/demo
	$(BUILD)/atc --model=models/digits/digits_mlp.onnx --framework=5 \
	    --output=$(OUT)/digits_mlp --input_shape="image:64,1,8,8" --input_format=NCHW
	$(BUILD)/msame --model $(OUT)/digits_mlp.om --input models/digits/samples.npy \
	    --output $(OUT)/demo --outfmt NPY --loop 200
	@$(PYTHON) models/digits/report.py $(OUT)/demo/digits_mlp_output_0.npy models/digits/labels.npy

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(OUT)

# ---- Robustness: sanitizers, stress, fuzzing (docs/reliability.md) ------------
ASAN_BUILD   ?= build-asan
TSAN_BUILD   ?= build-tsan
FUZZ_BUILD   ?= build-fuzz
SAN_TYPE     ?= RelWithDebInfo
# -O1 with line tables: a third of -O2 -g's compile time, still usable traces;
# assertions stay on.
SAN_FLAGS    ?= -O1 -g1
FUZZ_SECONDS ?= 60
# A fixed libFuzzer seed: a run that fails can be repeated (FUZZ_SEED=0: a new seed each run).
FUZZ_SEED    ?= 1
FUZZ_TARGETS := om onnx_parser mindir_parser npy dvpp gguf

.PHONY: asan tsan fuzz arm64-test

# Every test (unit, Python end-to-end, AscendCL apps, stress) on an
# ASan+UBSan build; any report fails the run. The stress test runs fewer
# iterations, and its RSS bound is raised: ASan keeps freed memory in
# quarantine (LeakSanitizer checks for leaks instead). Left out: the offline
# LLM API's Python suite (py_test_llm_offline), whose child interpreter with
# the ASan runtime preloaded exits 1 without a report (not understood yet);
# liboc_llm.so's C calls still run instrumented in llm_app_misuse.
asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(SAN_TYPE) -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SAN_FLAGS)" \
	    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(SAN_FLAGS)" -DOC_SANITIZE=address,undefined \
	    -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan_suppressions.txt \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    OC_STRESS_RUNS=400 OC_STRESS_FIXED=500 OC_STRESS_RSS_BOUND_KIB=1048576 \
	    ctest --output-on-failure -j $(JOBS) -E '^py_test_llm_offline$$'

# The concurrency tests on a TSan build: thread pool, executor and runtime
# stream unit tests, the host-callback app and the AscendCL stress test (its
# models compiled by the Release atc, since atc is single-threaded).
tsan: build
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(SAN_TYPE) -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SAN_FLAGS)" \
	    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(SAN_FLAGS)" -DOC_SANITIZE=thread \
	    -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target oc_concurrency_tests acl_stress acl_callback
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 OC_ATC=$(abspath $(BUILD))/atc \
	    OC_STRESS_RUNS=300 OC_STRESS_CYCLES=1000 OC_STRESS_FIXED=200 OC_STRESS_RSS_BOUND_KIB=1048576 \
	    ctest --output-on-failure -R 'concurrency_unit_tests|stress_acl|acl_app_callback'

# libFuzzer targets built with clang (installed by install_deps.sh --fuzz),
# each run for FUZZ_SECONDS from its seed corpus in tests/fuzz/<name>; new
# inputs go to $(FUZZ_BUILD)/corpus, crashes to $(FUZZ_BUILD)/artifacts.
# The kernels come uninstrumented from the Release build's liboc_core.a.
fuzz: build
	@bash scripts/install_deps.sh --fuzz
	@CC=$$(command -v clang-14 || command -v clang) CXX=$$(command -v clang++-14 || command -v clang++) \
	    cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(SAN_TYPE) -DOC_FUZZ=ON \
	    -DOC_FUZZ_CORE_LIB=$(abspath $(BUILD))/liboc_core.a -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/artifacts; \
	  echo "fuzz: $${t}_fuzz for $(FUZZ_SECONDS) s"; \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $(FUZZ_BUILD)/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) \
	    -seed=$(FUZZ_SEED) -rss_limit_mb=2048 -timeout=30 -max_len=65536 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/$${t}- \
	    $(FUZZ_BUILD)/corpus/$$t tests/fuzz/$$t > $(FUZZ_BUILD)/$${t}_fuzz.log 2>&1 \
	    || { tail -60 $(FUZZ_BUILD)/$${t}_fuzz.log; exit 1; }; \
	  grep -E '^Done|stat::number_of_executed_units' $(FUZZ_BUILD)/$${t}_fuzz.log | head -2; \
	done

# The unit tests cross-compiled for 64-bit Arm (NEON kernels, the scalar
# fallbacks, everything without x86 intrinsics) and run under qemu-aarch64's
# user-mode emulation; installs the cross toolchain and arm64 libraries first
# (install_deps.sh --arm64). Not part of `make test`: emulation is slow. The
# default suites are the kernel suites that run on one thread: qemu-user as
# installed here hangs any program whose threads block on each other (a
# ten-line std::thread + condition_variable program too), so suites that make
# their own 2-thread pools are left out (ARM64_TESTS='*' runs everything).
ARM64_BUILD ?= build-arm64
ARM64_TESTS ?= GemmUkernel.*:IntegerGemmUkernel.*:GemmUnpackTest.*:NchwcConvKernel.*:Attention.*:PoolTest.*:EwActivation.*:EwBinary.*:EwSoftmax.*:EwLayerNorm.*:EwReduce.*:EwCastUtil.*:DataTypes.*:QuantizeRowF32.*:DequantizeRowF32.*
arm64-test:
	@bash scripts/install_deps.sh --arm64
	@cmake -S . -B $(ARM64_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	    -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	@cmake --build $(ARM64_BUILD) -j $(JOBS) --target oc_unit_tests
	@OPENCANN_NUM_THREADS=1 OPENCANN_SPIN_US=0 qemu-aarch64 -L /usr/aarch64-linux-gnu $(ARM64_BUILD)/oc_unit_tests \
	    --gtest_filter='$(ARM64_TESTS)' --gtest_brief=1
