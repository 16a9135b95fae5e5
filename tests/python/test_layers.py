"""The layering rules of docs/architecture.md, checked on the source tree.

Each folder of src/ belongs to a layer, and a layer may include only the layers
listed for it (its own included). Tests, test utilities, fuzz targets and
benchmarks are exempt: they sit on top and may use anything. The deliberate
exceptions are listed in EXCEPTIONS with the reason; anything else that
includes upward fails here, naming the file, the line and the rule.

Also checked: no source folder holds more than MAX_FILES files, and
docs/architecture.md names every source folder.
"""
import os
import re
import sys
from pathlib import Path

ROOT = Path(os.environ.get("OC_SOURCE_DIR", Path(__file__).resolve().parents[2]))

# Layer of a path: the longest matching prefix wins.
LAYERS = {
    "src/base": "base",
    "src/graph": "graph",
    "src/ops": "ops",
    "src/runtime/device": "device",
    "src/executor": "executor",
    "src/passes": "passes",
    "src/om": "om",
    "src/parser": "parser",
    "src/runtime": "runtime",
    "src/dvpp": "dvpp",
    "src/acl": "acl",
    "src/hccl": "hccl",
    "src/train": "train",
    "src/ms_backend": "ms_backend",
    "src/ascendc": "ascendc",
    "src/llm": "llm",
    "src/llm/tokenizer": "llm_tokenizer",
    "tools": "tools",
}

# What each layer may include (besides itself and system/third-party headers).
ALLOWED = {
    "base": set(),
    "graph": {"base"},
    "ops": {"base", "graph"},
    "device": {"base", "graph", "ops"},
    "executor": {"base", "graph", "ops", "device"},
    "passes": {"base", "graph", "ops", "device", "executor"},
    "om": {"base", "graph", "ops", "device", "executor", "passes"},
    "parser": {"base", "graph", "ops"},
    "runtime": {"base", "graph", "ops", "device", "executor", "passes", "om"},
    # The media engine (DVPP): pixel work over Status, below the API.
    "dvpp": {"base"},
    "acl": {"base", "graph", "ops", "device", "executor", "passes", "om", "runtime", "dvpp"},
    # libhccl.so: its own library over libascendcl.so's public API and hooks
    # (src/acl/acl_hooks.h); from the core only Status and the half-float casts.
    "hccl": {"base", "ops"},
    # Training: graph transforms (autodiff) over the IR, the ops' gradient
    # rules and the passes.
    "train": {"base", "graph", "ops", "device", "executor", "passes"},
    # libms_backend.so: the C interface of training for python/mindspore
    # (ONNX in, programs over the tensor store out).
    "ms_backend": {"base", "graph", "ops", "device", "executor", "passes", "parser", "train"},
    # libascendc.so: Ascend C kernels on the CPU, over the public headers in
    # include/ascendc/ and libascendcl.so's hooks; from the core only the GEMM
    # (the Matmul API's cube unit runs on src/ops/cpu/gemm/, linked in from oc_core).
    "ascendc": {"base", "ops"},
    # LLM serving: models over a paged KV cache on the core's GEMM and
    # attention row kernels; no graph, no runtime. The server (src/llm/server/)
    # turns text into ids with the tokenizer.
    "llm": {"base", "ops", "llm_tokenizer"},
    # The LLM stack's tokenizer: text <-> ids over Status alone (PCRE2, ICU, nlohmann-json outside).
    "llm_tokenizer": {"base"},
    "tools": {"base", "graph", "ops", "device", "executor", "passes", "om", "parser", "runtime", "dvpp", "acl",
              "hccl", "train", "llm", "llm_tokenizer"},
}

# Headers any layer may include: each includes only the C++ library (checked below).
LEAF_HEADERS = {
    # The profiler's recording hooks, called from the executor, streams and the API.
    "src/runtime/trace.h",
}

