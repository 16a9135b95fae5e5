"""hccl: HCCL's collective communication calls for Python, over libhccl.so
(ctypes), in pyACL's conventions: handles and device pointers are ints, calls
that produce values return them with the HcclResult last, others return the
HcclResult alone (0 = HCCL_SUCCESS).

    import acl, hccl
    acl.init(); acl.rt.set_device(rank % 8); stream, _ = acl.rt.create_stream()
    info, _ = hccl.get_root_info()               # rank 0; give the bytes to every rank
    comm, _ = hccl.comm_init_root_info(n, info, rank)
    grad, _ = hccl.all_reduce_numpy(grad, hccl.HCCL_REDUCE_SUM, comm, stream)

libhccl.so is found as acl finds libascendcl.so: $OPENCANN_HCCL_LIB, next to
this package, the source tree's build folder ($OC_BUILD_DIR), the loader's path.
"""
import ctypes as _ct
import ctypes.util as _ctutil
import os as _os

import numpy as _np

import acl as _acl

_HERE = _os.path.dirname(_os.path.abspath(__file__))

# HcclDataType
HCCL_DATA_TYPE_INT8 = 0
HCCL_DATA_TYPE_INT16 = 1
HCCL_DATA_TYPE_INT32 = 2
HCCL_DATA_TYPE_FP16 = 3
HCCL_DATA_TYPE_FP32 = 4
HCCL_DATA_TYPE_INT64 = 5
HCCL_DATA_TYPE_UINT64 = 6
HCCL_DATA_TYPE_UINT8 = 7
HCCL_DATA_TYPE_UINT16 = 8
HCCL_DATA_TYPE_UINT32 = 9
HCCL_DATA_TYPE_FP64 = 10
HCCL_DATA_TYPE_BFP16 = 11
# HcclReduceOp
HCCL_REDUCE_SUM = 0
HCCL_REDUCE_PROD = 1
HCCL_REDUCE_MAX = 2
HCCL_REDUCE_MIN = 3
HCCL_SUCCESS = 0
HCCL_ROOT_INFO_BYTES = 4108

_BY_NUMPY = {_np.dtype(k): v for k, v in [
    (_np.int8, HCCL_DATA_TYPE_INT8), (_np.int16, HCCL_DATA_TYPE_INT16), (_np.int32, HCCL_DATA_TYPE_INT32),
    (_np.float16, HCCL_DATA_TYPE_FP16), (_np.float32, HCCL_DATA_TYPE_FP32), (_np.int64, HCCL_DATA_TYPE_INT64),
    (_np.uint64, HCCL_DATA_TYPE_UINT64), (_np.uint8, HCCL_DATA_TYPE_UINT8), (_np.uint16, HCCL_DATA_TYPE_UINT16),
    (_np.uint32, HCCL_DATA_TYPE_UINT32), (_np.float64, HCCL_DATA_TYPE_FP64)]}


def _candidates():
    env = _os.environ.get("OPENCANN_HCCL_LIB")
    if env:
        yield env
        return
    yield _os.path.join(_HERE, "libhccl.so")
    repo = _os.path.dirname(_os.path.dirname(_HERE))
    yield _os.path.join(_os.environ.get("OC_BUILD_DIR", _os.path.join(repo, "build")), "libhccl.so")
    found = _ctutil.find_library("hccl")
    if found:
        yield found


def _load():
    tried = []
    for p in _candidates():
        if _os.path.isabs(p) and not _os.path.exists(p):
            tried.append(p)
            continue
        try:
            return _ct.CDLL(p)
        except OSError as e:
            tried.append(f"{p} ({e})")
    raise ImportError("hccl: libhccl.so not found; set OPENCANN_HCCL_LIB to its path (tried: " + ", ".join(tried) + ")")


_lib = _load()
_P, _U32, _U64, _I = _ct.c_void_p, _ct.c_uint32, _ct.c_uint64, _ct.c_int
_SIG = {
    "HcclGetRootInfo": [_P],
    "HcclCommInitRootInfo": [_U32, _P, _U32, _ct.POINTER(_P)],
    "HcclCommInitClusterInfo": [_ct.c_char_p, _U32, _ct.POINTER(_P)],
    "HcclCommDestroy": [_P],
    "HcclGetRankSize": [_P, _ct.POINTER(_U32)],
    "HcclGetRankId": [_P, _ct.POINTER(_U32)],
    "HcclGetCommAsyncError": [_P, _ct.POINTER(_I)],
    "HcclAllReduce": [_P, _P, _U64, _I, _I, _P, _P],
    "HcclBroadcast": [_P, _U64, _I, _U32, _P, _P],
    "HcclReduce": [_P, _P, _U64, _I, _I, _U32, _P, _P],
    "HcclAllGather": [_P, _P, _U64, _I, _P, _P],
    "HcclReduceScatter": [_P, _P, _U64, _I, _I, _P, _P],
    "HcclScatter": [_P, _P, _U64, _I, _U32, _P, _P],
    "HcclAlltoAll": [_P, _U64, _I, _P, _U64, _I, _P, _P],
    "HcclSend": [_P, _U64, _I, _U32, _P, _P],
    "HcclRecv": [_P, _U64, _I, _U32, _P, _P],
    "HcclBarrier": [_P, _P],
}
for _name, _args in _SIG.items():
    _f = getattr(_lib, _name)
    _f.restype = _I
    _f.argtypes = _args
