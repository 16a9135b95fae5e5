"""acl.util: moving data between numpy / bytes and the pointers the C API takes.

numpy_to_ptr and bytes_to_ptr return the address of the object's own memory
(no copy): the object must stay alive, and unchanged in size, while the
pointer is used. ptr_to_numpy gives an array over the memory at a pointer (no
copy); ptr_to_bytes copies."""
import ctypes as _ct
import threading as _threading

import numpy as _np

# numpy's type numbers (dtype.num), as pyACL's ptr_to_numpy takes them:
# NPY_BOOL 0, NPY_INT8 1, NPY_UINT8 2, NPY_INT16 3, NPY_UINT16 4, NPY_INT32 5,
# NPY_UINT32 6, NPY_INT64 7 (LONG on Linux), NPY_UINT64 8, NPY_LONGLONG 9,
# NPY_ULONGLONG 10, NPY_FLOAT32 11, NPY_FLOAT64 12, NPY_FLOAT16 23.
_BY_NUM = {}
for _t in (_np.bool_, _np.int8, _np.uint8, _np.int16, _np.uint16, _np.intc, _np.uintc, _np.int_, _np.uint,
           _np.longlong, _np.ulonglong, _np.float32, _np.float64, _np.float16, _np.complex64, _np.complex128):
    _BY_NUM.setdefault(_np.dtype(_t).num, _np.dtype(_t))


def _dtype(npy_type):
    if isinstance(npy_type, _np.dtype) or isinstance(npy_type, type):
        return _np.dtype(npy_type)
    dt = _BY_NUM.get(int(npy_type))
    if dt is None:
        raise ValueError(f"acl.util: numpy type number {npy_type} is not supported "
                         f"(known: {sorted(_BY_NUM)})")
    return dt


def numpy_to_ptr(array):
    if not isinstance(array, _np.ndarray):
        raise TypeError("acl.util.numpy_to_ptr: expected a numpy.ndarray, got " + type(array).__name__)
    if not array.flags["C_CONTIGUOUS"]:
        raise ValueError("acl.util.numpy_to_ptr: the array is not C-contiguous (use numpy.ascontiguousarray)")
    return array.ctypes.data


def numpy_contiguous_to_ptr(array):
    """(pointer, array): a C-contiguous copy when the array is not one (keep it alive)."""
    if not isinstance(array, _np.ndarray):
        raise TypeError("acl.util.numpy_contiguous_to_ptr: expected a numpy.ndarray, got " + type(array).__name__)
    array = _np.ascontiguousarray(array)
    return array.ctypes.data, array


def bytes_to_ptr(data):
    if isinstance(data, bytes):
        return _ct.cast(_ct.c_char_p(data), _ct.c_void_p).value or 0
    view = memoryview(data)
    if view.readonly:
        raise TypeError("acl.util.bytes_to_ptr: read-only buffer other than bytes")
    return _ct.addressof(_ct.c_char.from_buffer(view)) if view.nbytes else 0


def ptr_to_bytes(ptr, size):
    if not ptr:
        raise ValueError("acl.util.ptr_to_bytes: null pointer")
    return _ct.string_at(ptr, size)


def ptr_to_numpy(ptr, shape, npy_type):
    if not ptr:
        raise ValueError("acl.util.ptr_to_numpy: null pointer")
    dt = _dtype(npy_type)
    shape = tuple(int(d) for d in shape)
    count = 1
    for d in shape:
        if d < 0:
            raise ValueError(f"acl.util.ptr_to_numpy: negative dim in shape {shape}")
        count *= d
    buf = (_ct.c_char * (count * dt.itemsize)).from_address(ptr)
    return _np.frombuffer(buf, dtype=dt, count=count).reshape(shape)


# Threads that serve host callbacks (acl.rt.subscribe_report / process_report).
_threads = {}


def start_thread(func, args):
    """Runs func(args) on a new thread; returns (thread id, ret). The id is the
    one acl.rt.subscribe_report takes (the thread's pthread id)."""
    t = _threading.Thread(target=func, args=(args,), daemon=True)
    t.start()
    _threads[t.ident] = t
    return t.ident, 0


def stop_thread(thread_id):
    """Waits for a thread from start_thread to return; ret 100000 for an unknown id."""
    t = _threads.pop(thread_id, None)
    if t is None:
        return 100000  # ACL_ERROR_INVALID_PARAM
    t.join()
    return 0


def __getattr__(name):
    # pyACL functions this module does not have: a clear error, not a bare AttributeError.
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md lists what is)")
