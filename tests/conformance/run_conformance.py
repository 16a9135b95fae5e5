#!/usr/bin/env python3
"""ONNX node conformance: every node test of the installed onnx package, compiled and run
by OpenCANN, compared with the outputs the package computed (rtol 1e-3 / atol 1e-5 for
floating point, exact for integers and bools).

  run_conformance.py --build-dir build --check        # what `make test` runs
  run_conformance.py --build-dir build --via tools --check   # ... and this: atc + msame
  run_conformance.py --build-dir build --write-doc docs/conformance.md
  run_conformance.py --build-dir build -k 'test_conv'  # a subset, verbose per case

Each case goes through parse -> passes -> .om bytes -> .om load -> run, in the
oc_conformance_driver process (the work of `atc` + `msame` without two spawns per case).
`--via tools` runs the real atc and msame binaries instead, as a user would (ToolsWorker);
what that path cannot run beyond exclusions.txt is listed in tools_exclusions.txt, and
--write-doc runs both and reports them side by side.
Two workers run in parallel (--jobs); a crash or a hang costs the case, not the run.

--check fails on any failure that exclusions.txt does not list, on a listed test that now
passes (so the list stays honest; tests of a random generator, which can match their expected
draws by chance, and tests of outputs the spec leaves undefined excepted), and on a list entry
that matches no test.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import generate_cases  # noqa: E402
from op_notes import PARSER_OPS, unsupported_reason  # noqa: E402

RTOL = 1e-3
ATOL = 1e-5
EXCLUSIONS = os.path.join(HERE, "exclusions.txt")
# What the command-line path (--via tools: atc + msame) fails beyond EXCLUSIONS.
TOOLS_EXCLUSIONS = os.path.join(HERE, "tools_exclusions.txt")
DOC_COMMAND = "python3 tests/conformance/run_conformance.py --build-dir build --write-doc docs/conformance.md"

# Failure classes, in the order the report lists them.
CLASSES = {
    "passed": "passed",
    "unsupported_op": "unsupported op (the parser lists it)",
    "unsupported_type": "non-tensor input/output (sequence, optional, map)",
    "unsupported_dtype": "unsupported element type",
    "unsupported_feature": "unsupported model feature (subgraphs, string constants, ...)",
    "parse_error": "parse error",
    "compile_error": "compile error (shape inference, passes, kernel creation)",
    "input_error": "input mismatch (the compiled model wants another dtype/shape)",
    "runtime_error": "runtime error",
    "crash": "crash (signal)",
    "timeout": "timeout",
    "wrong_result": "wrong result",
    "harness_error": "harness error (the runner could not feed or read the case)",
}


@dataclass
class Result:
    name: str
    cls: str
    detail: str = ""
    ms: float = 0.0
    max_abs: float | None = None
    frozen: list = field(default_factory=list)  # inputs compiled in as constants


# ---------------------------------------------------------------------------------
# Comparison


def load_tensor(path):
    import onnx
    from onnx import numpy_helper

    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(actual, expected, what: str) -> tuple[bool, str, float | None]:
    import numpy as np

    if actual.dtype != expected.dtype:
        return False, f"{what}: dtype {actual.dtype} vs expected {expected.dtype}", None
    if actual.shape != expected.shape:
        return False, f"{what}: shape {list(actual.shape)} vs expected {list(expected.shape)}", None
    if actual.size == 0:
        return True, "", 0.0
    if expected.dtype.kind in "iub" or expected.dtype == np.dtype(object):
        bad = actual != expected
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return (False, f"{what}: {int(bad.sum())} of {expected.size} elements differ "
                           f"(first at {list(idx)}: {actual[idx]} vs {expected[idx]})", None)
        return True, "", 0.0
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        finite = np.isfinite(a) & np.isfinite(e)
        err = float(np.max(np.abs(a[finite] - e[finite]))) if finite.any() else 0.0
    if ok.all():
        return True, "", err
    idx = tuple(int(i) for i in np.argwhere(~ok)[0])
    return (False, f"{what}: {int((~ok).sum())} of {expected.size} elements off, max abs error {err:.3g} "
                   f"(first at {list(idx)}: {a[idx]:.6g} vs {e[idx]:.6g})", err)


def output_kinds(case_dir: str) -> list[str]:
    """'tensor', 'sequence' or 'optional' per model output (test data of the latter two are
    SequenceProto / OptionalProto files)."""
    import onnx

    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    kinds = []
    for o in model.graph.output:
        which = o.type.WhichOneof("value")
        kinds.append({"sequence_type": "sequence", "optional_type": "optional"}.get(which, "tensor"))
    return kinds


def load_value(path, kind):
    """A tensor as an array; a sequence as a list of arrays; an optional as None or its element."""
    import onnx
    from onnx import numpy_helper

    if kind == "tensor":
        return load_tensor(path)
    with open(path, "rb") as f:
        data = f.read()
    if kind == "sequence":
        s = onnx.SequenceProto()
        s.ParseFromString(data)
        return [numpy_helper.to_array(t) for t in s.tensor_values]
    o = onnx.OptionalProto()
    o.ParseFromString(data)
    if o.HasField("tensor_value"):
        return numpy_helper.to_array(o.tensor_value)
    if o.HasField("sequence_value"):
        return [numpy_helper.to_array(t) for t in o.sequence_value.tensor_values]
    return None


def compare_value(actual, expected, what: str) -> tuple[bool, str, float | None]:
    if expected is None or actual is None:
        ok = expected is None and actual is None
        return ok, "" if ok else f"{what}: optional presence differs (got {actual is not None})", None
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)):
            return False, f"{what}: sequence vs tensor", None
        if len(actual) != len(expected):
            return False, f"{what}: sequence of {len(actual)} vs expected {len(expected)}", None
        worst = 0.0
        for i, (a, e) in enumerate(zip(actual, expected)):
            ok, msg, err = compare(a, e, f"{what}[{i}]")
            if not ok:
                return ok, msg, err
            worst = max(worst, err or 0.0)
        return True, "", worst
    return compare(actual, expected, what)


def check_outputs(case_dir: str, out_dir: str) -> tuple[bool, str, float | None]:
    worst = 0.0
    sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
    kinds = None
    for ds in sets:
        j = 0
        while os.path.exists(os.path.join(case_dir, ds, f"output_{j}.pb")):
            got = os.path.join(out_dir, ds, f"output_{j}.pb")
            if not os.path.exists(got):
                return False, f"{ds}: output {j} missing (the model has fewer outputs)", None
            if kinds is None:
                kinds = output_kinds(case_dir)
            kind = kinds[j] if j < len(kinds) else "tensor"
            ok, msg, err = compare_value(load_value(got, kind),
                                         load_value(os.path.join(case_dir, ds, f"output_{j}.pb"), kind),
                                         f"{ds} output {j}")
            if not ok:
                return False, msg, err
            worst = max(worst, err or 0.0)
            j += 1
    return True, "", worst


# ---------------------------------------------------------------------------------
# Classification of a driver (or atc/msame) failure


def classify(stage: str, code: str, message: str) -> str:
    if "subgraphs (If/Loop/Scan)" in message:
        return "unsupported_feature"
    if stage == "parse":
        if "unsupported operator" in message:
            return "unsupported_op"
        if "only tensors are supported" in message:
            return "unsupported_type"
        if "element type" in message and "not supported" in message:
            return "unsupported_dtype"
        if code == "kNotSupported":
            return "unsupported_feature"
        return "parse_error"
    if stage == "input":
        return "input_error"
    if stage in ("run", "exception"):
        return "runtime_error"
    if re.search(r"(data type|dtype) \S+ is not supported|only \S+ is implemented|element type \S+ \(supported",
                 message):
        return "unsupported_dtype"
    if code == "kNotSupported" or (stage == "kernel" and "is not supported" in message):
        return "unsupported_feature"
    return "compile_error"


def short(message: str, limit: int = 300) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


# ---------------------------------------------------------------------------------
# In-process backend: one oc_conformance_driver per worker


class DriverWorker:
    def __init__(self, driver: str, out_root: str, timeout: float, threads: int):
        self.driver, self.out_root, self.timeout = driver, out_root, timeout
        self.env = dict(os.environ, OPENCANN_NUM_THREADS=str(threads))
        self.proc = None
        self.lines: queue.Queue = queue.Queue()
        self.stderr_path = None

    def _start(self):
        fd, self.stderr_path = tempfile.mkstemp(prefix="oc_conf_stderr_", dir=self.out_root)
        self.stderr_file = os.fdopen(fd, "w+b")
        self.proc = subprocess.Popen([self.driver, self.out_root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr_file, env=self.env, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()

    @staticmethod
    def _read(proc, lines):
        for line in proc.stdout:
            if line.startswith("@@RESULT "):
                lines.put(line[len("@@RESULT "):])
        lines.put(None)  # EOF: the driver died

    def _stderr_tail(self) -> str:
        try:
            self.stderr_file.flush()
            self.stderr_file.seek(0)
            return short(self.stderr_file.read().decode(errors="replace")[-600:], 240)
        except OSError:
            return ""

    def _stop(self, kill: bool):
        if self.proc is None:
            return
        if kill and self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()
        self.stderr_file.close()
        os.unlink(self.stderr_path)
        self.proc = None

    def close(self):
        self._stop(kill=False)

    def run(self, case_dir: str) -> Result:
        name = os.path.basename(case_dir)
        if self.proc is None:
            self._start()
        start = time.monotonic()
        try:
            self.proc.stdin.write(case_dir + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self._stop(kill=True)
            return Result(name, "timeout", f"no result after {self.timeout:.0f} s", self.timeout * 1000)
        if line is None:
            rc = self.proc.wait()
            tail = self._stderr_tail()
            self._stop(kill=False)
            sig = -rc if rc < 0 else None
            what = f"killed by {signal.Signals(sig).name}" if sig else f"driver exited with status {rc}"
            return Result(name, "crash", what + (f": {tail}" if tail else ""), (time.monotonic() - start) * 1000)
        r = json.loads(line)
        frozen = r.get("frozen", [])
        if "stage" in r:
            return Result(name, classify(r["stage"], r["code"], r["message"]),
                          f"[{r['stage']}] {short(r['message'])}", r["ms"], frozen=frozen)
        ok, msg, err = check_outputs(case_dir, os.path.join(self.out_root, name))
        shutil.rmtree(os.path.join(self.out_root, name), ignore_errors=True)
        return Result(name, "passed" if ok else "wrong_result", msg, r["ms"], err, frozen)


# ---------------------------------------------------------------------------------
# Tools backend: the real atc and msame binaries, as a user runs them

ATC_CLASSES = {"E11003": "unsupported_op", "E11004": "unsupported_feature", "E11002": "parse_error",
               "E10001": "parse_error", "E12001": "compile_error", "E12002": "compile_error"}

# ONNX element types msame reads and writes as .npy: numpy's own, and those of
# ml_dtypes that AscendCL has a code for (ACL_BF16, ACL_FLOAT8_*, ACL_INT4,
# ACL_FLOAT4_E2M1). The others (float8 FNUZ, uint4, int2, uint2: no AscendCL
# code) go as .bin, their packed bytes as the TensorProto holds them.
NO_ACL_CODE = {18, 20, 21, 25, 26}  # FLOAT8E4M3FNUZ, FLOAT8E5M2FNUZ, UINT4, UINT2, INT2
MSAME_OUTPUT = re.compile(r"^\[INFO\] output (\d+) \('.*', \(([-\d,]*)\)\) written to (.*)$", re.M)


def write_input(arr, tensor_type: int, path_stem: str) -> str:
    """Writes one model input for msame: .npy, or .bin for a type .npy cannot name for it."""
    import numpy as np
    from onnx import numpy_helper

    if tensor_type in NO_ACL_CODE:
        path = path_stem + ".bin"
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(arr).raw_data)
        return path
    path = path_stem + ".npy"
    np.save(path, np.asarray(arr, order="C"))  # not ascontiguousarray: it makes a 0-d array 1-d
    return path


def read_output(path: str, elem_type: int, shape):
    """An msame output file as an array: .npy (ml_dtypes types load by name), or a .bin
    of `elem_type` at `shape` (msame writes .bin where .npy cannot hold the type)."""
    import ml_dtypes  # noqa: F401  (registers bfloat16, float8_*, int4, ... with numpy for np.load)
    import numpy as np
    import onnx
    from onnx import numpy_helper

    if path.endswith(".npy"):
        return np.load(path)
    t = onnx.TensorProto()
    t.data_type = elem_type
    t.dims.extend(shape)
    with open(path, "rb") as f:
        t.raw_data = f.read()
    return numpy_helper.to_array(t)


class ToolsWorker:
    """Each case compiled with atc (--input_shape from the first data set where the model
    leaves dims open) and run with msame, one process per data set, inputs as .npy (or
    .bin), outputs read back from msame's files. Shape-setting inputs stay graph inputs: a
    model whose shapes then depend on data is a dynamic .om, and msame sizes its outputs
    from the run (aclmdlExecute allocates them)."""

    def __init__(self, build_dir: str, out_root: str, timeout: float, threads: int):
        self.atc, self.msame = os.path.join(build_dir, "atc"), os.path.join(build_dir, "msame")
        self.out_root, self.timeout = out_root, timeout
        self.env = dict(os.environ, OPENCANN_NUM_THREADS=str(threads))

    def close(self):
        pass

    def _call(self, cmd):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, env=self.env)

    def run(self, case_dir: str) -> Result:
        import numpy as np
        import onnx

        name = os.path.basename(case_dir)
        work = os.path.join(self.out_root, name)
        os.makedirs(work, exist_ok=True)
        start = time.monotonic()
        try:
            return self._run(case_dir, name, work, np, onnx, start)
        except subprocess.TimeoutExpired:
            return Result(name, "timeout", f"no result after {self.timeout:.0f} s", self.timeout * 1000)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    @staticmethod
    def _input_tensor(pb: str, kind: str, name: str, j: int):
        """(array, ONNX element type) for input file `pb` of a `kind` graph input, or a
        Result when msame cannot be given it (a sequence, an empty optional)."""
        import onnx
        from onnx import numpy_helper

        with open(pb, "rb") as f:
            data = f.read()
        t = onnx.TensorProto()
        if kind == "optional":
            o = onnx.OptionalProto()
            o.ParseFromString(data)
            if not o.HasField("tensor_value"):
                what = "an optional holding a sequence" if o.HasField("sequence_value") else "an empty optional"
                return Result(name, "unsupported_type", f"[runner] input {j} is {what}: an msame input file holds one "
                                                        "array (AscendCL model inputs are tensors)")
            t = o.tensor_value
        elif kind != "tensor":
            return Result(name, "unsupported_type", f"[runner] input {j} is a {kind}: an msame input file holds one "
                                                    "array (AscendCL model inputs are tensors)")
        else:
            t.ParseFromString(data)
        return numpy_helper.to_array(t), t.data_type

    def _run(self, case_dir, name, work, np, onnx, start):
        from onnx import numpy_helper

        model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
        elapsed = lambda: (time.monotonic() - start) * 1000  # noqa: E731
        sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
        inits = {i.name for i in model.graph.initializer}
        graph_inputs = [v for v in model.graph.input if v.name not in inits]
        in_kinds = [generate_cases._value_kind(v.type) for v in graph_inputs]
        out_kinds = [generate_cases._value_kind(v.type) for v in model.graph.output]
        inputs0 = []
        for j, kind in enumerate(in_kinds):
            pb = os.path.join(case_dir, sets[0], f"input_{j}.pb") if sets else ""
            if os.path.exists(pb):
                # An optional input goes as the tensor it holds (AscendCL sees its element type and shape).
                inputs0.append(self._input_tensor(pb, kind, name, j))
                if isinstance(inputs0[-1], Result):
                    return inputs0[-1]
        cmd = [self.atc, f"--model={os.path.join(case_dir, 'model.onnx')}", "--framework=5",
               f"--output={os.path.join(work, 'model')}"]
        dyn = []
        for v, (arr, _) in zip(graph_inputs, inputs0):
            tt = v.type.tensor_type if v.type.HasField("tensor_type") else v.type.optional_type.elem_type.tensor_type
            if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim):
                dyn.append(f"{v.name}:{','.join(str(d) for d in arr.shape)}")
        if dyn:
            cmd.append("--input_shape=" + ";".join(dyn))
        p = self._call(cmd)
        if p.returncode < 0:
            return Result(name, "crash", f"atc killed by {signal.Signals(-p.returncode).name}")
        if p.returncode != 0:
            text = p.stdout + p.stderr
            m = re.search(r"\b(E\d{5})\b", text)
            code = m.group(1) if m else ""
            cls = ATC_CLASSES.get(code, "compile_error")
            if cls == "unsupported_feature" and "element type" in text:
                cls = "unsupported_dtype"
            return Result(name, cls, f"[atc {code}] {short(text)}", elapsed())
        out_types = [(o.type.tensor_type if o.type.HasField("tensor_type")
                      else o.type.optional_type.elem_type.tensor_type).elem_type for o in model.graph.output]
        for ds in sets:
            paths = []
            j = 0
            while os.path.exists(os.path.join(case_dir, ds, f"input_{j}.pb")):
                got = self._input_tensor(os.path.join(case_dir, ds, f"input_{j}.pb"), in_kinds[j], name, j)
                if isinstance(got, Result):
                    return got
                paths.append(write_input(got[0], got[1], os.path.join(work, f"{ds}_input_{j}")))
                j += 1
            out = os.path.join(work, ds)
            cmd = [self.msame, "--model", os.path.join(work, "model.om"), "--output", out, "--outfmt", "NPY"]
            if paths:
                cmd += ["--input", ",".join(paths)]
            p = self._call(cmd)
            if p.returncode < 0:
                return Result(name, "crash", f"msame killed by {signal.Signals(-p.returncode).name}")
            if p.returncode != 0:
                # From the first error on, the case's folder left out: the same words every run.
                text = (p.stdout + p.stderr).replace(work + os.sep, "")
                text = text[text.find("[ERROR]"):] if "[ERROR]" in text else text
                cls = "input_error" if "mismatch" in text else "runtime_error"
                return Result(name, cls, f"[msame] {short(text)}", elapsed())
            # msame's outputs, as the shapes it printed say, in the driver's layout for the shared checker.
            for m in MSAME_OUTPUT.finditer(p.stdout):
                j = int(m.group(1))
                shape = [int(d) for d in m.group(2).split(",") if d]
                arr = read_output(m.group(3), out_types[j] if j < len(out_types) else 1, shape)
                proto = numpy_helper.from_array(arr)
                if j < len(out_kinds) and out_kinds[j] == "optional":  # the tensor msame wrote, as a present optional
                    proto = numpy_helper.from_optional(arr, elem_type=onnx.OptionalProto.TENSOR)
                with open(os.path.join(out, f"output_{j}.pb"), "wb") as f:
                    f.write(proto.SerializeToString())
        ok, msg, err = check_outputs(case_dir, work)
        return Result(name, "passed" if ok else "wrong_result", msg, elapsed(), err)


# ---------------------------------------------------------------------------------
# Exclusion list


@dataclass
class Exclusion:
    pattern: str      # "op:Name" (every case of that op), "expanded:Name" or a test-name glob
    reason: str
    line: int
    source: str = EXCLUSIONS  # the list file
    matched: list = field(default_factory=list)

    # Reasons of entries whose tests may pass as well as fail, so that a pass is not a
    # reason to drop them: random draws that can equal the expected ones by chance, and
    # outputs the ONNX spec leaves undefined, whose expected values come from the
    # reference implementation and so change with the installed ml_dtypes / numpy.
    MAY_PASS = ("random generator:", "undefined by the spec:")

    @property
    def by_chance(self) -> bool:
        """A pass of a listed test is not an error (MAY_PASS)."""
        return self.reason.startswith(self.MAY_PASS)

    def matches(self, case: dict) -> bool:
        expanded = "_expanded" in case["name"]
        if self.pattern.startswith("op:"):
            return not expanded and op_label(case) == self.pattern[3:]
        if self.pattern.startswith("expanded:"):
            return expanded and op_label(case) == self.pattern[9:]
        return fnmatch.fnmatchcase(case["name"], self.pattern)


def verdicts(cases, results, by_case) -> tuple[list[str], list[str], list[str]]:
    """(failing tests no entry lists, listed tests that now pass, listed random-generator tests
    that passed by chance). --check fails on the first two."""
    unexpected = [c["name"] for c in cases if results[c["name"]].cls != "passed" and c["name"] not in by_case]
    passing = [c["name"] for c in cases if results[c["name"]].cls == "passed" and c["name"] in by_case]
    return (unexpected, [n for n in passing if not by_case[n].by_chance],
            [n for n in passing if by_case[n].by_chance])


def op_label(case: dict) -> str:
    return f"{case['domain']}::{case['op']}" if case["domain"] else case["op"]


def read_exclusions(path: str) -> list[Exclusion]:
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            if len(parts) < 2 or not parts[1].strip():
                raise SystemExit(f"{path}:{n}: '{parts[0]}' has no reason; every excluded test needs one")
            entries.append(Exclusion(parts[0], parts[1].strip(), n, path))
    return entries


def match_exclusions(cases: list[dict], exclusions: list[Exclusion]) -> dict[str, Exclusion]:
    by_case = {}
    for case in cases:
        for ex in exclusions:
            if ex.matches(case):
                ex.matched.append(case["name"])
                by_case.setdefault(case["name"], ex)  # the first entry that matches wins
    return by_case


def draft_reason(case: dict, r: Result) -> str:
    """A specific one-line reason from a failure (a starting point for the list)."""
    d = r.detail
    m = re.search(r"element type (\w+) is not supported", d)
    if m:
        return f"unsupported dtype: {m.group(1)} tensors are not in the IR's type list"
    m = re.search(r"(\w+) node '[^']*': data type (\w+) is not supported by \w+ on CPU", d)
    if m:
        return f"unsupported dtype: the {m.group(1)} CPU kernel has no {m.group(2)} path"
    m = re.search(r"(\w+) node '[^']*': only (\w+) is implemented, got (\w+)", d)
    if m:
        return f"unsupported dtype: the {m.group(1)} CPU kernel has no {m.group(3)} path ({m.group(2)} only)"
    m = re.search(r"(\w+) node '[^']*': element type (\w+) \(supported: ([^)]*)\)", d)
    if m:
        return f"unsupported dtype: the {m.group(1)} CPU kernel has no {m.group(2)} path ({m.group(3)} only)"
    m = re.search(r"(\S+) node '[^']*': subgraphs \(If/Loop/Scan\) not supported yet", d)
    if m:
        return f"control flow: {m.group(1)} has a subgraph attribute; subgraphs are not supported yet"
    m = re.search(r"has type (sequence|optional|map)", d)
    if m:
        return f"{m.group(1)} type: the runtime has tensors only"
    m = re.search(r"unsupported operator: ([\w.]+)::(\w+)\(opset (\d+)\)( \[implemented for opset [^\]]*\])?", d)
    if m:
        if m.group(4):
            return f"unsupported op: {m.group(2)} opset {m.group(3)} is not implemented{m.group(4)}"
        return f"unsupported op: {m.group(2)} is not implemented"
    text = re.sub(r"model '[^']*': ", "", d)
    return f"{CLASSES[r.cls].split(' (')[0]}: {text}"


def draft_exclusions(cases, results, by_case) -> list[str]:
    """Entries for the failing tests no entry covers: `op:` / `expanded:` where every such
    test of an op fails as an unsupported op, single test names otherwise."""
    lines = []
    groups = defaultdict(list)
    for c in cases:
        groups[(op_label(c), "_expanded" in c["name"])].append(c)
    done = set()
    for (label, expanded), group in sorted(groups.items()):
        todo = [c for c in group if c["name"] not in by_case]
        if not todo:
            continue
        if all(results[c["name"]].cls == "unsupported_op" for c in todo) and len(todo) == len(group):
            domain = group[0]["domain"]
            if expanded:
                reason = "unsupported op: the function body uses ops that are not implemented"
            elif domain == "ai.onnx.preview.training":
                reason = "training op (ai.onnx.preview.training): not planned for an inference runtime"
            elif domain == "ai.onnx.ml":
                reason = "ai.onnx.ml op: classic-ML domain not implemented yet"
            elif domain:
                reason = f"{domain} op: not implemented yet"
            else:
                reason = "unsupported op: " + unsupported_reason(group[0]["op"])
            lines.append(f"{'expanded' if expanded else 'op'}:{label}  {reason}\n")
            done.update(c["name"] for c in todo)
    for c in cases:
        r = results[c["name"]]
        if r.cls != "passed" and c["name"] not in by_case and c["name"] not in done:
            lines.append(f"{c['name']}  {draft_reason(c, r)}\n")
    return lines


# ---------------------------------------------------------------------------------
# Registry and the ops the onnx package defines


def registry_ops(driver: str) -> dict[tuple[str, str], list[tuple[int, int]]]:
    out = subprocess.run([driver, "--list-ops"], capture_output=True, text=True, check=True).stdout
    ops = defaultdict(list)
    for line in out.splitlines():
        domain, op, lo, hi = line.split("\t")
        ops[(domain, op)].append((int(lo), int(hi)))
    return ops


def default_domain_ops() -> dict[str, tuple[int, bool]]:
    """Default-domain op -> (newest since_version, deprecated) in the installed onnx."""
    import onnx.defs

    newest: dict[str, tuple[int, bool]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain not in ("", "ai.onnx"):
            continue
        if s.name not in newest or s.since_version > newest[s.name][0]:
            newest[s.name] = (s.since_version, bool(s.deprecated))
    return newest


def supports(reg, domain: str, op: str, opset: int) -> bool:
    return any(lo <= opset and (hi < 0 or opset <= hi) for lo, hi in reg.get((domain, op), []))


# ---------------------------------------------------------------------------------
# Report


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def write_doc(path, cases, results, by_case, exclusions, reg, onnx_version, seconds, jobs, tools):
    total = len(cases)
    passed = sum(1 for c in cases if results[c["name"]].cls == "passed")
    excluded = sum(1 for c in cases if c["name"] in by_case)
    non_excluded = total - excluded
    passed_non_excluded = sum(1 for c in cases if c["name"] not in by_case and results[c["name"]].cls == "passed")
    per_op = defaultdict(Counter)
    for c in cases:
        key = (c["domain"], c["op"])
        per_op[key]["tests"] += 1
        r = results[c["name"]]
        per_op[key]["passed" if r.cls == "passed" else "excluded" if c["name"] in by_case else "failed"] += 1
        per_op[key]["frozen"] += bool(r.cls == "passed" and r.frozen)
    classes = Counter(results[c["name"]].cls for c in cases)

    L = []
    L.append("# ONNX node conformance\n")
    L.append(f"Generated by `{DOC_COMMAND}`; do not edit by hand.\n")
    L.append(f"Every node test of the installed onnx package ({onnx_version}, generated from "
             "`onnx.backend.test.case.node`) is compiled (parse, passes, .om write and verifying load) "
             f"and run on the CPU, then compared with the package's expected outputs: rtol {RTOL:g} / "
             f"atol {ATOL:g} for floating point, exact for integers and bools. "
             f"This run took {seconds:.0f} s with {jobs} workers. `make test` runs the same suite "
             "(ctest `onnx_node_conformance`) and fails on any failure that "
             "`tests/conformance/exclusions.txt` does not list, and on any listed test that passes (except tests of a random generator, which can match their expected draws by chance, and tests of outputs the spec leaves undefined).\n")
    t_results, t_by_case, t_exclusions, t_seconds = tools
    t_passed = sum(1 for c in cases if t_results[c["name"]].cls == "passed")
    t_passed_non_excluded = sum(1 for c in cases if c["name"] not in by_case and t_results[c["name"]].cls == "passed")
    t_non_excluded = total - sum(1 for c in cases if c["name"] in t_by_case)
    t_passed_both = sum(1 for c in cases if c["name"] not in t_by_case and t_results[c["name"]].cls == "passed")
    L.append("## Pass rate\n")
    L.append("In process (`oc_conformance_driver`: parse, passes, .om bytes, load, run, in one process) and "
             "through the command-line tools as a user runs them (`atc`, then `msame` on .npy / .bin files: "
             "[below](#through-the-command-line-tools-atc--msame)).\n")
    L.append("| | tests | passed in process | rate | passed with atc + msame | rate |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    L.append(f"| all node tests | {total} | {passed} | {pct(passed, total)} | {t_passed} | {pct(t_passed, total)} |")
    L.append(f"| not excluded (`exclusions.txt`) | {non_excluded} | {passed_non_excluded} | "
             f"{pct(passed_non_excluded, non_excluded)} | {t_passed_non_excluded} | "
             f"{pct(t_passed_non_excluded, non_excluded)} |")
    L.append(f"| not excluded by either list (`exclusions.txt`, `tools_exclusions.txt`) | {t_non_excluded} | | | "
             f"{t_passed_both} | {pct(t_passed_both, t_non_excluded)} |")
    ops_all = len(per_op)
    ops_full = sum(1 for v in per_op.values() if v["passed"] == v["tests"])
    ops_some = sum(1 for v in per_op.values() if 0 < v["passed"] < v["tests"])
    L.append(f"\nOps with tests: {ops_all}; every test passes for {ops_full}, some for {ops_some}.\n")
    frozen = sum(1 for c in cases if results[c["name"]].cls == "passed" and results[c["name"]].frozen)
    L.append(f"Static shapes are decided at compile time, so inputs that set a shape (Reshape's shape, "
             f"Tile's repeats, Resize's scales, reduction axes, ...) must be constants, as they are in "
             f"exported models. The node tests feed them as graph inputs: when a compile fails for that "
             f"reason, the case is compiled again with those inputs turned into initializers holding "
             f"the test data. {frozen} of the passing tests needed that (column `const in.`).\n")
    L.append("### Outcomes\n")
    L.append("| outcome | tests |")
    L.append("| --- | ---: |")
    for cls, label in CLASSES.items():
        if classes[cls]:
            L.append(f"| {label} | {classes[cls]} |")
    L.append("")
    L.append("## Per op\n")
    L.append("Expanded tests (`*_expanded*`: the op's function body as a graph of simpler ops) count "
             "for the op they expand.\n")
    L.append("| op | tests | passed | const in. | excluded | failed |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for (domain, op), v in sorted(per_op.items(), key=lambda kv: (kv[0][0], kv[0][1].lower())):
        name = f"{domain}::{op}" if domain else op
        L.append(f"| {name} | {v['tests']} | {v['passed']} | {v['frozen']} | {v['excluded']} | {v['failed']} |")
    L.append("")
    L.append("## Through the command-line tools (atc + msame)\n")
    L.append(f"`run_conformance.py --via tools` (ctest `onnx_node_conformance_tools`) runs every test as a user "
             f"would: `atc --model=model.onnx --framework=5` (with `--input_shape` from the first data set "
             f"where the model leaves dims open), then one `msame --model model.om --input in0.npy,... "
             f"--output DIR --outfmt NPY` per data set, and reads msame's output files back. Inputs go as "
             f".npy, bfloat16 / float8 / int4 / float4 ones as numpy writes them with ml_dtypes; types "
             f"AscendCL has no code for (float8 E4M3FNUZ / E5M2FNUZ, uint4, int2, uint2) as .bin, their "
             f"packed bytes, and msame writes those outputs as .bin; an optional input goes as the tensor it holds. Nothing is frozen into constants: a "
             f"shape-setting input stays an input, atc then writes a dynamic .om, msame takes the shapes "
             f"from the .npy files and sizes the outputs from the run (aclmdlExecute allocates them). "
             f"This run took {t_seconds:.0f} s with {jobs} workers. "
             f"It passes every test the in-process driver passes except those `tests/conformance/"
             f"tools_exclusions.txt` lists, and `make test` fails on any other failure and on a listed "
             f"test that passes.\n")
    L.append("| entry | tests | reason | outcome |")
    L.append("| --- | ---: | --- | --- |")
    t_only = [ex for ex in t_exclusions if ex.source != EXCLUSIONS]
    for ex in t_only:
        outcomes = Counter(t_results[n].cls for n in ex.matched if t_by_case.get(n) is ex)
        seen = ", ".join(f"{CLASSES[k].split(' (')[0]} {v}" for k, v in outcomes.most_common())
        L.append(f"| `{ex.pattern}` | {sum(outcomes.values())} | {ex.reason.replace('|', '/')} | {seen} |")
    L.append("")
    L.append("The tests these entries cover, each with what the tools reported:\n")
    for ex in t_only:
        for n in sorted(n for n in ex.matched if t_by_case.get(n) is ex):
            L.append(f"- `{n}` (`{ex.pattern}`): {t_results[n].detail.replace('|', '/')}")
    L.append("")
    L.append("## Exclusion list\n")
    L.append("From `tests/conformance/exclusions.txt`: `op:Name` covers the plain tests of an op (the "
             "model is that one node), `expanded:Name` its `*_expanded*` tests, other entries are "
             "test-name patterns. Each entry with the tests it covers and the outcome seen.\n")
    L.append("| entry | tests | reason | outcome |")
    L.append("| --- | ---: | --- | --- |")
    for ex in exclusions:
        outcomes = Counter(results[n].cls for n in ex.matched if by_case.get(n) is ex)
        seen = ", ".join(f"{CLASSES[k].split(' (')[0]} {v}" for k, v in outcomes.most_common())
        L.append(f"| `{ex.pattern}` | {sum(outcomes.values())} | {ex.reason.replace('|', '/')} | {seen} |")
    L.append("")
    newest = default_domain_ops()
    missing = [(op, v) for op, v in newest.items() if not reg.get(("", op)) and op not in PARSER_OPS]
    older = [(op, v) for op, v in newest.items()
             if reg.get(("", op)) and not supports(reg, "", op, v[0])]
    L.append("## Default-domain ops not supported\n")
    top = max(v[0] for v in newest.values())
    L.append(f"Ops of the default (ai.onnx) domain, up to opset {top} (the newest the onnx package "
             f"knows), that the op registry does not implement: {len(missing)} of {len(newest)}.\n")
    L.append("| op | newest version | reason |")
    L.append("| --- | ---: | --- |")
    for op, (ver, deprecated) in sorted(missing, key=lambda kv: kv[0].lower()):
        L.append(f"| {op} | {ver} | {unsupported_reason(op, deprecated)} |")
    L.append("")
    if older:
        L.append("### Implemented, but not at the newest version\n")
        L.append("| op | newest version | implemented versions | note |")
        L.append("| --- | ---: | --- | --- |")
        for op, (ver, deprecated) in sorted(older, key=lambda kv: kv[0].lower()):
            ranges = ", ".join(f"{lo}-{hi}" if hi >= 0 else f"{lo}+" for lo, hi in sorted(reg[("", op)]))
            L.append(f"| {op} | {ver} | {ranges} | {'deprecated in opset ' + str(ver) if deprecated else ''} |")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


# ---------------------------------------------------------------------------------


def run_all(case_dirs, make_worker, jobs, progress):
    todo = queue.Queue()
    # Slow cases first keeps the two workers busy to the end.
    for d in case_dirs:
        todo.put(d)
    results = {}
    lock = threading.Lock()

    def work():
        w = make_worker()
        try:
            while True:
                try:
                    d = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    r = w.run(d)
                except Exception as e:  # noqa: BLE001  (one bad case must not stop the run)
                    r = Result(os.path.basename(d), "harness_error", f"{type(e).__name__}: {short(str(e))}")
                with lock:
                    results[r.name] = r
                    if progress:
                        progress(r, len(results))
        finally:
            w.close()

    threads = [threading.Thread(target=work) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def run_backend(via, cases, cases_dir, build, driver, args, by_case, verbose):
    """Runs `cases` through one backend; returns ({name: Result}, seconds)."""
    out_root = tempfile.mkdtemp(prefix="oc_conformance_")

    def progress(r: Result, n: int):
        if verbose or (r.cls != "passed" and r.name not in by_case):
            tag = "PASS" if r.cls == "passed" else r.cls.upper()
            note = "  (excluded)" if r.name in by_case else ""
            print(f"[{n}/{len(cases)}] {tag:<18} {r.name} {r.ms:.0f} ms{note}" + (f"\n    {r.detail}" if r.detail else ""),
                  flush=True)

    if via == "driver":
        make = lambda: DriverWorker(driver, out_root, args.timeout, args.threads)  # noqa: E731
    else:
        make = lambda: ToolsWorker(build, out_root, args.timeout, args.threads)  # noqa: E731
    t1 = time.monotonic()
    try:
        results = run_all([os.path.join(cases_dir, c["name"]) for c in cases], make, args.jobs, progress)
    finally:
        shutil.rmtree(out_root, ignore_errors=True)
    return results, time.monotonic() - t1


def exclusions_for(via: str) -> list[Exclusion]:
    """exclusions.txt, and for the tools backend tools_exclusions.txt after it."""
    entries = read_exclusions(EXCLUSIONS)
    if via == "tools":
        entries += read_exclusions(TOOLS_EXCLUSIONS)
    return entries


def report(via, cases, results, by_case, exclusions, args, seconds) -> int:
    """Prints the summary and the problems --check fails on; returns 1 if there are any."""
    classes = Counter(r.cls for r in results.values())
    unexpected, now_passing, chance_passing = verdicts(cases, results, by_case)
    excluded_passing = now_passing + chance_passing
    unmatched = [ex for ex in exclusions if not ex.matched] if not args.filter else []
    if args.prune_exclusions and not args.filter:
        drop = {(ex.source, ex.line) for ex in exclusions
                if not ex.by_chance and all(results[n].cls == "passed" for n in ex.matched)}
        for path in sorted({src for src, _ in drop}):
            with open(path) as f:
                kept = [line for n, line in enumerate(f, 1) if (path, n) not in drop]
            with open(path, "w") as f:
                f.writelines(kept)
            print(f"removed {sum(1 for src, _ in drop if src == path)} entries from {path}")
        now_passing = [n for n in now_passing if (by_case[n].source, by_case[n].line) not in drop]
        unmatched = [ex for ex in unmatched if (ex.source, ex.line) not in drop]

    slow = sorted(results.values(), key=lambda r: -r.ms)[:5]
    print(f"\n{via}: run {seconds:.1f} s ({args.jobs} workers); slowest: " +
          ", ".join(f"{r.name} {r.ms:.0f} ms" for r in slow))
    for cls, label in CLASSES.items():
        if classes[cls]:
            print(f"  {label}: {classes[cls]}")
    total = len(cases)
    n_pass = classes["passed"]
    n_ex = sum(1 for c in cases if c["name"] in by_case)
    print(f"pass rate: {n_pass}/{total} ({pct(n_pass, total)}) of all node tests; "
          f"{n_pass - len(excluded_passing)}/{total - n_ex} of the tests not excluded")
    if chance_passing:
        print(f"  excluded tests that may pass (random draws, outputs the spec leaves undefined) and did: "
              f"{', '.join(chance_passing)}")
    lists = " or ".join(os.path.relpath(p, SOURCE_DIR) for p in sorted({EXCLUSIONS} | {ex.source for ex in exclusions}))
    status = 0
    if unexpected:
        print(f"\nFAIL: {len(unexpected)} failing tests are not in {lists}:")
        for n in unexpected:
            print(f"  {n}  [{results[n].cls}] {results[n].detail}")
        status = 1
    if now_passing:
        print(f"\nFAIL: {len(now_passing)} excluded tests now pass; remove them from the list:")
        for n in now_passing:
            ex = by_case[n]
            print(f"  {n}  ({os.path.basename(ex.source)} line {ex.line}: {ex.pattern})")
        status = 1
    if unmatched:
        print("\nFAIL: exclusion entries that match no test:")
        for ex in unmatched:
            print(f"  {os.path.basename(ex.source)} line {ex.line}: {ex.pattern}")
        status = 1
    failed = len(unexpected) + len(now_passing) + len(unmatched)
    expected_failures = sum(1 for c in cases if c["name"] in by_case and results[c["name"]].cls != "passed")
    # passed: tests that pass; failed: problems --check reports; skipped: listed failures.
    print(f"\nconformance ({via}): {n_pass} passed, {failed} failed, {expected_failures} skipped")
    return status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.environ.get("OC_BUILD_DIR", os.path.join(SOURCE_DIR, "build")))
    ap.add_argument("--cases-dir", help="generated cases (default: BUILD/onnx_node_tests)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per worker")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--via", choices=["driver", "tools"], default="driver")
    ap.add_argument("-k", "--filter", help="regex on test names (a subset; implies -v)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--check", action="store_true", help="fail on unexpected results (CI)")
    ap.add_argument("--write-doc", metavar="PATH", help="run both backends and write the report (--via driver)")
    ap.add_argument("--json", metavar="PATH", help="write every result as JSON")
    ap.add_argument("--prune-exclusions", action="store_true",
                    help="delete the entries of the exclusion lists whose every test now passes, or that match "
                         "no test")
    ap.add_argument("--draft-exclusions", metavar="PATH",
                    help="write an exclusion list for every failing test not yet covered (to review by hand)")
    args = ap.parse_args()

    build = os.path.abspath(args.build_dir)
    driver = os.path.join(build, "tests", "conformance", "oc_conformance_driver")
    if args.via == "driver" and not os.path.exists(driver):
        print(f"error: {driver} not built (ninja -C {build} oc_conformance_driver)", file=sys.stderr)
        return 2
    if args.write_doc and (args.via != "driver" or args.filter):
        print("error: --write-doc runs both backends over every test: use it without --via tools and -k",
              file=sys.stderr)
        return 2
    cases_dir = os.path.abspath(args.cases_dir or os.path.join(build, "onnx_node_tests"))
    t0 = time.monotonic()
    manifest = generate_cases.generate(cases_dir)
    t_gen = time.monotonic() - t0
    cases = manifest["cases"]
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c["name"])]
        args.verbose = True
    exclusions = exclusions_for(args.via)
    by_case = match_exclusions(cases, exclusions)
    results, t_run = run_backend(args.via, cases, cases_dir, build, driver, args, by_case, args.verbose)
    print(f"\ngeneration {t_gen:.1f} s")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({c["name"]: {"op": c["op"], "domain": c["domain"], "class": results[c["name"]].cls,
                                   "detail": results[c["name"]].detail, "ms": results[c["name"]].ms,
                                   "frozen": results[c["name"]].frozen,
                                   "excluded": c["name"] in by_case} for c in cases}, f, indent=1)
    if args.draft_exclusions:
        with open(args.draft_exclusions, "w") as f:
            f.write("".join(draft_exclusions(cases, results, by_case)))
        print(f"wrote {args.draft_exclusions}")
    status = report(args.via, cases, results, by_case, exclusions, args, t_run)
    if args.write_doc:
        import onnx

        # The same tests through atc + msame, reported next to the driver's.
        tools_exclusions = exclusions_for("tools")
        tools_by_case = match_exclusions(cases, tools_exclusions)
        tools_results, tools_run = run_backend("tools", cases, cases_dir, build, driver, args, tools_by_case, False)
        status |= report("tools", cases, tools_results, tools_by_case, tools_exclusions, args, tools_run)
        reg = registry_ops(driver) if os.path.exists(driver) else {}
        write_doc(args.write_doc, cases, results, by_case, exclusions, reg, onnx.__version__, t_gen + t_run, args.jobs,
                  tools=(tools_results, tools_by_case, tools_exclusions, tools_run))
        print(f"wrote {args.write_doc}")
    return status if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
