"""HCCL across processes and network namespaces, checked against numpy.

The rank processes are tests/hccl_app/hccl_collectives (an HCCL program built
like a user's, against the public headers, -lhccl -lascendcl), started here
one per rank. Results are compared element by element with hccl_reference.py.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid

import pytest

import hccl_reference

BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../build"))
APP = os.path.join(BUILD, "tests", "hccl_collectives")


def start(args, env=None, prefix=()):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.Popen(list(prefix) + [APP] + [str(a) for a in args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=e)


def finish(procs, timeout=240):
    out = []
    deadline = time.time() + timeout
    for p in procs:
        try:
            text, _ = p.communicate(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            text += "\n<killed: timeout>"
        out.append((p.returncode, text))
    return out


def run_ranks(tmp_path, n, quick=False, env=None, prefixes=None, envs=None, large=False):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    root = tmp_path / "root.bin"
    procs = []
    for r in range(n):
        e = dict(env or {})
        e.update((envs or [{}] * n)[r])
        args = ["rootinfo", r, n, root, out_dir] + (["large"] if large else ["quick"] if quick else [])
        procs.append(start(args, e, (prefixes or [()] * n)[r]))
    results = finish(procs)
    for r, (rc, text) in enumerate(results):
        assert rc == 0, f"rank {r} exited {rc}:\n{text}"
    return out_dir


@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_collective_type_and_reduction_matches_numpy(tmp_path, n):
    out = run_ranks(tmp_path, n)
    # 12 types x 4 counts (0, 1, 7, 1031) x (4 ops x 4 reducing collectives + 12 others) + barrier
    assert hccl_reference.check_outputs(out, n) == 12 * 4 * 28 + 1


def test_ranks_on_one_host_over_tcp_instead_of_shared_memory(tmp_path):
    out = run_ranks(tmp_path, 3, quick=True, env={"HCCL_INTRA_ROCE_ENABLE": "1"})
    assert hccl_reference.check_outputs(out, 3) == 4 * 2 * 28 + 1


@pytest.mark.parametrize("n", [2, 3])
def test_large_counts_in_many_steps_of_a_small_shared_segment(tmp_path, n):
    # HCCL_BUFFSIZE=1: a 1 MB segment, so 100003 elements take several steps
    out = run_ranks(tmp_path, n, large=True, env={"HCCL_BUFFSIZE": "1"})
    assert hccl_reference.check_outputs(out, n) == 4 * 2 * 28 + 1


def shared_segments(pid):
    with open(f"/proc/{pid}/maps") as f:
        return [line for line in f if "opencann-hccl" in line]


@pytest.mark.parametrize("roce,expect", [("0", True), ("1", False)])
def test_same_host_ranks_map_one_shared_segment_unless_told_not_to(tmp_path, roce, expect):
    env = {"HCCL_INTRA_ROCE_ENABLE": roce}
    procs = [start(["loop", r, 2, tmp_path / "root", 1000000], env) for r in range(2)]
    try:
        # Expected: wait until both ranks have mapped it and rank 0 has unlinked
        # its name; not expected: give the ranks time to join (about a second).
        deadline = time.time() + (20 if expect else 3)
        while time.time() < deadline:
            time.sleep(0.05)
            maps = [shared_segments(p.pid) for p in procs]
            if expect and all(m and "(deleted)" in m[0] for m in maps):
                break
        assert all(p.poll() is None for p in procs), "a rank exited early"
        assert all(maps) == expect and any(maps) == expect, maps
        if expect:  # the same segment, already unlinked from /dev/shm
            assert maps[0][0].split()[-2:] == maps[1][0].split()[-2:] and "(deleted)" in maps[0][0], maps
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_eight_ranks_one_per_logical_device(tmp_path):
    out = run_ranks(tmp_path, 8, quick=True)
    assert hccl_reference.check_outputs(out, 8) == 4 * 2 * 28 + 1


def test_comm_init_all_runs_ranks_in_one_process(tmp_path):
    (rc, text), = finish([start(["all", 4, tmp_path])])
    assert rc == 0, text
    assert hccl_reference.check_outputs(tmp_path, 4) == 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_table(path, servers):
    """A version 1.0 rank table: servers = [(server ip, [rank ids])]."""
    table = {"version": "1.0", "server_count": str(len(servers)), "status": "completed",
             "server_list": [{"server_id": ip,
                              "device": [{"device_id": str(i), "device_ip": f"192.168.100.{r + 1}",
                                          "rank_id": str(r)} for i, r in enumerate(ranks)]}
                             for ip, ranks in servers]}
    path.write_text(json.dumps(table, indent=1))


def test_rank_table_joins_the_ranks(tmp_path):
    table = tmp_path / "rank_table.json"
    rank_table(table, [("127.0.0.1", [0, 1, 2])])
    out = tmp_path / "out"
    out.mkdir()
    env = {"HCCL_IF_BASE_PORT": str(free_port())}
    results = finish([start(["ranktable", r, table, out, "quick"], env) for r in range(3)])
    for r, (rc, text) in enumerate(results):
        assert rc == 0, f"rank {r}: {text}"
    assert hccl_reference.check_outputs(out, 3) == 4 * 2 * 28 + 1


def test_sub_communicators_of_even_and_odd_ranks(tmp_path):
    results = finish([start(["subcomm", r, 4, tmp_path / "root"]) for r in range(4)])
    for r, (rc, text) in enumerate(results):
        assert rc == 0, text
        assert f"sub-communicator of 2 ranks, sum {2 if r % 2 == 0 else 4}" in text


def test_event_after_all_reduce_sees_its_result(tmp_path):
    results = finish([start(["loop", r, 3, tmp_path / "root", 50]) for r in range(3)])
    for rc, text in results:
        assert rc == 0 and "50 all-reduces checked" in text, text


# ---- faults: named errors within the timeout, never a hang ---------------------------------

def test_mismatched_collective_fails_every_rank_naming_the_ranks(tmp_path):
    results = finish([start(["mismatch", r, 3, tmp_path / "root"]) for r in range(3)], timeout=60)
    for rc, text in results:
        assert rc == 3, text
        assert "async=1 " in text, text  # HCCL_E_PARA
        assert "rank 1 HcclAllReduce(count 4095, FP32, SUM)" in text
        assert "rank 0 HcclAllReduce(count 4096, FP32, SUM)" in text


def test_killed_rank_makes_the_others_fail_at_once(tmp_path):
    env = {"HCCL_EXEC_TIMEOUT": "30"}
    procs = [start(["loop", r, 3, tmp_path / "root", 1000000], env) for r in range(3)]
    time.sleep(1.5)
    procs[2].send_signal(signal.SIGKILL)
    t0 = time.time()
    results = finish(procs[:2], timeout=60)
    elapsed = time.time() - t0
    procs[2].wait()
    assert elapsed < 10, f"survivors took {elapsed:.1f} s to notice: {results}"
    for rc, text in results:
        assert rc == 3, text
        assert "async=21 " in text, text  # HCCL_E_REMOTE
        assert "communicator" in text and f"rank 2 (process {procs[2].pid}) went away" in text, text


def check_killed_over_tcp(results, elapsed, timeout, killed):
    """Over TCP a survivor learns of a killed rank when a transfer with it
    fails (HCCL_E_REMOTE, at once); one whose pending transfer is with another
    survivor can be left waiting by Gloo until HCCL_EXEC_TIMEOUT (HCCL_E_TIMEOUT).
    Either way every survivor fails, with a named error, within the timeout.
    The rank that went away is named by the rendezvous service (in the root's
    process); a survivor that asks after the root itself has failed and exited
    cannot learn it, so at least one survivor must name it."""
    assert elapsed < timeout + 10, f"survivors took {elapsed:.1f} s: {results}"
    for rc, text in results:
        assert rc == 3, text
        assert "async=21 " in text or ("async=9 " in text and "HCCL_EXEC_TIMEOUT" in text), text
        assert "communicator" in text, text
    assert any(f"rank {killed} went away first" in text for _, text in results), results


def test_killed_rank_makes_the_others_fail_over_tcp(tmp_path):
    env = {"HCCL_EXEC_TIMEOUT": "5", "HCCL_INTRA_ROCE_ENABLE": "1"}
    procs = [start(["loop", r, 3, tmp_path / "root", 1000000], env) for r in range(3)]
    time.sleep(1.5)
    procs[2].send_signal(signal.SIGKILL)
    t0 = time.time()
    results = finish(procs[:2], timeout=60)
    procs[2].wait()
    check_killed_over_tcp(results, time.time() - t0, 5, killed=2)


@pytest.mark.parametrize("path", ["shared-memory", "tcp"])
def test_stopped_rank_times_out_with_the_setting_named(tmp_path, path):
    env = {"HCCL_EXEC_TIMEOUT": "3", "HCCL_INTRA_ROCE_ENABLE": "1" if path == "tcp" else "0"}
    procs = [start(["loop", r, 3, tmp_path / "root", 1000000], env) for r in range(3)]
    time.sleep(1.5)
    procs[2].send_signal(signal.SIGSTOP)
    t0 = time.time()
    results = finish(procs[:2], timeout=60)
    elapsed = time.time() - t0
    procs[2].send_signal(signal.SIGKILL)
    procs[2].wait()
    assert elapsed < 20, f"took {elapsed:.1f} s with HCCL_EXEC_TIMEOUT=3"
    # Each survivor times out naming the setting (HCCL_E_TIMEOUT) -- or, when the
    # other survivor timed out and exited first, reports that rank going away
    # (HCCL_E_REMOTE); at least one of them times out.
    timed_out = 0
    for rc, text in results:
        assert rc == 3, text
        if "async=9 " in text:
            timed_out += 1
            assert "HCCL_EXEC_TIMEOUT" in text, text
            if path == "shared-memory":
                assert "rank 2 did not reach the operation" in text, text
        else:
            assert "async=21 " in text and "went away first" in text and "rank 2 went away" not in text, text
    assert timed_out >= 1, results


def test_rank_that_never_joins_fails_the_others_within_connect_timeout(tmp_path):
    env = {"HCCL_CONNECT_TIMEOUT": "3"}
    t0 = time.time()
    results = finish([start(["loop", r, 3, tmp_path / "root", 1], env) for r in range(2)], timeout=60)
    elapsed = time.time() - t0
    assert elapsed < 20, elapsed
    for rc, text in results:
        assert rc != 0, text
        assert "HcclCommInitRootInfo failed (9)" in text, text  # HCCL_E_TIMEOUT
        assert "rank 2 did not join" in text and "HCCL_CONNECT_TIMEOUT" in text, text


def test_bad_environment_is_named(tmp_path):
    (rc, text), = finish([start(["loop", 0, 1, tmp_path / "root", 1], {"HCCL_IF_IP": "not-an-ip"})], timeout=30)
    assert rc != 0 and "HCCL_IF_IP=not-an-ip is not an IPv4 address" in text, text


# ---- several hosts: ranks in their own network namespaces ----------------------------------

def netns_available():
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    name = "ocprobe" + uuid.uuid4().hex[:6]
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return ok


@pytest.fixture
def hosts():
    """Three 'hosts': network namespaces with their own address on a bridge."""
    if not netns_available():
        pytest.skip("needs root and iproute2 network namespaces")
    tag = uuid.uuid4().hex[:5]
    bridge = f"ocbr{tag}"
    names, ips = [], []
    sh = lambda *a: subprocess.run(list(a), check=True, capture_output=True)
    try:
        sh("ip", "link", "add", bridge, "type", "bridge")
        sh("ip", "link", "set", bridge, "up")
        for k in range(3):
            ns, veth = f"oc{tag}h{k}", f"oc{tag}v{k}"
            ip = f"10.231.{int(tag[:2], 16)}.{k + 1}"
            sh("ip", "netns", "add", ns)
            names.append(ns)
            sh("ip", "link", "add", veth, "type", "veth", "peer", "name", veth + "p")
            sh("ip", "link", "set", veth + "p", "netns", ns)
            sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", veth + "p")
            sh("ip", "-n", ns, "link", "set", veth + "p", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "link", "set", veth, "master", bridge, "up")
            ips.append(ip)
        yield list(zip(names, ips))
    finally:
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


def test_ranks_on_three_hosts_by_root_info(tmp_path, hosts):
    prefixes = [("ip", "netns", "exec", ns) for ns, _ in hosts]
    envs = [{"HCCL_IF_IP": ip} for _, ip in hosts]
    out = run_ranks(tmp_path, 3, quick=True, prefixes=prefixes, envs=envs)
    assert hccl_reference.check_outputs(out, 3) == 4 * 2 * 28 + 1


def test_ranks_on_two_hosts_by_rank_table(tmp_path, hosts):
    # Two ranks on the first host, one on the second.
    (ns0, ip0), (ns1, ip1) = hosts[0], hosts[1]
    table = tmp_path / "rank_table.json"
    rank_table(table, [(ip0, [0, 1]), (ip1, [2])])
    out = tmp_path / "out"
    out.mkdir()
    env = {"HCCL_IF_BASE_PORT": "61000"}
    where = [ns0, ns0, ns1]
    results = finish([start(["ranktable", r, table, out, "quick"], env, ("ip", "netns", "exec", where[r]))
                      for r in range(3)])
    for r, (rc, text) in enumerate(results):
        assert rc == 0, f"rank {r}: {text}"
    assert hccl_reference.check_outputs(out, 3) == 4 * 2 * 28 + 1


def test_rank_killed_on_another_host(tmp_path, hosts):
    prefixes = [("ip", "netns", "exec", ns) for ns, _ in hosts]
    procs = [start(["loop", r, 3, tmp_path / "root", 1000000], {"HCCL_IF_IP": hosts[r][1], "HCCL_EXEC_TIMEOUT": "5"},
                   prefixes[r]) for r in range(3)]
    time.sleep(2)
    procs[1].send_signal(signal.SIGKILL)
    t0 = time.time()
    results = finish([procs[0], procs[2]], timeout=60)
    procs[1].wait()
    check_killed_over_tcp(results, time.time() - t0, 5, killed=1)


# ---- hccl_test under mpirun -------------------------------------------------------------------

HCCL_TESTS = ["all_reduce_test", "all_gather_test", "broadcast_test", "reduce_scatter_test", "reduce_test",
              "alltoall_test", "alltoallv_test", "scatter_test"]


def mpirun(n, binary, args, timeout=240):
    if not shutil.which("mpirun"):
        pytest.skip("needs OpenMPI's mpirun (make deps installs openmpi-bin)")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", HCCL_LOG="0")
    if "ASAN_OPTIONS" in env:
        # Under `make asan`: OpenMPI's plugins (dlopened and unloaded by MPI_Finalize) leave allocations that
        # LeakSanitizer can only attribute to "<unknown module>"; leak checking of libhccl itself is done by
        # the tests above, which run without MPI. Address and UB checks stay on.
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    cmd = ["mpirun", "--oversubscribe", "-n", str(n), os.path.join(BUILD, binary)] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def rows(text):
    """hccl_test's result rows: (data_size, aveg_time, alg_bandwidth, check_result, bus_bandwidth)."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            out.append((int(cells[0]), float(cells[1]), float(cells[2]), cells[3], float(cells[4])))
    return out


