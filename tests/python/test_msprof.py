"""Profiling end to end: msprof on unchanged programs (msame, an AscendCL C
application), msame --profiler true and the aclprof API. Checks the files
against independent measurements: the executor's own node counter
(OPENCANN_PROFILE_NODES) for the number of nodes, the programs' own wall-clock
timing for the durations, Python's json for the timeline, and headless
Chromium for the HTML report."""
import csv
import glob
import json
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import acl_models
import oc_harness

MSPROF = os.path.join(oc_harness.BUILD_DIR, "msprof")
FILES = ("op_summary_{ts}.csv", "op_statistic_{ts}.csv", "api_statistic_{ts}.csv", "msprof_{ts}.json", "report.html")


HW = 224


sanitized_build = oc_harness.sanitized_build


def convnet():
    """Three 3x3 convolutions at 224x224 (about 0.1 s per run on two cores, so
    the node times dominate a run even when the machine is busy and waking the
    stream's thread takes milliseconds), pooling and a classifier."""
    rng = np.random.default_rng(0)
    nodes, inits, x, c = [], [], "x", 3
    for i, co in enumerate([32, 48, 48]):
        inits += [numpy_helper.from_array((rng.standard_normal((co, c, 3, 3)) * 0.1).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(np.zeros(co, np.float32), f"b{i}")]
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1], name=f"conv{i}"))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        x, c = f"r{i}", co
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    inits.append(numpy_helper.from_array(rng.standard_normal((c, 10)).astype(np.float32), "wf"))
    nodes.append(helper.make_node("MatMul", ["flat", "wf"], ["y"], name="fc"))
    g = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, HW, HW])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("msprof_model"))
    m = convnet()
    path = oc_harness.save_model(m, d, "convnet")
    om, _ = oc_harness.atc_compile(path, os.path.join(d, "convnet"))
    return m, om


def run(cmd, env=None, timeout=600):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=full_env)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def prof_dir(parent):
    dirs = glob.glob(os.path.join(str(parent), "PROF_*"))
    assert len(dirs) == 1, f"expected one PROF_* directory in {parent}, found {dirs}"
    ts = os.path.basename(dirs[0])[len("PROF_"):]
    for f in FILES:
        assert os.path.isfile(os.path.join(dirs[0], f.format(ts=ts))), f"missing {f.format(ts=ts)}"
    return dirs[0], ts


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def executor_count(stderr):
    """(runs, nodes) from the executor's own OPENCANN_PROFILE_NODES report."""
    m = re.search(r"\[profile\] model '[^']*': (\d+) runs, [0-9.]+ ms per run in (\d+) nodes", stderr)
    assert m, f"no OPENCANN_PROFILE_NODES report in:\n{stderr}"
    return int(m.group(1)), int(m.group(2))


def check_rows(rows, runs, nodes, onnx_model):
    """One row per executed node per run, runs numbered 1..runs."""
    assert len(rows) == runs * nodes, f"{len(rows)} rows, expected {runs} runs x {nodes} nodes"
    by_run = {}
    for r in rows:
        by_run.setdefault(r["Run"], []).append(r)
    assert sorted(by_run) == sorted(str(i) for i in range(1, runs + 1))
    names = [sorted(x["Op Name"] for x in v) for v in by_run.values()]
    assert all(n == names[0] for n in names), "runs executed different node sets"
    assert len(set(names[0])) == nodes, "a node appears twice in one run"
    onnx_names = {n.name for n in onnx_model.graph.node}
    # Layout reorders the nchwc-layout pass inserts are named after the value
    # they convert ("<value>_to_nchwc__N" / "<value>_from_nchwc__N").
    inserted = {n for n in names[0] if re.search(r"_(to|from)_nchwc__\d+$", n)}
    assert set(names[0]) - inserted <= onnx_names, f"unknown node names {set(names[0]) - inserted - onnx_names}"
    for r in rows:
        assert float(r["Task Duration(us)"]) > 0 and float(r["Task Wait Time(us)"]) >= 0
        assert r["Input Shapes"] and r["Output Shapes"] and r["Input Data Types"] and r["Output Formats"]
    return by_run


def check_flops(rows, onnx_model):
    """FLOPs of the convolutions and the MatMul from the ONNX shapes (2 * MACs)."""
    inits = {i.name: numpy_helper.to_array(i) for i in onnx_model.graph.initializer}
    want = {}
    for n in onnx_model.graph.node:
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            want[n.name] = 2 * HW * HW * w.shape[0] * int(np.prod(w.shape[1:]))
        elif n.op_type == "MatMul":
            w = inits[n.input[1]]
            want[n.name] = 2 * w.shape[0] * w.shape[1]
    for r in rows:
        if r["Op Name"] in want:
            assert int(r["FLOPs"]) == want[r["Op Name"]], r
            dur = float(r["Task Duration(us)"])
            np.testing.assert_allclose(float(r["GFLOP/s"]), int(r["FLOPs"]) / (dur * 1e3), rtol=2e-3, atol=2e-3)


