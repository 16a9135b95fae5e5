"""acl.prof: the profiling API (pyACL conventions) — aclprofInit ... aclprofFinalize;
the reports (op summary, timeline, API statistics) are described in docs/profiling.md."""
import ctypes as _ct

from ._lib import lib as _c, ptr as _ptr, cstr as _cstr


def init(profiler_result_path):
    path = _cstr(profiler_result_path)
    return _c.aclprofInit(path, len(path) if path else 0)


def finalize():
    return _c.aclprofFinalize()


def create_config(device_list, aicore_metrics, aicore_events, data_type_config):
    """aicore_events is reserved (pass 0), as in pyACL."""
    ids = list(device_list or [])
    arr = (_ct.c_uint32 * max(len(ids), 1))(*ids)
    return _ptr(_c.aclprofCreateConfig(arr if ids else None, len(ids), aicore_metrics, aicore_events or None,
                                       data_type_config))


def destroy_config(config):
    return _c.aclprofDestroyConfig(config or None)


def start(config):
    return _c.aclprofStart(config or None)


def stop(config):
    return _c.aclprofStop(config or None)


def __getattr__(name):
    # pyACL functions this module does not have: a clear error, not a bare AttributeError.
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md lists what is)")