@pytest.mark.parametrize("binary", HCCL_TESTS)
def test_hccl_test_binaries_check_their_results_under_mpirun(binary):
    p = mpirun(3, binary, ["-b", "1K", "-e", "256K", "-f", "8", "-d", "fp32", "-o", "sum", "-r", "1", "-w", "1",
                           "-n", "3", "-p", "8"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the minbytes is 1024, maxbytes is 262144, iters is 3, warmup_iters is 1" in p.stdout
    assert "data_size(Bytes):" in p.stdout and "aveg_time(us):" in p.stdout and "check_result:" in p.stdout
    r = rows(p.stdout)
    assert len(r) == 3, p.stdout
    for size, avg, alg, check, bus in r:
        assert check == "success", p.stdout
        assert avg > 0 and alg > 0 and bus >= 0


@pytest.mark.parametrize("dtype,op", [("fp16", "prod"), ("bfp16", "max"), ("int8", "min"), ("uint64", "sum"),
                                      ("int64", "prod"), ("fp64", "sum")])
def test_hccl_test_types_and_reductions(dtype, op):
    p = mpirun(4, "all_reduce_test", ["-b", "4K", "-e", "4K", "-d", dtype, "-o", op, "-w", "0", "-n", "2"])
    assert p.returncode == 0, p.stdout + p.stderr
    r = rows(p.stdout)
    assert len(r) == 1 and r[0][3] == "success", p.stdout


def test_hccl_test_refuses_bad_flags():
    p = mpirun(2, "all_reduce_test", ["-d", "complex64"], timeout=60)
    assert p.returncode != 0 and "-d complex64 is not one of the choices" in p.stdout + p.stderr
    p = mpirun(2, "all_reduce_test", ["-z", "1"], timeout=60)
    assert p.returncode != 0 and "zero copy" in p.stdout + p.stderr
