"""`acl`: the pyACL Python API (AscendCL for Python) over OpenCANN's libascendcl.so.

A pyACL application imports `acl` and calls `acl.init()`, `acl.rt.*`,
`acl.mdl.*`, `acl.media.*` and `acl.util.*` as it would on an Ascend host; here the calls go
through ctypes to the C library, so the model runs on the CPU. Conventions
follow pyACL: handles and pointers are Python ints (0 for NULL); a call that
produces something returns `(value, ret)`, one that only acts returns `ret`
(an aclError int, 0 on success); getters that cannot fail return the value.

What is covered, and what is not, is listed in docs/python.md."""
import ctypes as _ct

from . import _lib
from ._lib import lib as _c, ptr as _ptr, text as _text, cstr as _cstr

__all__ = ["rt", "mdl", "op", "prof", "util", "media"]


def init(config_path=None):
    return _c.aclInit(_cstr(config_path) if config_path else None)


def finalize():
    return _c.aclFinalize()


def get_recent_err_msg():
    msg = _c.aclGetRecentErrMsg()
    return None if msg is None else _text(msg)


def get_version():
    v = [_ct.c_int32() for _ in range(3)]
    ret = _c.aclrtGetVersion(*[_ct.byref(x) for x in v])
    return v[0].value, v[1].value, v[2].value, ret


# ---- data buffers ---------------------------------------------------------------

def create_data_buffer(data, size):
    return _ptr(_c.aclCreateDataBuffer(data or None, size))


def destroy_data_buffer(data_buffer):
    return _c.aclDestroyDataBuffer(data_buffer or None)


def update_data_buffer(data_buffer, data, size):
    return _c.aclUpdateDataBuffer(data_buffer or None, data or None, size)


def get_data_buffer_addr(data_buffer):
    return _ptr(_c.aclGetDataBufferAddr(data_buffer or None))


def get_data_buffer_size(data_buffer):
    return _c.aclGetDataBufferSize(data_buffer or None)


def get_data_buffer_size_v2(data_buffer):
    return _c.aclGetDataBufferSizeV2(data_buffer or None)


def data_type_size(data_type):
    return _c.aclDataTypeSize(data_type)


# ---- tensor descriptions --------------------------------------------------------

def create_tensor_desc(data_type, dims, format):
    arr = (_ct.c_int64 * max(len(dims), 1))(*dims)
    return _ptr(_c.aclCreateTensorDesc(data_type, len(dims), arr, format))


def destroy_tensor_desc(desc):
    _c.aclDestroyTensorDesc(desc or None)


def get_tensor_desc_type(desc):
    return _c.aclGetTensorDescType(desc or None)


def get_tensor_desc_format(desc):
    return _c.aclGetTensorDescFormat(desc or None)


def get_tensor_desc_size(desc):
    return _c.aclGetTensorDescSize(desc or None)


def get_tensor_desc_element_count(desc):
    return _c.aclGetTensorDescElementCount(desc or None)


def get_tensor_desc_num_dims(desc):
    return _c.aclGetTensorDescNumDims(desc or None)


def get_tensor_desc_dim_v2(desc, index):
    d = _ct.c_int64()
    ret = _c.aclGetTensorDescDimV2(desc or None, index, _ct.byref(d))
    return d.value, ret


def get_tensor_desc_dim(desc, index):
    return get_tensor_desc_dim_v2(desc, index)[0]


def set_tensor_desc_name(desc, name):
    _c.aclSetTensorDescName(desc or None, _cstr(name))


def get_tensor_desc_name(desc):
    return _text(_c.aclGetTensorDescName(desc or None))


def set_tensor_const(desc, data, length):
    return _c.aclSetTensorConst(desc or None, data or None, length)


def set_tensor_place_ment(desc, mem_type):
    return _c.aclSetTensorPlaceMent(desc or None, mem_type)


def float16_to_float(value):
    return _c.aclFloat16ToFloat(value)


def float_to_float16(value):
    return _c.aclFloatToFloat16(value)


from . import media, mdl, op, prof, rt, util  # noqa: E402  (they import the helpers above)


def __getattr__(name):
    # pyACL parts this module does not have (acl.vdec, acl.venc, ...):
    # a clear error, not a bare AttributeError.
    raise AttributeError(f"acl.{name} is not supported by OpenCANN's acl module (docs/python.md lists what is)")
