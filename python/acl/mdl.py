"""acl.mdl: offline models (.om), their descriptions and datasets (pyACL conventions)."""
import ctypes as _ct

from ._lib import HW as _HW, Batch as _Batch, IODims as _IODims
from ._lib import lib as _c, ptr as _ptr, text as _text, cstr as _cstr


def load_from_file(model_path):
    mid = _ct.c_uint32()
    ret = _c.aclmdlLoadFromFile(_cstr(model_path), _ct.byref(mid))
    return mid.value, ret


def load_from_mem(model, model_size):
    mid = _ct.c_uint32()
    ret = _c.aclmdlLoadFromMem(model or None, model_size, _ct.byref(mid))
    return mid.value, ret


def load_from_file_with_mem(model_path, work_ptr, work_size, weight_ptr, weight_size):
    mid = _ct.c_uint32()
    ret = _c.aclmdlLoadFromFileWithMem(_cstr(model_path), _ct.byref(mid), work_ptr or None, work_size,
                                        weight_ptr or None, weight_size)
    return mid.value, ret


def load_from_mem_with_mem(model, model_size, work_ptr, work_size, weight_ptr, weight_size):
    mid = _ct.c_uint32()
    ret = _c.aclmdlLoadFromMemWithMem(model or None, model_size, _ct.byref(mid), work_ptr or None, work_size,
                                       weight_ptr or None, weight_size)
    return mid.value, ret


def query_size(model_path):
    work, weight = _ct.c_size_t(), _ct.c_size_t()
    ret = _c.aclmdlQuerySize(_cstr(model_path), _ct.byref(work), _ct.byref(weight))
    return work.value, weight.value, ret


def query_size_from_mem(model, model_size):
    work, weight = _ct.c_size_t(), _ct.c_size_t()
    ret = _c.aclmdlQuerySizeFromMem(model or None, model_size, _ct.byref(work), _ct.byref(weight))
    return work.value, weight.value, ret


def unload(model_id):
    return _c.aclmdlUnload(model_id)


# ---- descriptions ------------------------------------------------------------------

def create_desc():
    return _ptr(_c.aclmdlCreateDesc())


def destroy_desc(model_desc):
    return _c.aclmdlDestroyDesc(model_desc or None)


def get_desc(model_desc, model_id):
    return _c.aclmdlGetDesc(model_desc or None, model_id)


def get_num_inputs(model_desc):
    return _c.aclmdlGetNumInputs(model_desc or None)


def get_num_outputs(model_desc):
    return _c.aclmdlGetNumOutputs(model_desc or None)


def get_input_size_by_index(model_desc, index):
    return _c.aclmdlGetInputSizeByIndex(model_desc or None, index)


def get_output_size_by_index(model_desc, index):
    return _c.aclmdlGetOutputSizeByIndex(model_desc or None, index)


def _dims(fn, model_desc, index):
    d = _IODims()
    ret = fn(model_desc or None, index, _ct.byref(d))
    n = min(d.dimCount, len(d.dims))
    return {"name": _text(d.name), "dimCount": d.dimCount, "dims": list(d.dims[:n])}, ret


def get_input_dims(model_desc, index):
    return _dims(_c.aclmdlGetInputDims, model_desc, index)


def get_input_dims_v2(model_desc, index):
    return _dims(_c.aclmdlGetInputDimsV2, model_desc, index)


def get_output_dims(model_desc, index):
    return _dims(_c.aclmdlGetOutputDims, model_desc, index)


def get_cur_output_dims(model_desc, index):
    return _dims(_c.aclmdlGetCurOutputDims, model_desc, index)


def get_input_name_by_index(model_desc, index):
    return _text(_c.aclmdlGetInputNameByIndex(model_desc or None, index))


def get_output_name_by_index(model_desc, index):
    return _text(_c.aclmdlGetOutputNameByIndex(model_desc or None, index))


def get_input_index_by_name(model_desc, name):
    i = _ct.c_size_t()
    ret = _c.aclmdlGetInputIndexByName(model_desc or None, _cstr(name), _ct.byref(i))
    return i.value, ret