_lib.HcclGetErrorString.restype = _ct.c_char_p
_lib.HcclGetErrorString.argtypes = [_I]


def get_error_string(code):
    s = _lib.HcclGetErrorString(int(code))
    return s.decode() if s else ""


def get_root_info():
    buf = _ct.create_string_buffer(HCCL_ROOT_INFO_BYTES)
    ret = _lib.HcclGetRootInfo(buf)
    return buf.raw, ret


def comm_init_root_info(n_ranks, root_info, rank):
    if len(root_info) != HCCL_ROOT_INFO_BYTES:
        raise ValueError(f"hccl.comm_init_root_info: root_info must be the {HCCL_ROOT_INFO_BYTES} bytes "
                         f"get_root_info returned, got {len(root_info)}")
    buf = _ct.create_string_buffer(bytes(root_info), HCCL_ROOT_INFO_BYTES)
    comm = _P()
    ret = _lib.HcclCommInitRootInfo(n_ranks, buf, rank, _ct.byref(comm))
    return comm.value or 0, ret


def comm_init_cluster_info(rank_table, rank):
    comm = _P()
    ret = _lib.HcclCommInitClusterInfo(rank_table.encode(), rank, _ct.byref(comm))
    return comm.value or 0, ret


def comm_destroy(comm):
    return _lib.HcclCommDestroy(comm)


def get_rank_size(comm):
    v = _U32()
    ret = _lib.HcclGetRankSize(comm, _ct.byref(v))
    return v.value, ret


def get_rank_id(comm):
    v = _U32()
    ret = _lib.HcclGetRankId(comm, _ct.byref(v))
    return v.value, ret


def get_comm_async_error(comm):
    v = _I()
    ret = _lib.HcclGetCommAsyncError(comm, _ct.byref(v))
    return v.value, ret


def all_reduce(send_buf, recv_buf, count, data_type, op, comm, stream):
    return _lib.HcclAllReduce(send_buf, recv_buf, count, data_type, op, comm, stream)


def broadcast(buf, count, data_type, root, comm, stream):
    return _lib.HcclBroadcast(buf, count, data_type, root, comm, stream)


def reduce(send_buf, recv_buf, count, data_type, op, root, comm, stream):
    return _lib.HcclReduce(send_buf, recv_buf, count, data_type, op, root, comm, stream)


def all_gather(send_buf, recv_buf, send_count, data_type, comm, stream):
    return _lib.HcclAllGather(send_buf, recv_buf, send_count, data_type, comm, stream)


def reduce_scatter(send_buf, recv_buf, recv_count, data_type, op, comm, stream):
    return _lib.HcclReduceScatter(send_buf, recv_buf, recv_count, data_type, op, comm, stream)


def scatter(send_buf, recv_buf, recv_count, data_type, root, comm, stream):
    return _lib.HcclScatter(send_buf, recv_buf, recv_count, data_type, root, comm, stream)


def all_to_all(send_buf, send_count, send_type, recv_buf, recv_count, recv_type, comm, stream):
    return _lib.HcclAlltoAll(send_buf, send_count, send_type, recv_buf, recv_count, recv_type, comm, stream)


def send(send_buf, count, data_type, dest_rank, comm, stream):
    return _lib.HcclSend(send_buf, count, data_type, dest_rank, comm, stream)


def recv(recv_buf, count, data_type, src_rank, comm, stream):
    return _lib.HcclRecv(recv_buf, count, data_type, src_rank, comm, stream)


def barrier(comm, stream):
    return _lib.HcclBarrier(comm, stream)


def data_type_of(dtype):
    """The HcclDataType of a numpy dtype (ValueError for the others)."""
    t = _BY_NUMPY.get(_np.dtype(dtype))
    if t is None:
        raise ValueError(f"hccl: numpy dtype {_np.dtype(dtype)} has no HcclDataType")
    return t


def all_reduce_numpy(array, op, comm, stream):
    """All-reduces a numpy array through device memory; returns (the reduced
    array, a new one, and the HcclResult, or an aclError of the copies)."""
    a = _np.ascontiguousarray(array)
    t = data_type_of(a.dtype)
    out = _np.empty_like(a)
    if a.size == 0:
        return out, HCCL_SUCCESS
    dev, ret = _acl.rt.malloc(a.nbytes, 0)
    if ret:
        return out, ret
    try:
        ret = _acl.rt.memcpy(dev, a.nbytes, _acl.util.numpy_to_ptr(a), a.nbytes, 1)  # host to device
        if ret:
            return out, ret
        ret = all_reduce(dev, dev, a.size, t, op, comm, stream)
        if ret:
            return out, ret
        ret = _acl.rt.synchronize_stream(stream)
        if ret:
            return out, ret
        ret = _acl.rt.memcpy(_acl.util.numpy_to_ptr(out), out.nbytes, dev, a.nbytes, 2)  # device to host
        return out, ret
    finally:
        _acl.rt.free(dev)