def check_timeline(path, n_rows):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        for key in ("ph", "ts", "dur", "pid", "tid", "name"):
            assert key in e, e
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    nodes = [e for e in complete if e["cat"] not in ("AscendCL", "Memcpy", "Model")]
    assert len(nodes) == n_rows
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in events)
    return complete


def check_statistic(d, ts, rows):
    stat = read_csv(os.path.join(d, f"op_statistic_{ts}.csv"))
    per_type = {}
    for r in rows:
        per_type.setdefault(r["OP Type"], []).append(float(r["Task Duration(us)"]))
    assert {s["OP Type"] for s in stat} == set(per_type)
    for s in stat:
        durs = per_type[s["OP Type"]]
        assert int(s["Count"]) == len(durs)
        np.testing.assert_allclose(float(s["Total Time(us)"]), sum(durs), rtol=1e-4, atol=0.01)
        np.testing.assert_allclose(float(s["Max Time(us)"]), max(durs), atol=0.0011)
        np.testing.assert_allclose(float(s["Min Time(us)"]), min(durs), atol=0.0011)
    np.testing.assert_allclose(sum(float(s["Ratio(%)"]) for s in stat), 100.0, atol=0.1)


def test_msprof_on_msame(model, tmp_path):
    m, om = model
    loop = 9
    # One kernel thread: the timing comparison below is about the profiler, not
    # about how fast a second core wakes up on a busy machine.
    proc = run([MSPROF, f"--output={tmp_path}", f"--application={oc_harness.MSAME} --model {om} --loop {loop}"],
               env={"OPENCANN_PROFILE_NODES": "1", "OPENCANN_NUM_THREADS": "1"})
    d, ts = prof_dir(tmp_path)
    runs, nodes = executor_count(proc.stderr)
    assert runs == loop
    rows = read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    by_run = check_rows(rows, runs, nodes, m)
    check_flops(rows, m)
    check_statistic(d, ts, rows)
    check_timeline(os.path.join(d, f"msprof_{ts}.json"), len(rows))
    # Durations against msame's own latency measurement: medians over the runs
    # (a run the OS descheduled between the API call and the stream's thread
    # does not decide the result on a busy machine).
    median_ms = float(re.search(r"latency ms min .* median ([0-9.]+)", proc.stdout).group(1))
    node_ms = float(np.median([sum(float(r["Task Duration(us)"]) for r in rs) / 1e3 for rs in by_run.values()]))
    # Under sanitizers only the upper bound (as in test_msprof_on_acl_app):
    # instrumentation makes the code between nodes cost more.
    if sanitized_build():
        assert node_ms <= median_ms * 1.01 + 0.01, f"nodes {node_ms:.3f} ms per run > measured {median_ms:.3f} ms"
    else:
        assert abs(node_ms - median_ms) <= 0.1 * median_ms, \
            f"nodes {node_ms:.3f} ms per run vs measured {median_ms:.3f} ms (medians)"
    api = read_csv(os.path.join(d, f"api_statistic_{ts}.csv"))
    calls = {(a["Level"], a["API Name"]): int(a["Count"]) for a in api}
    # msame executes asynchronously on its own stream and synchronizes.
    assert calls[("AscendCL", "aclmdlExecuteAsync")] == loop
    assert calls[("AscendCL", "aclrtSynchronizeStream")] >= loop
    assert calls[("AscendCL", "aclmdlLoadFromFile")] == 1
    assert calls[("Model", "model execution")] == loop


def test_profile_nodes_cpu_clock(model):
    """OPENCANN_PROFILE_CLOCK=cpu: the node times are process CPU time, so their
    sum cannot exceed the CPU time the OS charged the whole msame process
    (resource.getrusage, an independent account), and it is most of it."""
    import resource
    _, om = model
    loop = 200
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run([oc_harness.MSAME, "--model", om, "--loop", loop],
               env={"OPENCANN_PROFILE_NODES": "1", "OPENCANN_PROFILE_CLOCK": "cpu", "OPENCANN_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"\[profile\] model '[^']*': (\d+) runs, ([0-9.]+) ms per run in \d+ nodes \(cpu time\)",
                  proc.stderr)
    assert m, f"no cpu-clock report in:\n{proc.stderr}"
    runs, per_run_ms = int(m.group(1)), float(m.group(2))
    assert runs == loop
    child_ms = ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) * 1e3
    nodes_ms = runs * per_run_ms
    assert 0 < nodes_ms <= child_ms * 1.01 + 1, f"nodes {nodes_ms:.1f} ms CPU vs process {child_ms:.1f} ms"
    assert nodes_ms >= 0.2 * child_ms, f"nodes {nodes_ms:.1f} ms CPU of the process's {child_ms:.1f} ms"