# (file prefix, included header prefix, why).
EXCEPTIONS = [
    ("src/llm/tokenizer/gguf_vocab.cc", "src/llm/model/gguf.h",
     "a GGUF file carries its tokenizer in its metadata: the tokenizer reads it with the model layer's GGUF "
     "reader (one reader of the format) and builds a tokenizer.json from it"),
    ("src/ascendc/", "src/acl/acl_hooks.h",
     "Ascend C runs a launch's blocks on libascendcl.so's thread pool and queues launches on its streams "
     "through the C hooks it exports"),
    ("src/hccl/", "src/acl/acl_hooks.h",
     "HCCL queues its operations on AscendCL streams through the one C hook libascendcl.so exports for it"),
    ("src/ops/cpu/control_flow/", "src/executor/interpreter_ops.h",
     "If/Loop/Scan and the sequence ops run their subgraphs through the interpreter"),
    ("src/ops/cpu/control_flow/control_flow.cc", "src/passes/passes.h",
     "a Loop/Scan body is optimised once, with the passes, when its shapes become known"),
    ("src/ops/cpu/control_flow/control_flow.cc", "src/runtime/shape_specializer.h",
     "a Loop body whose shapes change between iterations is specialised per shape"),
]

MAX_FILES = 40
TEST_FILE = re.compile(r"(_test\.cc|_test_util\.h|test_util\.h|_fuzz\.cc|_bench\.cc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(rel):
    best = None
    for prefix, layer in LAYERS.items():
        if (rel == prefix or rel.startswith(prefix + "/")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def resolve(include, including):
    """The repository path of a quoted include, or None (generated or system header)."""
    for base in (ROOT / "src", ROOT / "include", including.parent):
        p = base / include
        if p.is_file():
            return p.relative_to(ROOT).as_posix()
    return None


def sources():
    for top in ("src", "tools"):
        for p in sorted((ROOT / top).rglob("*")):
            if p.suffix in (".cc", ".h", ".inc") and p.is_file():
                yield p


def violations():
    out = []
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        if TEST_FILE.search(rel):
            continue
        layer = layer_of(rel)
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(m.group(1), path)
            if target is None or target.startswith("include/") or target in LEAF_HEADERS:
                continue
            tlayer = layer_of(target)
            if tlayer is None or tlayer == layer or tlayer in ALLOWED[layer]:
                continue
            if any(rel.startswith(f) and target.startswith(t) for f, t, _ in EXCEPTIONS):
                continue
            out.append(f"{rel}:{lineno}: layer '{layer}' includes '{target}' of layer '{tlayer}' "
                       f"(allowed: {', '.join(sorted(ALLOWED[layer])) or 'nothing'})")
    return out


def test_no_layer_includes_a_higher_one():
    bad = violations()
    assert not bad, "upward includes (docs/architecture.md, 'Layering'):\n" + "\n".join(bad)


def test_every_exception_is_still_needed():
    # An exception nobody uses any more is removed, so the list stays the truth.
    for f, t, why in EXCEPTIONS:
        used = False
        for path in sources():
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(f) or TEST_FILE.search(rel):
                continue
            for line in path.read_text(errors="replace").splitlines():
                m = INCLUDE.match(line)
                if m and (resolve(m.group(1), path) or "").startswith(t):
                    used = True
        assert used, f"exception ({f} -> {t}: {why}) is no longer used; remove it"


def test_leaf_headers_include_only_the_standard_library():
    for h in LEAF_HEADERS:
        for line in (ROOT / h).read_text().splitlines():
            assert not INCLUDE.match(line), f"{h} is a leaf header any layer may include; it must not include {line}"


def test_the_checker_catches_an_upward_include(tmp_path, monkeypatch):
    # The rule itself, on a planted file: graph/ including runtime/ must fail.
    (tmp_path / "src/graph").mkdir(parents=True)
    (tmp_path / "src/runtime").mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    (tmp_path / "src/runtime/x.h").write_text("#pragma once\n")
    (tmp_path / "src/graph/g.cc").write_text('#include "runtime/x.h"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    bad = violations()
    assert len(bad) == 1 and "src/graph/g.cc:1" in bad[0] and "layer 'runtime'" in bad[0], bad


def test_no_source_folder_is_crowded():
    crowded = []
    for top in ("src", "tools", "include", "python"):
        for d in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in d.parts:
                continue
            n = sum(1 for p in d.iterdir() if p.is_file())
            if n > MAX_FILES:
                crowded.append(f"{d.relative_to(ROOT)}: {n} files")
    assert not crowded, f"folders over {MAX_FILES} files (split them by family):\n" + "\n".join(crowded)


def test_architecture_doc_names_every_source_folder():
    doc = (ROOT / "docs/architecture.md").read_text()
    missing = []
    for d in sorted(p for p in (ROOT / "src").rglob("*") if p.is_dir()):
        rel = d.relative_to(ROOT).as_posix()
        if "__pycache__" in rel:
            continue
        if f"{rel}/" not in doc and f"`{rel}`" not in doc:
            missing.append(rel)
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)
