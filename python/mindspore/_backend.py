"""The training engine below the package: libms_backend.so through ctypes.

Search order for the library: $OPENCANN_MS_BACKEND_LIB (a file path);
libms_backend.so next to this package; the build folder of the source tree this
package sits in ($OC_BUILD_DIR, else <repo>/build); the dynamic loader's path.

Everything the engine keeps between calls lives in one process-wide tensor
store (parameters, optimiser state, batch-norm statistics, step counters), keyed
by names this package chooses; programs are ONNX graphs compiled against it."""
import ctypes
import ctypes.util
import json
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))


class BackendError(RuntimeError):
    """An error reported by the engine; `code` is its status code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _candidates():
    env = os.environ.get("OPENCANN_MS_BACKEND_LIB")
    if env:
        yield env
        return
    yield os.path.join(_HERE, "libms_backend.so")
    repo = os.path.dirname(os.path.dirname(_HERE))
    yield os.path.join(os.environ.get("OC_BUILD_DIR", os.path.join(repo, "build")), "libms_backend.so")
    found = ctypes.util.find_library("ms_backend")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("mindspore: libms_backend.so not found; build it (make build) or set "
                      "OPENCANN_MS_BACKEND_LIB to its path (tried: " + ", ".join(tried) + ")")


_lib = _load()
_P, _SZ, _I, _I64, _STR = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p
_PI64 = ctypes.POINTER(_I64)
_PI = ctypes.POINTER(_I)
for _name, _res, _args in [
    ("ocms_last_error", _STR, []),
    ("ocms_abi_version", _I, []),
    ("ocms_set_num_threads", _I, [_I]),
    ("ocms_store_new", _P, []),
    ("ocms_store_free", None, [_P]),
    ("ocms_store_set", _I, [_P, _STR, _I, _PI64, _I, _P]),
    ("ocms_store_info", _I, [_P, _STR, _PI, _PI64, _PI]),
    ("ocms_store_get", _I, [_P, _STR, _P, _SZ]),
    ("ocms_store_remove", _I, [_P, _STR]),
    ("ocms_compile", _I, [_P, _P, _SZ, _STR, ctypes.POINTER(_P)]),
    ("ocms_compile_mindir", _I, [_P, _P, _SZ, _STR, ctypes.POINTER(_P)]),
    ("ocms_program_free", None, [_P]),
    ("ocms_program_count", _SZ, [_P, _I]),
    ("ocms_program_io", _I, [_P, _I, _SZ, _STR, _SZ, _PI, _PI64, _PI]),
    ("ocms_program_run", _I, [_P, ctypes.POINTER(_P), _SZ, ctypes.POINTER(_P), _SZ, ctypes.c_float]),
    ("ocms_infer", _I, [_P, _SZ, _STR, _SZ, ctypes.POINTER(_SZ)]),
]:
    _fn = getattr(_lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args
if _lib.ocms_abi_version() != 1:
    raise ImportError("mindspore: libms_backend.so has interface version %d, this package needs 1"
                      % _lib.ocms_abi_version())

# ONNX element type codes <-> numpy.
_NP_OF_CODE = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
               9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_CODE_OF_NP = {np.dtype(v): k for k, v in _NP_OF_CODE.items()}


def code_of(np_dtype):
    try:
        return _CODE_OF_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"mindspore: element type {np.dtype(np_dtype)} is not supported by the engine") from None


def np_of(code):
    try:
        return _NP_OF_CODE[code]
    except KeyError:
        raise TypeError(f"mindspore: engine element type code {code} has no numpy type here") from None


def _check(rc):
    if rc != 0:
        raise BackendError(rc, _lib.ocms_last_error().decode("utf-8", "replace"))


def set_num_threads(n):
    _check(_lib.ocms_set_num_threads(int(n)))


def _dims(shape):
    arr = (_I64 * max(len(shape), 1))(*[int(d) for d in shape])
    return arr


class Store:
    """The process-wide store of named tensors."""

    def __init__(self):
        self._h = _lib.ocms_store_new()
        if not self._h:
            raise MemoryError(_lib.ocms_last_error().decode())

    def set(self, key, array):
        a = np.asarray(array, order="C")
        _check(_lib.ocms_store_set(self._h, key.encode(), code_of(a.dtype), _dims(a.shape), a.ndim,
                                   a.ctypes.data_as(_P) if a.size else None))

    def info(self, key):
        dtype, ndim = _I(), _I(32)
        dims = (_I64 * 32)()
        _check(_lib.ocms_store_info(self._h, key.encode(), ctypes.byref(dtype), dims, ctypes.byref(ndim)))
        return np_of(dtype.value), tuple(dims[i] for i in range(ndim.value))

    def has(self, key):
        dtype, ndim = _I(), _I(0)
        return _lib.ocms_store_info(self._h, key.encode(), ctypes.byref(dtype), None, ctypes.byref(ndim)) == 0

    def get(self, key):
        dtype, shape = self.info(key)
        out = np.empty(shape, dtype)
        _check(_lib.ocms_store_get(self._h, key.encode(), out.ctypes.data_as(_P) if out.size else None, out.nbytes))
        return out

    def remove(self, key):
        if _lib is not None and self._h:
            _lib.ocms_store_remove(self._h, key.encode())


store = Store()


class Program:
    """A compiled program: feeds (numpy arrays) in, fetches out."""

    def __init__(self, model_bytes, spec, mindir=False):
        """`model_bytes`: ONNX, or with `mindir` a MindSpore MINDIR model (src/parser/mindir)."""
        h = _P()
        buf = ctypes.create_string_buffer(model_bytes, len(model_bytes)) if model_bytes else None
        compile_fn = _lib.ocms_compile_mindir if mindir else _lib.ocms_compile
        _check(compile_fn(store._h, buf, len(model_bytes) if model_bytes else 0,
                          json.dumps(spec).encode(), ctypes.byref(h)))
        self._h = h
        self.feeds = [self._io(0, i) for i in range(_lib.ocms_program_count(h, 0))]
        self.fetches = [self._io(1, i) for i in range(_lib.ocms_program_count(h, 1))]
        self._feed_ptrs = (_P * max(len(self.feeds), 1))()
        self._fetch_ptrs = (_P * max(len(self.fetches), 1))()

    def _io(self, is_fetch, i):
        name = ctypes.create_string_buffer(1024)
        dtype, ndim = _I(), _I(32)
        dims = (_I64 * 32)()
        _check(_lib.ocms_program_io(self._h, is_fetch, i, name, 1024, ctypes.byref(dtype), dims, ctypes.byref(ndim)))
        return name.value.decode(), np_of(dtype.value), tuple(dims[k] for k in range(ndim.value))

    def run(self, feeds, lr=0.0):
        if len(feeds) != len(self.feeds):
            raise ValueError(f"program takes {len(self.feeds)} inputs, got {len(feeds)}")
        keep = []
        for i, (a, (name, dtype, shape)) in enumerate(zip(feeds, self.feeds)):
            a = np.asarray(a, dtype=dtype, order="C")
            if a.shape != shape:
                raise ValueError(f"input '{name}' must have shape {shape}, got {a.shape}")
            keep.append(a)
            self._feed_ptrs[i] = a.ctypes.data
        outs = [np.empty(shape, dtype) for _, dtype, shape in self.fetches]
        for i, o in enumerate(outs):
            self._fetch_ptrs[i] = o.ctypes.data
        _check(_lib.ocms_program_run(self._h, self._feed_ptrs, len(keep), self._fetch_ptrs, len(outs),
                                     ctypes.c_float(lr)))
        return outs

    def __del__(self):
        if _lib is not None and getattr(self, "_h", None):
            _lib.ocms_program_free(self._h)
            self._h = None


def infer(model_bytes):
    """[(name, numpy dtype, shape or None)] of a model's outputs after shape inference."""
    buf = ctypes.create_string_buffer(model_bytes, len(model_bytes))
    cap = 4096
    while True:
        out = ctypes.create_string_buffer(cap)
        need = _SZ()
        rc = _lib.ocms_infer(buf, len(model_bytes), out, cap, ctypes.byref(need))
        if rc == 5 and need.value > cap:  # kOutOfRange: a longer answer
            cap = need.value
            continue
        _check(rc)
        return [(o["name"], np_of(o["dtype"]), None if o["shape"] is None else tuple(o["shape"]))
                for o in json.loads(out.value.decode())]