def test_msprof_on_acl_app(model, tmp_path):
    m, om = model
    app = acl_models.app_path("acl_prof_app")
    runs_wanted = 9
    proc = run([MSPROF, f"--output={tmp_path}", app, om, runs_wanted],
               env={"OPENCANN_PROFILE_NODES": "1", "OPENCANN_NUM_THREADS": "1"})
    runs, nodes = executor_count(proc.stderr)
    assert runs == runs_wanted
    d, ts = prof_dir(tmp_path)
    rows = read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    by_run = check_rows(rows, runs, nodes, m)
    # The application timed each aclmdlExecute itself: the nodes of a run can
    # never take longer than the call, and they account for its time (within
    # 10%, median over the runs: a run the OS descheduled between the API call
    # and the stream's thread does not decide the result on a busy machine).
    app_ms = {m_.group(1): float(m_.group(2)) for m_ in re.finditer(r"run_ms (\d+) ([0-9.]+)", proc.stdout)}
    assert sorted(app_ms) == sorted(by_run)
    ratios = []
    for run_id, rs in by_run.items():
        s = sum(float(r["Task Duration(us)"]) for r in rs) / 1e3
        assert s <= app_ms[run_id] * 1.001 + 0.01, f"run {run_id}: nodes {s:.3f} ms > measured {app_ms[run_id]:.3f}"
        ratios.append(s / app_ms[run_id])
    # No timing bound under sanitizers (as in TraceTest): instrumentation
    # changes what the code between nodes costs; a make asan run measured a
    # median of 0.88 on a busy machine.
    if not sanitized_build():
        assert np.median(ratios) >= 0.9, f"node time / measured time per run: {ratios}"
    timeline = check_timeline(os.path.join(d, f"msprof_{ts}.json"), len(rows))
    memcpy = [e for e in timeline if e["cat"] == "Memcpy"]
    assert memcpy and memcpy[0]["args"]["bytes"] == 1 * 3 * HW * HW * 4
    # Node events nest inside their model-run event on the stream's thread.
    run_events = [e for e in timeline if e["cat"] == "Model" and e["name"].startswith("execute")]
    assert len(run_events) == runs
    for e in timeline:
        if e["cat"] not in ("AscendCL", "Memcpy", "Model"):
            assert any(r["tid"] == e["tid"] and r["ts"] - 0.002 <= e["ts"] and
                       e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 0.002 for r in run_events), e


def test_msprof_on_many_streams(tmp_path):
    """acl_concurrency: six threads, each with its own stream, run one model
    60 times each (plus models loaded from memory): every execution's nodes are
    recorded once, on the stream that ran it, and nothing is dropped."""
    m = acl_models.two_io_model()
    _, om = acl_models.compile_model(m, str(tmp_path))
    threads = 6
    proc = run([MSPROF, f"--output={tmp_path / 'p'}", acl_models.app_path("acl_concurrency"), om, threads, 60],
               env={"OPENCANN_PROFILE_NODES": "1"})
    # The executor's own count, summed over the models the program loaded.
    counts = [(int(a), int(b)) for a, b in
              re.findall(r"\[profile\] model '[^']*': (\d+) runs, [0-9.]+ ms per run in (\d+) nodes", proc.stderr)]
    assert counts, proc.stderr
    d, ts = prof_dir(tmp_path / "p")
    rows = read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    assert len(rows) == sum(r * n for r, n in counts)
    runs = {}
    for r in rows:
        runs.setdefault((r["Model ID"], r["Run"]), []).append(r)
    assert "" not in {k[1] for k in runs}, "a node outside any model run"
    assert len(runs) == sum(r for r, _ in counts)
    for rs in runs.values():
        assert len({r["Op Name"] for r in rs}) == len(rs) == counts[0][1]
        assert len({(r["Stream ID"], r["Thread ID"]) for r in rs}) == 1, "one run's nodes on several streams"
    assert len({r["Stream ID"] for r in rows}) >= threads
    with open(os.path.join(d, f"msprof_{ts}.json")) as f:
        assert json.load(f)["otherData"]["dropped_records"] == 0


