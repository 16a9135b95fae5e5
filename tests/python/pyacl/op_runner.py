"""Runs one single-operator case through pyACL's acl.op API (a separate
process, as an application would):

    python3 op_runner.py CASE.json

CASE.json: {"op": str, "mode": "v2" | "v1" | "handle" | "compile_v2",
            "inputs": [{"npy": path, "const": bool} | null (absent optional input)],
            "outputs": [{"dtype": aclDataType, "dims": [...], "npy": path to write}],
            "attrs": [[kind, name, value], ...]  kind: bool|int|float|string|list_int|list_float|data_type|list_list_int,
            "model_dir": a directory of atc --singleop models to load first (optional),
            "runs": n (handle mode: runs of the same handle)}
Prints one JSON line: {"ret": ..., "msg": ..., "sync": ..., "out_dims": [...]}."""
import json
import sys

import numpy as np

import acl

ACL_BY_NUMPY = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2, np.dtype(np.int32): 3,
                np.dtype(np.uint8): 4, np.dtype(np.int16): 6, np.dtype(np.uint16): 7, np.dtype(np.uint32): 8,
                np.dtype(np.int64): 9, np.dtype(np.uint64): 10, np.dtype(np.float64): 11, np.dtype(np.bool_): 12}
NUMPY_BY_ACL = {v: k for k, v in ACL_BY_NUMPY.items()}
ACL_FORMAT_ND = 2


def main(path):
    case = json.load(open(path))
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    if case.get("model_dir"):
        assert acl.op.set_model_dir(case["model_dir"]) == 0, acl.get_recent_err_msg()
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    keep, in_descs, in_bufs = [], [], []
    for spec in case["inputs"]:
        if spec is None:
            in_descs.append(acl.create_tensor_desc(-1, [], -1))
            in_bufs.append(acl.create_data_buffer(0, 0))
            continue
        a = np.ascontiguousarray(np.load(spec["npy"]))
        keep.append(a)
        d = acl.create_tensor_desc(ACL_BY_NUMPY[a.dtype], list(a.shape), spec.get("format", ACL_FORMAT_ND))
        if spec.get("const"):
            assert acl.set_tensor_const(d, acl.util.numpy_to_ptr(a), a.nbytes) == 0
        dev, ret = acl.rt.malloc(max(a.nbytes, 1), 0)
        assert ret == 0
        if a.nbytes:
            assert acl.rt.memcpy(dev, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes, 1) == 0
        in_descs.append(d)
        in_bufs.append(acl.create_data_buffer(dev, a.nbytes))
    out_descs, out_bufs, out_devs = [], [], []
    for spec in case["outputs"]:
        out_descs.append(acl.create_tensor_desc(spec["dtype"], spec["dims"], ACL_FORMAT_ND))
        size = spec.get("bytes", 1 << 16)
        dev, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        out_devs.append(dev)
        out_bufs.append(acl.create_data_buffer(dev, size))
    attr = acl.op.create_attr()
    setters = {"bool": acl.op.set_attr_bool, "int": acl.op.set_attr_int, "float": acl.op.set_attr_float,
               "string": acl.op.set_attr_string, "list_int": acl.op.set_attr_list_int,
               "list_float": acl.op.set_attr_list_float, "data_type": acl.op.set_attr_data_type,
               "list_list_int": acl.op.set_attr_list_list_int}
    for kind, name, value in case.get("attrs", []):
        assert setters[kind](attr, name, value) == 0, (kind, name)
    mode = case.get("mode", "v2")
    result = {}
    if mode == "v2":
        ret = acl.op.execute_v2(case["op"], in_descs, in_bufs, out_descs, out_bufs, attr, stream)
    elif mode == "v1":
        ret = acl.op.execute(case["op"], in_descs, in_bufs, out_descs, out_bufs, attr, stream)
    elif mode == "compile_v2":
        ret = acl.op.compile(case["op"], in_descs, out_descs, attr, 0, 0, None)
        if ret == 0:
            ret = acl.op.execute_v2(case["op"], in_descs, in_bufs, out_descs, out_bufs, attr, stream)
    elif mode == "handle":
        handle, ret = acl.op.create_handle(case["op"], in_descs, out_descs, attr)
        if ret == 0:
            for _ in range(case.get("runs", 1)):
                ret = acl.op.exec_with_handle(handle, in_bufs, out_bufs, stream)
                if ret:
                    break
            result["short"] = acl.op.exec_with_handle(handle, in_bufs[:-1], out_bufs, stream)
            acl.op.destroy_handle(handle)
    result["ret"] = ret
    result["msg"] = acl.get_recent_err_msg() if ret else ""
    result["sync"] = acl.rt.synchronize_stream(stream)
    result["out_dims"] = [[acl.get_tensor_desc_dim_v2(d, i)[0] for i in range(acl.get_tensor_desc_num_dims(d))]
                          for d in out_descs]
    if ret == 0 and result["sync"] == 0:
        for spec, dev, dims in zip(case["outputs"], out_devs, result["out_dims"]):
            arr = acl.util.ptr_to_numpy(dev, dims, NUMPY_BY_ACL[spec["dtype"]].num)
            np.save(spec["npy"], arr.copy())
    acl.op.destroy_attr(attr)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
