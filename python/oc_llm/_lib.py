"""Finds liboc_llm.so and declares the C signatures of include/opencann/oc_llm.h.

Search order (as python/acl/_lib.py finds libascendcl.so): $OPENCANN_LLM_LIB
(a file path); liboc_llm.so next to this package (an installed copy); the
build folder of the source tree this package sits in ($OC_BUILD_DIR, else
<repo>/build); the dynamic loader's path (LD_LIBRARY_PATH, ldconfig)."""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


class LibraryNotFound(ImportError):
    pass


def _candidates():
    env = os.environ.get("OPENCANN_LLM_LIB")
    if env:
        yield env
        return
    yield os.path.join(_HERE, "liboc_llm.so")
    repo = os.path.dirname(os.path.dirname(_HERE))
    yield os.path.join(os.environ.get("OC_BUILD_DIR", os.path.join(repo, "build")), "liboc_llm.so")
    found = ctypes.util.find_library("oc_llm")
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
    raise LibraryNotFound("oc_llm: liboc_llm.so not found; set OPENCANN_LLM_LIB to its path (tried: " +
                          ", ".join(tried) + ")")


lib, path = _load()

P = ctypes.c_void_p
STR = ctypes.c_char_p
OUT = ctypes.POINTER(ctypes.c_void_p)  # char** / oc_llm_t**: read back as an address, freed with oc_llm_free

_SIGNATURES = {
    "oc_llm_open": (ctypes.c_int, [STR, OUT]),
    "oc_llm_completions": (ctypes.c_int, [P, STR, OUT]),
    "oc_llm_chat_completions": (ctypes.c_int, [P, STR, OUT]),
    "oc_llm_tokenize": (ctypes.c_int, [P, STR, OUT]),
    "oc_llm_detokenize": (ctypes.c_int, [P, STR, OUT]),
    "oc_llm_models": (ctypes.c_int, [P, OUT]),
    "oc_llm_metrics": (ctypes.c_int, [P, OUT]),
    "oc_llm_free": (None, [P]),
    "oc_llm_close": (None, [P]),
    "oc_llm_last_error": (STR, []),
}

for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)  # a missing symbol fails the import, naming it
    _f.restype = _res
    _f.argtypes = _args


def take_string(addr):
    """The text at a char* the library returned (None for NULL), released afterwards."""
    if not addr:
        return None
    try:
        return ctypes.string_at(addr).decode("utf-8", "replace")
    finally:
        lib.oc_llm_free(addr)


def last_error():
    s = lib.oc_llm_last_error()
    return s.decode("utf-8", "replace") if s else ""
