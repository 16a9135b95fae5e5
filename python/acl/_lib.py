"""Finds libascendcl.so and declares the C signatures the Python API calls.

Search order: $OPENCANN_ASCENDCL_LIB (a file path); libascendcl.so next to this
package (an installed copy); the build folder of the source tree this package
sits in ($OC_BUILD_DIR, else <repo>/build); the dynamic loader's path
(LD_LIBRARY_PATH, ldconfig)."""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


class LibraryNotFound(ImportError):
    pass


def _candidates():
    env = os.environ.get("OPENCANN_ASCENDCL_LIB")
    if env:
        yield env
        return
    yield os.path.join(_HERE, "libascendcl.so")
    repo = os.path.dirname(os.path.dirname(_HERE))
    yield os.path.join(os.environ.get("OC_BUILD_DIR", os.path.join(repo, "build")), "libascendcl.so")
    found = ctypes.util.find_library("ascendcl")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise LibraryNotFound("acl: libascendcl.so not found; set OPENCANN_ASCENDCL_LIB to its path (tried: " +
                          ", ".join(tried) + ")")


lib, path = _load()

P = ctypes.c_void_p
SZ = ctypes.c_size_t
I32 = ctypes.c_int32
U32 = ctypes.c_uint32
I64 = ctypes.c_int64
U64 = ctypes.c_uint64
STR = ctypes.c_char_p
ERR = ctypes.c_int  # aclError


class IODims(ctypes.Structure):  # aclmdlIODims
    _fields_ = [("name", ctypes.c_char * 128), ("dimCount", SZ), ("dims", I64 * 128)]


class Batch(ctypes.Structure):  # aclmdlBatch
    _fields_ = [("batchCount", SZ), ("batch", U64 * 128)]


class HW(ctypes.Structure):  # aclmdlHW
    _fields_ = [("hwCount", SZ), ("hw", (U64 * 2) * 128)]


