"""A pyACL application written the way Ascend's Python samples are: device,
context and stream set-up, model load, device buffers for every input and
output, execute, copy back, tear-down; every return code checked.

    python3 classify.py MODEL.om OUT_DIR IN0.npy [IN1.npy ...] [--async] [--loop N]

Writes OUT_DIR/output_<i>.npy (shaped by the model's output dims) and prints
one JSON line describing the model."""
import json
import os
import sys

import numpy as np

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_BY_ACL_DTYPE = {0: np.float32, 1: np.float16, 2: np.int8, 3: np.int32, 4: np.uint8, 6: np.int16,
                    7: np.uint16, 8: np.uint32, 9: np.int64, 10: np.uint64, 11: np.float64, 12: np.bool_}


def check(ret, what):
    if ret != 0:
        raise SystemExit(f"{what} failed: ret {ret}: {acl.get_recent_err_msg()}")


class Model:
    def __init__(self, path, device_id=0):
        self.device_id = device_id
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(device_id), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(device_id)
        check(ret, "acl.rt.create_context")
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        self.model_id, ret = acl.mdl.load_from_file(path)
        check(ret, "acl.mdl.load_from_file")
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.inputs = self._dataset(acl.mdl.get_num_inputs(self.desc), acl.mdl.get_input_size_by_index)
        self.outputs = self._dataset(acl.mdl.get_num_outputs(self.desc), acl.mdl.get_output_size_by_index)

    def _dataset(self, count, size_of):
        dataset = acl.mdl.create_dataset()
        buffers = []
        for i in range(count):
            size = size_of(self.desc, i)
            dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "acl.rt.malloc")
            buf = acl.create_data_buffer(dev, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
            check(ret, "acl.mdl.add_dataset_buffer")
            buffers.append((dev, size, buf))
        return dataset, buffers

    def describe(self):
        def io(n, dims_of, name_of, dtype_of, format_of, size_of):
            out = []
            for i in range(n):
                dims, ret = dims_of(self.desc, i)
                check(ret, "dims")
                out.append({"name": name_of(self.desc, i), "dims": dims["dims"], "dims_name": dims["name"],
                            "dtype": dtype_of(self.desc, i), "format": format_of(self.desc, i),
                            "size": size_of(self.desc, i)})
            return out
        m = acl.mdl
        return {"inputs": io(m.get_num_inputs(self.desc), m.get_input_dims, m.get_input_name_by_index,
                             m.get_input_data_type, m.get_input_format, m.get_input_size_by_index),
                "outputs": io(m.get_num_outputs(self.desc), m.get_output_dims, m.get_output_name_by_index,
                              m.get_output_data_type, m.get_output_format, m.get_output_size_by_index)}

    def run(self, arrays, use_async=False):
        for (dev, size, _), a in zip(self.inputs[1], arrays):
            a = np.ascontiguousarray(a)
            if a.nbytes != size:
                raise SystemExit(f"input of {a.nbytes} bytes, the model wants {size}")
            check(acl.rt.memcpy(dev, size, acl.util.numpy_to_ptr(a), a.nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
                  "acl.rt.memcpy")
        if use_async:
            check(acl.mdl.execute_async(self.model_id, self.inputs[0], self.outputs[0], self.stream),
                  "acl.mdl.execute_async")
            check(acl.rt.synchronize_stream(self.stream), "acl.rt.synchronize_stream")
        else:
            check(acl.mdl.execute(self.model_id, self.inputs[0], self.outputs[0]), "acl.mdl.execute")
        results = []
        for i, (dev, size, _) in enumerate(self.outputs[1]):
            host, ret = acl.rt.malloc_host(size)
            check(ret, "acl.rt.malloc_host")
            check(acl.rt.memcpy(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST), "acl.rt.memcpy")
            dims, ret = acl.mdl.get_output_dims(self.desc, i)
            check(ret, "acl.mdl.get_output_dims")
            dtype = NPY_BY_ACL_DTYPE[acl.mdl.get_output_data_type(self.desc, i)]
            arr = acl.util.ptr_to_numpy(host, tuple(dims["dims"]), np.dtype(dtype).num).copy()
            check(acl.rt.free_host(host), "acl.rt.free_host")
            results.append(arr)
        return results

    def close(self):
        for dataset, buffers in (self.inputs, self.outputs):
            for dev, _, buf in buffers:
                check(acl.destroy_data_buffer(buf), "acl.destroy_data_buffer")
                check(acl.rt.free(dev), "acl.rt.free")
            check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")
        check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        check(acl.rt.destroy_stream(self.stream), "acl.rt.destroy_stream")
        check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(self.device_id), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")


def main(argv):
    use_async = "--async" in argv
    loop = int(argv[argv.index("--loop") + 1]) if "--loop" in argv else 1
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] != "--loop")]
    om, out_dir, inputs = args[0], args[1], [np.load(p) for p in args[2:]]
    model = Model(om)
    print(json.dumps(model.describe()))
    for _ in range(loop):
        outs = model.run(inputs, use_async)
    os.makedirs(out_dir, exist_ok=True)
    for i, o in enumerate(outs):
        np.save(os.path.join(out_dir, f"output_{i}.npy"), o)
    model.close()
    print("PASS")


if __name__ == "__main__":
    main(sys.argv[1:])
