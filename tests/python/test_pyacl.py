"""The pyACL-compatible `acl` module (python/acl): pyACL-style applications run
in their own Python process (as users run them), against onnxruntime."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import oc_harness
from pyacl_harness import APPS_DIR, pyacl_env, run_py, run_snippet

APP = os.path.join(APPS_DIR, "classify.py")
R = np.random.default_rng(23)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def convnet():
    inits = {"w": f32(8, 3, 3, 3) * 0.3, "b": f32(8), "fc": f32(8, 5), "fb": f32(5)}
    nodes = [helper.make_node("Conv", ["image", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fb"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["prob"], axis=1)]
    g = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 16, 16])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 5])],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def compile_(model, tmp_path, name, shapes=None, extra=()):
    path = oc_harness.save_model(model, str(tmp_path), name)
    om, _ = oc_harness.atc_compile(path, str(tmp_path / name), input_shapes=shapes, extra=extra)
    return om


def run_model_snippet(om, body):
    """run_snippet with the model at `om` loaded first (`mid`, `desc`; json, numpy as np and acl imported)."""
    prologue = f"""
        import json, numpy as np, acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        mid, ret = acl.mdl.load_from_file({om!r}); assert ret == 0
        desc = acl.mdl.create_desc(); assert acl.mdl.get_desc(desc, mid) == 0
    """
    return run_snippet(textwrap.dedent(prologue) + textwrap.dedent(body))


@pytest.mark.parametrize("mode", [[], ["--async", "--loop", "3"]])
def test_pyacl_sample_app_matches_onnxruntime(tmp_path, mode):
    m = convnet()
    om = compile_(m, tmp_path, "convnet", {"image": [2, 3, 16, 16]})
    x = f32(2, 3, 16, 16)
    np.save(tmp_path / "x.npy", x)
    proc = run_py([APP, om, str(tmp_path / "out"), str(tmp_path / "x.npy")] + mode)
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "PASS"
    desc = json.loads(lines[0])
    assert desc["inputs"] == [{"name": "image", "dims": [2, 3, 16, 16], "dims_name": "image", "dtype": 0,
                               "format": desc["inputs"][0]["format"], "size": x.nbytes}]
    assert [(o["name"], o["dims"], o["dtype"], o["size"]) for o in desc["outputs"]] == [("prob", [2, 5], 0, 40)]
    (ref,) = oc_harness.ort_run(m, {"image": x})
    got = np.load(tmp_path / "out" / "output_0.npy")
    assert got.shape == ref.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6)


def test_pyacl_two_inputs_of_two_dtypes(tmp_path):
    """float32 table and int64 indices in; float32 rows and an int64 argmax out."""
    nodes = [helper.make_node("Gather", ["table", "idx"], ["rows"], axis=0),
             helper.make_node("ArgMax", ["rows"], ["best"], axis=1, keepdims=0)]
    g = helper.make_graph(nodes, "gather", [helper.make_tensor_value_info("table", TensorProto.FLOAT, [6, 4]),
                                            helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [3, 4]),
                           helper.make_tensor_value_info("best", TensorProto.INT64, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    om = compile_(m, tmp_path, "gather")
    table, idx = f32(6, 4), np.array([5, 0, 3], np.int64)
    np.save(tmp_path / "t.npy", table)
    np.save(tmp_path / "i.npy", idx)
    proc = run_py([APP, om, str(tmp_path / "out"), str(tmp_path / "t.npy"), str(tmp_path / "i.npy")])
    desc = json.loads(proc.stdout.splitlines()[0])
    assert [i["dtype"] for i in desc["inputs"]] == [0, 9]  # ACL_FLOAT, ACL_INT64
    assert [o["dtype"] for o in desc["outputs"]] == [0, 9]
    rows, best = oc_harness.ort_run(m, {"table": table, "idx": idx})
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), rows)
    got = np.load(tmp_path / "out" / "output_1.npy")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, best)


def test_pyacl_errors_are_return_codes_and_messages(tmp_path):
    om = compile_(convnet(), tmp_path, "convnet", {"image": [1, 3, 16, 16]})
    r = run_snippet(f"""
        import json, numpy as np, acl
        out = {{}}
        out["init"] = acl.init()
        out["set_device_bad"] = acl.rt.set_device(8)  # 8 logical devices: ids 0..7
        out["set_device"] = acl.rt.set_device(0)
        mid, out["load_missing"] = acl.mdl.load_from_file({str(tmp_path / 'missing.om')!r})
        out["load_missing_msg"] = acl.get_recent_err_msg()
        mid, out["load"] = acl.mdl.load_from_file({om!r})
        empty_in, empty_out = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        out["execute_empty"] = acl.mdl.execute(mid, empty_in, empty_out)
        out["execute_empty_msg"] = acl.get_recent_err_msg()
        out["destroy_null_buffer"] = acl.destroy_data_buffer(0)
        out["unload_twice"] = [acl.mdl.unload(mid), acl.mdl.unload(mid)]
        try:
            acl.util.ptr_to_numpy(0, (2,), 11)
        except ValueError as e:
            out["null_ptr"] = str(e)
        try:
            acl.util.numpy_to_ptr(np.zeros((4, 4), np.float32)[:, 1])
        except ValueError as e:
            out["strided"] = str(e)
        out["destroy_datasets"] = [acl.mdl.destroy_dataset(empty_in), acl.mdl.destroy_dataset(empty_out)]
        out["reset"] = acl.rt.reset_device(0)
        out["finalize"] = acl.finalize()
        print(json.dumps(out))
    """)
    assert r["init"] == 0 and r["set_device"] == 0 and r["load"] == 0
    assert r["set_device_bad"] != 0
    assert r["load_missing"] != 0 and "missing.om" in r["load_missing_msg"]
    assert r["execute_empty"] != 0 and r["execute_empty_msg"]
    assert r["destroy_null_buffer"] != 0
    assert r["unload_twice"][0] == 0 and r["unload_twice"][1] != 0
    assert "null pointer" in r["null_ptr"] and "C-contiguous" in r["strided"]
    assert r["destroy_datasets"] == [0, 0] and r["reset"] == 0 and r["finalize"] == 0


def test_pyacl_dynamic_batch_gear(tmp_path):
    m = convnet()
    om = compile_(m, tmp_path, "gears", {"image": [-1, 3, 16, 16]}, extra=["--dynamic_batch_size=1,4"])
    x = f32(4, 3, 16, 16)
    np.save(tmp_path / "x.npy", x)
    r = run_model_snippet(om, f"""
        gears, ret = acl.mdl.get_dynamic_batch(desc); assert ret == 0
        idx, ret = acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data"); assert ret == 0
        x = np.load({str(tmp_path / 'x.npy')!r})
        inp, outp = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        keep = []
        for i in range(acl.mdl.get_num_inputs(desc)):
            size = acl.mdl.get_input_size_by_index(desc, i)
            dev, ret = acl.rt.malloc(size, 0); assert ret == 0
            if i == 0:
                assert acl.rt.memcpy(dev, size, acl.util.numpy_to_ptr(x), x.nbytes, 1) == 0
            keep.append(dev)
            acl.mdl.add_dataset_buffer(inp, acl.create_data_buffer(dev, size))
        osize = acl.mdl.get_output_size_by_index(desc, 0)
        odev, ret = acl.rt.malloc(osize, 0); assert ret == 0
        acl.mdl.add_dataset_buffer(outp, acl.create_data_buffer(odev, osize))
        set_ret = acl.mdl.set_dynamic_batch_size(mid, inp, idx, 4)
        bad_ret = acl.mdl.set_dynamic_batch_size(mid, inp, idx, 3)
        assert acl.mdl.set_dynamic_batch_size(mid, inp, idx, 4) == 0
        exe_ret = acl.mdl.execute(mid, inp, outp)
        dims, ret = acl.mdl.get_cur_output_dims(desc, 0)
        y = acl.util.ptr_to_numpy(odev, (4, 5), 11).tolist()
        print(json.dumps({{"gears": gears, "idx": idx, "set": set_ret, "bad": bad_ret, "exe": exe_ret,
                          "cur": dims["dims"], "y": y}}))
    """)
    assert r["gears"] == {"batchCount": 2, "batch": [1, 4]}
    assert r["idx"] == 1 and r["set"] == 0 and r["bad"] != 0 and r["exe"] == 0
    assert r["cur"] == [4, 5]
    (ref,) = oc_harness.ort_run(m, {"image": x})
    np.testing.assert_allclose(np.array(r["y"], np.float32), ref, rtol=1e-4, atol=1e-6)


def test_pyacl_load_from_mem_query_size_events_and_bytes(tmp_path):
    om = compile_(convnet(), tmp_path, "convnet", {"image": [1, 3, 16, 16]})
    r = run_snippet(f"""
        import json, acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        data = open({om!r}, "rb").read()
        mid, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
        work, weight, qret = acl.mdl.query_size({om!r})
        stream, _ = acl.rt.create_stream()
        start, _ = acl.rt.create_event(); end, _ = acl.rt.create_event()
        rets = [acl.rt.record_event(start, stream), acl.rt.record_event(end, stream),
                acl.rt.synchronize_event(end)]
        ms, eret = acl.rt.event_elapsed_time(start, end)
        buf = bytearray(b"0123456789")
        p = acl.util.bytes_to_ptr(buf)
        host, _ = acl.rt.malloc_host(10)
        acl.rt.memcpy(host, 10, p, 10, 0)
        back = acl.util.ptr_to_bytes(host, 10).decode()
        count, cret = acl.rt.get_device_count()
        mode, mret = acl.rt.get_run_mode()
        print(json.dumps({{"load": ret, "unload": acl.mdl.unload(mid), "query": [work, weight, qret],
                          "events": rets, "elapsed": [ms, eret], "back": back, "count": [count, cret],
                          "mode": [mode, mret]}}))
    """)
    assert r["load"] == 0 and r["unload"] == 0
    assert r["query"][2] == 0 and r["query"][0] >= 0 and r["query"][1] > 0
    assert r["events"] == [0, 0, 0] and r["elapsed"][1] == 0 and r["elapsed"][0] >= 0
    assert r["back"] == "0123456789"
    assert r["count"] == [8, 0] and r["mode"][1] == 0


def test_pyacl_reports_a_missing_library_clearly(tmp_path):
    env = dict(pyacl_env(), OPENCANN_ASCENDCL_LIB=str(tmp_path / "nope.so"))
    proc = subprocess.run([sys.executable, "-c", "import acl"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0 and "OPENCANN_ASCENDCL_LIB" in proc.stderr and "nope.so" in proc.stderr


def test_pyacl_host_callback_runs_on_the_subscribed_thread(tmp_path):
    r = run_snippet("""
        import json, threading, acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream(); assert ret == 0
        seen, stop = [], [False]

        def serve(args):
            while not stop[0]:
                acl.rt.process_report(50)

        def on_done(data):
            seen.append((data, threading.get_ident()))

        no_sub = acl.rt.launch_callback(on_done, ["early"], 1, stream)
        tid, ret = acl.util.start_thread(serve, [])
        sub = acl.rt.subscribe_report(tid, stream)
        launched = [acl.rt.launch_callback(on_done, ["first"], 1, stream),
                    acl.rt.launch_callback(on_done, {"k": 2}, 0, stream)]
        sync = acl.rt.synchronize_stream(stream)
        for _ in range(100):
            if len(seen) == 2:
                break
            threading.Event().wait(0.02)
        unsub = acl.rt.unsubscribe_report(tid, stream)
        stop[0] = True
        stopped = [acl.util.stop_thread(tid), acl.util.stop_thread(tid)]
        print(json.dumps({"no_sub": no_sub, "sub": sub, "launched": launched, "sync": sync, "unsub": unsub,
                          "stopped": stopped, "data": [d for d, _ in seen],
                          "on_thread": [t == tid for _, t in seen]}))
    """)
    assert r["no_sub"] != 0
    assert r["sub"] == 0 and r["launched"] == [0, 0] and r["sync"] == 0 and r["unsub"] == 0
    assert r["data"] == [["first"], {"k": 2}] and r["on_thread"] == [True, True]
    assert r["stopped"][0] == 0 and r["stopped"][1] != 0


def test_pyacl_parts_not_implemented_say_so():
    r = run_snippet("""
        import json, acl
        msgs = []
        for get in (lambda: acl.prof.set_device_list, lambda: acl.mdl.set_aipp_by_input_index,
                    lambda: acl.media.vdec_create_channel):
            try:
                get()
                msgs.append(None)
            except AttributeError as e:
                msgs.append(str(e))
        print(json.dumps({"msgs": msgs, "feature_check": "bytes_to_ptr" in dir(acl.util)}))
    """)
    assert all(m and "not supported by OpenCANN" in m for m in r["msgs"]), r
    assert r["feature_check"]


def test_pyacl_model_with_unknown_dims_runs_at_the_shape_a_tensor_desc_gives(tmp_path):
    m = convnet()  # batch symbolic: a dynamic .om without --input_shape
    om = compile_(m, tmp_path, "dyn")
    x = f32(3, 3, 16, 16)
    np.save(tmp_path / "x.npy", x)
    r = run_model_snippet(om, f"""
        in_dims, _ = acl.mdl.get_input_dims(desc, 0)
        x = np.load({str(tmp_path / 'x.npy')!r})
        inp, outp = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        dev, _ = acl.rt.malloc(x.nbytes, 0)
        acl.rt.memcpy(dev, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes, 1)
        acl.mdl.add_dataset_buffer(inp, acl.create_data_buffer(dev, x.nbytes))
        td = acl.create_tensor_desc(0, [3, 3, 16, 16], 0)
        td_info = [acl.get_tensor_desc_type(td), acl.get_tensor_desc_num_dims(td),
                   acl.get_tensor_desc_dim_v2(td, 0), acl.get_tensor_desc_size(td)]
        _, set_ret = acl.mdl.set_dataset_tensor_desc(inp, td, 0)
        odev, _ = acl.rt.malloc(4096, 0)
        acl.mdl.add_dataset_buffer(outp, acl.create_data_buffer(odev, 4096))
        exe = acl.mdl.execute(mid, inp, outp)
        out_td = acl.mdl.get_dataset_tensor_desc(outp, 0)
        out_dims = [acl.get_tensor_desc_dim_v2(out_td, i)[0] for i in range(acl.get_tensor_desc_num_dims(out_td))]
        y = acl.util.ptr_to_numpy(odev, out_dims, 11).tolist()
        acl.destroy_tensor_desc(td)
        print(json.dumps({{"in_dims": in_dims["dims"], "td": td_info, "set": set_ret, "exe": exe,
                          "out_dims": out_dims, "y": y}}))
    """)
    assert r["in_dims"] == [-1, 3, 16, 16]
    assert r["td"] == [0, 4, [3, 0], 3 * 3 * 16 * 16 * 4]
    assert r["set"] == 0 and r["exe"] == 0 and r["out_dims"] == [3, 5]
    (ref,) = oc_harness.ort_run(m, {"image": x})
    np.testing.assert_allclose(np.array(r["y"], np.float32), ref, rtol=1e-4, atol=1e-6)


def test_pyacl_profiling_writes_an_op_summary_of_the_run(tmp_path):
    om = compile_(convnet(), tmp_path, "convnet", {"image": [1, 3, 16, 16]})
    out = tmp_path / "prof"
    r = run_model_snippet(om, f"""
        import glob, os
        rets = [acl.prof.init({str(out)!r})]
        cfg = acl.prof.create_config([0], 0, 0, 0x0001 | 0x0002)  # ACL_PROF_ACL_API | ACL_PROF_TASK_TIME
        rets.append(acl.prof.start(cfg))
        inp, outp = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        for n, size_of, ds in ((acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index, inp),
                               (acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index, outp)):
            for i in range(n):
                p, _ = acl.rt.malloc(size_of(desc, i), 0)
                acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(p, size_of(desc, i)))
        rets += [acl.mdl.execute(mid, inp, outp) for _ in range(3)]
        rets += [acl.prof.stop(cfg), acl.prof.destroy_config(cfg), acl.prof.finalize()]
        bad = acl.prof.create_config([7], 0, 0, 0x0002)
        summaries = glob.glob(os.path.join({str(out)!r}, "PROF_*", "op_summary_*.csv"))
        print(json.dumps({{"rets": rets, "bad": bad, "rows": open(summaries[0]).read().count("\\n") if summaries else 0}}))
    """)
    assert all(v == 0 for v in r["rets"]), r
    assert r["bad"] == 0  # device 7 does not exist: NULL config
    # 3 runs of a 6-node model (after fusion at least 3 nodes per run) plus the header.
    assert r["rows"] >= 1 + 3 * 3, r