def get_output_index_by_name(model_desc, name):
    i = _ct.c_size_t()
    ret = _c.aclmdlGetOutputIndexByName(model_desc or None, _cstr(name), _ct.byref(i))
    return i.value, ret


def get_input_data_type(model_desc, index):
    return _c.aclmdlGetInputDataType(model_desc or None, index)


def get_output_data_type(model_desc, index):
    return _c.aclmdlGetOutputDataType(model_desc or None, index)


def get_input_format(model_desc, index):
    return _c.aclmdlGetInputFormat(model_desc or None, index)


def get_output_format(model_desc, index):
    return _c.aclmdlGetOutputFormat(model_desc or None, index)


def get_dynamic_batch(model_desc):
    b = _Batch()
    ret = _c.aclmdlGetDynamicBatch(model_desc or None, _ct.byref(b))
    n = min(b.batchCount, len(b.batch))
    return {"batchCount": b.batchCount, "batch": list(b.batch[:n])}, ret


def get_dynamic_hw(model_desc, index):
    """index is reserved (pyACL samples pass -1)."""
    h = _HW()
    ret = _c.aclmdlGetDynamicHW(model_desc or None, index & 0xFFFFFFFFFFFFFFFF, _ct.byref(h))
    n = min(h.hwCount, len(h.hw))
    return {"hwCount": h.hwCount, "hw": [[h.hw[k][0], h.hw[k][1]] for k in range(n)]}, ret


# ---- datasets ------------------------------------------------------------------------

def create_dataset():
    return _ptr(_c.aclmdlCreateDataset())


def destroy_dataset(dataset):
    return _c.aclmdlDestroyDataset(dataset or None)


def add_dataset_buffer(dataset, data_buffer):
    ret = _c.aclmdlAddDatasetBuffer(dataset or None, data_buffer or None)
    return dataset, ret


def get_dataset_num_buffers(dataset):
    return _c.aclmdlGetDatasetNumBuffers(dataset or None)


def get_dataset_buffer(dataset, index):
    return _ptr(_c.aclmdlGetDatasetBuffer(dataset or None, index))


def set_dataset_tensor_desc(dataset, tensor_desc, index):
    ret = _c.aclmdlSetDatasetTensorDesc(dataset or None, tensor_desc or None, index)
    return dataset, ret


def get_dataset_tensor_desc(dataset, index):
    return _ptr(_c.aclmdlGetDatasetTensorDesc(dataset or None, index))


# ---- execution --------------------------------------------------------------------------

def execute(model_id, input_dataset, output_dataset):
    return _c.aclmdlExecute(model_id, input_dataset or None, output_dataset or None)


def execute_async(model_id, input_dataset, output_dataset, stream):
    return _c.aclmdlExecuteAsync(model_id, input_dataset or None, output_dataset or None, stream or None)


def set_dynamic_batch_size(model_id, dataset, index, batch_size):
    return _c.aclmdlSetDynamicBatchSize(model_id, dataset or None, index, batch_size)


def set_dynamic_hw_size(model_id, dataset, index, height, width):
    return _c.aclmdlSetDynamicHWSize(model_id, dataset or None, index, height, width)


def set_input_dynamic_dims(model_id, dataset, index, dims):
    """dims: {"name": str, "dimCount": n, "dims": [...]} as get_input_dims returns."""
    d = _IODims()
    values = list(dims.get("dims", []))
    if len(values) > len(d.dims):
        return 100000  # ACL_ERROR_INVALID_PARAM: more dims than aclmdlIODims holds
    d.name = _cstr(dims.get("name", ""))[:127]
    d.dimCount = int(dims.get("dimCount", len(values)))
    for k, v in enumerate(values):
        d.dims[k] = v
    return _c.aclmdlSetInputDynamicDims(model_id, dataset or None, index, _ct.byref(d))


def __getattr__(name):
    # pyACL functions this module does not have: a clear error, not a bare AttributeError.
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md lists what is)")