def test_msame_profiler_flag(model, tmp_path):
    m, om = model
    loop = 3
    proc = run([oc_harness.MSAME, "--model", om, "--loop", loop, "--output", tmp_path / "out", "--profiler", "true"],
               env={"OPENCANN_PROFILE_NODES": "1"})
    runs, nodes = executor_count(proc.stderr)
    d, ts = prof_dir(tmp_path / "out" / "profiler")
    rows = read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    check_rows(rows, runs, nodes, m)
    check_timeline(os.path.join(d, f"msprof_{ts}.json"), len(rows))
    bad = subprocess.run([oc_harness.MSAME, "--model", om, "--profiler", "true"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--profiler true needs --output" in bad.stderr


def test_aclprof_api_in_the_program(model, tmp_path):
    m, om = model
    app = acl_models.app_path("acl_prof_app")
    proc = run([app, om, 3, tmp_path / "prof"], env={"OPENCANN_PROFILE_NODES": "1"})
    runs, nodes = executor_count(proc.stderr)
    d, ts = prof_dir(tmp_path / "prof")
    rows = read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    check_rows(rows, runs, nodes, m)
    api = read_csv(os.path.join(d, f"api_statistic_{ts}.csv"))
    names = {a["API Name"] for a in api if a["Level"] == "AscendCL"}
    # Recorded between aclprofStart and aclprofStop only.
    assert "aclmdlExecute" in names and "aclmdlLoadFromFile" not in names


def test_aclprof_error_codes():
    proc = subprocess.run([acl_models.app_path("acl_prof_app"), "--misuse"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_profiling_off_writes_nothing(model, tmp_path):
    m, om = model
    run([oc_harness.MSAME, "--model", om, "--loop", 2, "--output", tmp_path / "out"])
    assert not os.path.exists(tmp_path / "out" / "profiler")
    assert not glob.glob(str(tmp_path / "**" / "PROF_*"), recursive=True)


def test_msprof_switches_select_the_data(model, tmp_path):
    m, om = model
    app = acl_models.app_path("acl_prof_app")
    run([MSPROF, f"--output={tmp_path / 'a'}", "--task-time=off", app, om, 1])
    d, ts = prof_dir(tmp_path / "a")
    assert read_csv(os.path.join(d, f"op_summary_{ts}.csv")) == []
    assert any(a["API Name"] == "aclmdlExecute" for a in read_csv(os.path.join(d, f"api_statistic_{ts}.csv")))
    proc = run([MSPROF, f"--output={tmp_path / 'b'}", "--ascendcl=off", "--aic-metrics=PipeUtilization", app, om, 1])
    assert "--aic-metrics has no effect" in proc.stderr
    d, ts = prof_dir(tmp_path / "b")
    assert read_csv(os.path.join(d, f"op_summary_{ts}.csv"))
    assert not [a for a in read_csv(os.path.join(d, f"api_statistic_{ts}.csv")) if a["Level"] == "AscendCL"]
    bad = subprocess.run([MSPROF, "--ascendcl=maybe", app], capture_output=True, text=True)
    assert bad.returncode == 2 and "must be on or off" in bad.stderr


def test_msprof_rejects_a_program_without_ascendcl(tmp_path):
    proc = subprocess.run([MSPROF, f"--output={tmp_path}", "--application=/bin/true"], capture_output=True, text=True)
    assert proc.returncode != 0 and "no profiling data" in proc.stderr
    proc = subprocess.run([MSPROF, f"--output={tmp_path}"], capture_output=True, text=True)
    assert proc.returncode == 2 and "no program to profile" in proc.stderr


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed to render report.html: apt-get install chromium "
                "(scripts/install_deps.sh installs it)")


def test_report_html_renders_in_headless_chromium(model, tmp_path):
    from PIL import Image
    m, om = model
    run([MSPROF, f"--output={tmp_path}", f"--application={oc_harness.MSAME} --model {om} --loop 2"])
    d, ts = prof_dir(tmp_path)
    html = open(os.path.join(d, "report.html"), encoding="utf-8").read()
    # Self-contained: nothing fetched from anywhere.
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", html, re.I)
    assert "<svg" in html and "conv0" in html
    shot = tmp_path / "report.png"
    proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--hide-scrollbars", "--window-size=1200,900", f"--screenshot={shot}", "file://" + os.path.join(d, "report.html")],
                          capture_output=True, text=True, timeout=180)
    assert shot.exists(), f"no screenshot (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    img = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert img.shape[0] > 100 and img.shape[1] > 100
    # Not blank: the bars and the text make the picture vary.
    assert img.std() > 10.0, f"screenshot looks blank (std {img.std():.2f})"
    assert (img < 128).mean() > 0.005, "almost no dark pixels: the chart and table did not render"