# name: (restype, argtypes)
_SIGNATURES = {
    "aclInit": (ERR, [STR]),
    "aclFinalize": (ERR, []),
    "aclrtGetVersion": (ERR, [ctypes.POINTER(I32)] * 3),
    "aclGetRecentErrMsg": (STR, []),
    "aclCreateDataBuffer": (P, [P, SZ]),
    "aclDestroyDataBuffer": (ERR, [P]),
    "aclUpdateDataBuffer": (ERR, [P, P, SZ]),
    "aclGetDataBufferAddr": (P, [P]),
    "aclGetDataBufferSize": (U32, [P]),
    "aclGetDataBufferSizeV2": (SZ, [P]),
    "aclDataTypeSize": (SZ, [ctypes.c_int]),
    "aclCreateTensorDesc": (P, [ctypes.c_int, ctypes.c_int, ctypes.POINTER(I64), ctypes.c_int]),
    "aclDestroyTensorDesc": (None, [P]),
    "aclGetTensorDescType": (ctypes.c_int, [P]),
    "aclGetTensorDescFormat": (ctypes.c_int, [P]),
    "aclGetTensorDescSize": (SZ, [P]),
    "aclGetTensorDescElementCount": (SZ, [P]),
    "aclGetTensorDescNumDims": (SZ, [P]),
    "aclGetTensorDescDimV2": (ERR, [P, SZ, ctypes.POINTER(I64)]),
    "aclSetTensorDescName": (None, [P, STR]),
    "aclGetTensorDescName": (STR, [P]),
    "aclFloat16ToFloat": (ctypes.c_float, [ctypes.c_uint16]),
    "aclFloatToFloat16": (ctypes.c_uint16, [ctypes.c_float]),
    "aclSetTensorConst": (ERR, [P, P, SZ]),
    "aclSetTensorPlaceMent": (ERR, [P, ctypes.c_int]),
    # profiling
    "aclprofInit": (ERR, [STR, SZ]),
    "aclprofFinalize": (ERR, []),
    "aclprofCreateConfig": (P, [ctypes.POINTER(U32), U32, ctypes.c_int, P, U64]),
    "aclprofDestroyConfig": (ERR, [P]),
    "aclprofStart": (ERR, [P]),
    "aclprofStop": (ERR, [P]),
    # single operators
    "aclopCreateAttr": (P, []),
    "aclopDestroyAttr": (None, [P]),
    "aclopSetAttrBool": (ERR, [P, STR, ctypes.c_uint8]),
    "aclopSetAttrInt": (ERR, [P, STR, I64]),
    "aclopSetAttrFloat": (ERR, [P, STR, ctypes.c_float]),
    "aclopSetAttrString": (ERR, [P, STR, STR]),
    "aclopSetAttrDataType": (ERR, [P, STR, ctypes.c_int]),
    "aclopSetAttrListBool": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(ctypes.c_uint8)]),
    "aclopSetAttrListInt": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(I64)]),
    "aclopSetAttrListFloat": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]),
    "aclopSetAttrListString": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(STR)]),
    "aclopSetAttrListDataType": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
    "aclopSetAttrListListInt": (ERR, [P, STR, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(ctypes.POINTER(I64))]),
    "aclopExecuteV2": (ERR, [STR, ctypes.c_int, ctypes.POINTER(P), ctypes.POINTER(P), ctypes.c_int,
                             ctypes.POINTER(P), ctypes.POINTER(P), P, P]),
    "aclopExecute": (ERR, [STR, ctypes.c_int, ctypes.POINTER(P), ctypes.POINTER(P), ctypes.c_int,
                           ctypes.POINTER(P), ctypes.POINTER(P), P, P]),
    "aclopCompile": (ERR, [STR, ctypes.c_int, ctypes.POINTER(P), ctypes.c_int, ctypes.POINTER(P), P,
                           ctypes.c_int, ctypes.c_int, STR]),
    "aclopSetCompileFlag": (ERR, [ctypes.c_int]),
    "aclopCreateHandle": (ERR, [STR, ctypes.c_int, ctypes.POINTER(P), ctypes.c_int, ctypes.POINTER(P), P,
                                ctypes.POINTER(P)]),
    "aclopDestroyHandle": (None, [P]),
    "aclopExecWithHandle": (ERR, [P, ctypes.c_int, ctypes.POINTER(P), ctypes.c_int, ctypes.POINTER(P), P]),
    "aclopSetModelDir": (ERR, [STR]),
    "aclopLoad": (ERR, [P, SZ]),
    # runtime
    "aclrtSetDevice": (ERR, [I32]),
    "aclrtResetDevice": (ERR, [I32]),
    "aclrtGetDevice": (ERR, [ctypes.POINTER(I32)]),
    "aclrtGetDeviceCount": (ERR, [ctypes.POINTER(U32)]),
    "aclrtGetSocName": (STR, []),
    "aclrtGetRunMode": (ERR, [ctypes.POINTER(ctypes.c_int)]),
    "aclrtSynchronizeDevice": (ERR, []),
    "aclrtCreateContext": (ERR, [ctypes.POINTER(P), I32]),
    "aclrtDestroyContext": (ERR, [P]),
    "aclrtSetCurrentContext": (ERR, [P]),
    "aclrtGetCurrentContext": (ERR, [ctypes.POINTER(P)]),
    "aclrtCreateStream": (ERR, [ctypes.POINTER(P)]),
    "aclrtCreateStreamWithConfig": (ERR, [ctypes.POINTER(P), U32, U32]),
    "aclrtCreateEventWithFlag": (ERR, [ctypes.POINTER(P), U32]),
    "aclrtSubscribeReport": (ERR, [U64, P]),
    "aclrtUnSubscribeReport": (ERR, [U64, P]),
    "aclrtLaunchCallback": (ERR, [ctypes.CFUNCTYPE(None, P), P, ctypes.c_int, P]),
    "aclrtProcessReport": (ERR, [I32]),
    "aclrtDestroyStream": (ERR, [P]),
    "aclrtSynchronizeStream": (ERR, [P]),
    "aclrtSynchronizeStreamWithTimeout": (ERR, [P, I32]),
    "aclrtStreamWaitEvent": (ERR, [P, P]),
    "aclrtCreateEvent": (ERR, [ctypes.POINTER(P)]),
    "aclrtDestroyEvent": (ERR, [P]),
    "aclrtRecordEvent": (ERR, [P, P]),
    "aclrtResetEvent": (ERR, [P, P]),
    "aclrtSynchronizeEvent": (ERR, [P]),
    "aclrtQueryEventStatus": (ERR, [P, ctypes.POINTER(ctypes.c_int)]),
    "aclrtEventElapsedTime": (ERR, [ctypes.POINTER(ctypes.c_float), P, P]),
    "aclrtMalloc": (ERR, [ctypes.POINTER(P), SZ, ctypes.c_int]),
    "aclrtFree": (ERR, [P]),
    "aclrtMallocHost": (ERR, [ctypes.POINTER(P), SZ]),
    "aclrtFreeHost": (ERR, [P]),
    "aclrtMemcpy": (ERR, [P, SZ, P, SZ, ctypes.c_int]),
    "aclrtMemcpyAsync": (ERR, [P, SZ, P, SZ, ctypes.c_int, P]),
    "aclrtMemset": (ERR, [P, SZ, I32, SZ]),
    "aclrtGetMemInfo": (ERR, [ctypes.c_int, ctypes.POINTER(SZ), ctypes.POINTER(SZ)]),
    "aclrtSetOpExecuteThreads": (ERR, [U32]),
    # models
    "aclmdlLoadFromFile": (ERR, [STR, ctypes.POINTER(U32)]),
    "aclmdlLoadFromMem": (ERR, [P, SZ, ctypes.POINTER(U32)]),
    "aclmdlLoadFromFileWithMem": (ERR, [STR, ctypes.POINTER(U32), P, SZ, P, SZ]),
    "aclmdlLoadFromMemWithMem": (ERR, [P, SZ, ctypes.POINTER(U32), P, SZ, P, SZ]),
    "aclmdlQuerySize": (ERR, [STR, ctypes.POINTER(SZ), ctypes.POINTER(SZ)]),
    "aclmdlQuerySizeFromMem": (ERR, [P, SZ, ctypes.POINTER(SZ), ctypes.POINTER(SZ)]),
    "aclmdlUnload": (ERR, [U32]),
    "aclmdlCreateDesc": (P, []),
    "aclmdlDestroyDesc": (ERR, [P]),
    "aclmdlGetDesc": (ERR, [P, U32]),
    "aclmdlGetNumInputs": (SZ, [P]),
    "aclmdlGetNumOutputs": (SZ, [P]),
    "aclmdlGetInputSizeByIndex": (SZ, [P, SZ]),
    "aclmdlGetOutputSizeByIndex": (SZ, [P, SZ]),
    "aclmdlGetInputDims": (ERR, [P, SZ, ctypes.POINTER(IODims)]),
    "aclmdlGetOutputDims": (ERR, [P, SZ, ctypes.POINTER(IODims)]),
    "aclmdlGetInputDimsV2": (ERR, [P, SZ, ctypes.POINTER(IODims)]),
    "aclmdlGetCurOutputDims": (ERR, [P, SZ, ctypes.POINTER(IODims)]),
    "aclmdlGetDynamicBatch": (ERR, [P, ctypes.POINTER(Batch)]),
    "aclmdlGetDynamicHW": (ERR, [P, SZ, ctypes.POINTER(HW)]),
    "aclmdlSetDynamicBatchSize": (ERR, [U32, P, SZ, U64]),
    "aclmdlSetDynamicHWSize": (ERR, [U32, P, SZ, U64, U64]),
    "aclmdlSetInputDynamicDims": (ERR, [U32, P, SZ, ctypes.POINTER(IODims)]),
    "aclmdlGetInputNameByIndex": (STR, [P, SZ]),
    "aclmdlGetOutputNameByIndex": (STR, [P, SZ]),
    "aclmdlGetInputFormat": (ctypes.c_int, [P, SZ]),
    "aclmdlGetOutputFormat": (ctypes.c_int, [P, SZ]),
    "aclmdlGetInputDataType": (ctypes.c_int, [P, SZ]),
    "aclmdlGetOutputDataType": (ctypes.c_int, [P, SZ]),
    "aclmdlGetInputIndexByName": (ERR, [P, STR, ctypes.POINTER(SZ)]),
    "aclmdlGetOutputIndexByName": (ERR, [P, STR, ctypes.POINTER(SZ)]),
    "aclmdlCreateDataset": (P, []),
    "aclmdlDestroyDataset": (ERR, [P]),
    "aclmdlAddDatasetBuffer": (ERR, [P, P]),
    "aclmdlGetDatasetNumBuffers": (SZ, [P]),
    "aclmdlGetDatasetBuffer": (P, [P, SZ]),
    "aclmdlSetDatasetTensorDesc": (ERR, [P, P, SZ]),
    "aclmdlGetDatasetTensorDesc": (P, [P, SZ]),
    "aclmdlExecute": (ERR, [U32, P, P]),
    "aclmdlExecuteAsync": (ERR, [U32, P, P, P]),
}

for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)  # a missing symbol fails the import, naming it
    _f.restype = _res
    _f.argtypes = _args


def ptr(value):
    """A C pointer result as pyACL gives it: an int, 0 for NULL."""
    return value or 0


def text(value):
    return value.decode("utf-8", "replace") if value else ""


def cstr(s):
    return s.encode("utf-8") if isinstance(s, str) else s
