"""acl.rt: devices, contexts, streams, events and memory (pyACL conventions)."""
import ctypes as _ct
import itertools as _itertools
import threading as _threading

from ._lib import lib as _c, ptr as _ptr, text as _text


def set_device(device_id):
    return _c.aclrtSetDevice(device_id)


def reset_device(device_id):
    return _c.aclrtResetDevice(device_id)


def get_device():
    d = _ct.c_int32()
    ret = _c.aclrtGetDevice(_ct.byref(d))
    return d.value, ret


def get_device_count():
    n = _ct.c_uint32()
    ret = _c.aclrtGetDeviceCount(_ct.byref(n))
    return n.value, ret


def get_soc_name():
    return _text(_c.aclrtGetSocName())


def get_run_mode():
    m = _ct.c_int()
    ret = _c.aclrtGetRunMode(_ct.byref(m))
    return m.value, ret


def synchronize_device():
    return _c.aclrtSynchronizeDevice()


def set_op_execute_threads(num_threads):
    """OpenCANN extension (aclrtSetOpExecuteThreads): CPU threads per inference."""
    return _c.aclrtSetOpExecuteThreads(num_threads)


def _create(fn, *args):
    h = _ct.c_void_p()
    ret = fn(_ct.byref(h), *args)
    return _ptr(h.value), ret


def create_context(device_id):
    return _create(_c.aclrtCreateContext, device_id)


def destroy_context(context):
    return _c.aclrtDestroyContext(context or None)


def set_context(context):
    return _c.aclrtSetCurrentContext(context or None)


def get_context():
    return _create(_c.aclrtGetCurrentContext)


def create_stream():
    return _create(_c.aclrtCreateStream)


def create_stream_with_config(priority, flag):
    return _create(_c.aclrtCreateStreamWithConfig, priority, flag)


def destroy_stream(stream):
    return _c.aclrtDestroyStream(stream or None)


def synchronize_stream(stream):
    return _c.aclrtSynchronizeStream(stream or None)


def synchronize_stream_with_timeout(stream, timeout):
    return _c.aclrtSynchronizeStreamWithTimeout(stream or None, timeout)


def stream_wait_event(stream, event):
    return _c.aclrtStreamWaitEvent(stream or None, event or None)


def create_event():
    return _create(_c.aclrtCreateEvent)


def create_event_with_flag(flag):
    return _create(_c.aclrtCreateEventWithFlag, flag)


def destroy_event(event):
    return _c.aclrtDestroyEvent(event or None)


def record_event(event, stream):
    return _c.aclrtRecordEvent(event or None, stream or None)


def reset_event(event, stream):
    return _c.aclrtResetEvent(event or None, stream or None)


def synchronize_event(event):
    return _c.aclrtSynchronizeEvent(event or None)


def query_event_status(event):
    s = _ct.c_int()
    ret = _c.aclrtQueryEventStatus(event or None, _ct.byref(s))
    return s.value, ret


def event_elapsed_time(start, end):
    ms = _ct.c_float()
    ret = _c.aclrtEventElapsedTime(_ct.byref(ms), start or None, end or None)
    return ms.value, ret


def malloc(size, policy):
    return _create(_c.aclrtMalloc, size, policy)


def free(dev_ptr):
    return _c.aclrtFree(dev_ptr or None)


def malloc_host(size):
    return _create(_c.aclrtMallocHost, size)


def free_host(host_ptr):
    return _c.aclrtFreeHost(host_ptr or None)


def memcpy(dst, dest_max, src, count, kind):
    return _c.aclrtMemcpy(dst or None, dest_max, src or None, count, kind)


def memcpy_async(dst, dest_max, src, count, kind, stream):
    return _c.aclrtMemcpyAsync(dst or None, dest_max, src or None, count, kind, stream or None)


def memset(dev_ptr, max_count, value, count):
    return _c.aclrtMemset(dev_ptr or None, max_count, value, count)


def get_mem_info(attr):
    free_, total = _ct.c_size_t(), _ct.c_size_t()
    ret = _c.aclrtGetMemInfo(attr, _ct.byref(free_), _ct.byref(total))
    return free_.value, total.value, ret


# ---- host callbacks --------------------------------------------------------------
# launch_callback(fn, user_data, block_type, stream) queues fn(user_data) on the
# stream; it runs on the thread subscribed to the stream (subscribe_report with
# that thread's id: threading.get_ident(), or what acl.util.start_thread
# returned) inside its process_report call. The Python callable and its data
# are held here until the callback has run.
_pending = {}
_pending_lock = _threading.Lock()
_keys = _itertools.count(1)


@_ct.CFUNCTYPE(None, _ct.c_void_p)
def _trampoline(key):
    with _pending_lock:
        fn, data = _pending.pop(key, (None, None))
    if fn is not None:
        fn(data)


def subscribe_report(thread_id, stream):
    return _c.aclrtSubscribeReport(thread_id, stream or None)


def unsubscribe_report(thread_id, stream):
    return _c.aclrtUnSubscribeReport(thread_id, stream or None)


def process_report(timeout):
    return _c.aclrtProcessReport(timeout)


def launch_callback(fn, user_data, block_type, stream):
    if not callable(fn):
        raise TypeError("acl.rt.launch_callback: fn must be callable")
    key = next(_keys)
    with _pending_lock:
        _pending[key] = (fn, user_data)
    ret = _c.aclrtLaunchCallback(_trampoline, key, block_type, stream or None)
    if ret != 0:
        with _pending_lock:
            _pending.pop(key, None)
    return ret


def __getattr__(name):
    # pyACL functions this module does not have: a clear error, not a bare AttributeError.
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md lists what is)")
