"""acl.op: single-operator execution (pyACL conventions). Descriptions and
buffers are passed as Python lists of handles; see docs/single_op.md for the
operator types."""
import ctypes as _ct

from ._lib import lib as _c, ptr as _ptr, cstr as _cstr


def _handles(values):
    values = list(values or [])
    return (_ct.c_void_p * max(len(values), 1))(*[v or None for v in values]), len(values)


def create_attr():
    return _ptr(_c.aclopCreateAttr())


def destroy_attr(attr):
    _c.aclopDestroyAttr(attr or None)


def set_attr_bool(attr, name, value):
    return _c.aclopSetAttrBool(attr or None, _cstr(name), 1 if value else 0)


def set_attr_int(attr, name, value):
    return _c.aclopSetAttrInt(attr or None, _cstr(name), value)


def set_attr_float(attr, name, value):
    return _c.aclopSetAttrFloat(attr or None, _cstr(name), value)


def set_attr_string(attr, name, value):
    return _c.aclopSetAttrString(attr or None, _cstr(name), _cstr(value))


def set_attr_data_type(attr, name, value):
    return _c.aclopSetAttrDataType(attr or None, _cstr(name), value)


def _list(ctype, values):
    values = list(values)
    return (ctype * max(len(values), 1))(*values), len(values)


def set_attr_list_bool(attr, name, values):
    arr, n = _list(_ct.c_uint8, [1 if v else 0 for v in values])
    return _c.aclopSetAttrListBool(attr or None, _cstr(name), n, arr)


def set_attr_list_int(attr, name, values):
    arr, n = _list(_ct.c_int64, values)
    return _c.aclopSetAttrListInt(attr or None, _cstr(name), n, arr)


def set_attr_list_float(attr, name, values):
    arr, n = _list(_ct.c_float, values)
    return _c.aclopSetAttrListFloat(attr or None, _cstr(name), n, arr)


def set_attr_list_string(attr, name, values):
    arr, n = _list(_ct.c_char_p, [_cstr(v) for v in values])
    return _c.aclopSetAttrListString(attr or None, _cstr(name), n, arr)


def set_attr_list_data_type(attr, name, values):
    arr, n = _list(_ct.c_int, values)
    return _c.aclopSetAttrListDataType(attr or None, _cstr(name), n, arr)


def set_attr_list_list_int(attr, name, values):
    lists = [(_ct.c_int64 * max(len(v), 1))(*v) for v in values]
    counts, n = _list(_ct.c_int, [len(v) for v in values])
    ptrs = (_ct.POINTER(_ct.c_int64) * max(n, 1))(*[_ct.cast(a, _ct.POINTER(_ct.c_int64)) for a in lists])
    return _c.aclopSetAttrListListInt(attr or None, _cstr(name), n, counts, ptrs)


_ACL_ERROR_INVALID_PARAM = 100000


def _counts_differ(input_desc, inputs, output_desc, outputs):
    return len(list(input_desc or [])) != len(list(inputs or [])) or \
        len(list(output_desc or [])) != len(list(outputs or []))


def execute_v2(op_type, input_desc, inputs, output_desc, outputs, attr, stream):
    if _counts_differ(input_desc, inputs, output_desc, outputs):
        return _ACL_ERROR_INVALID_PARAM  # the C call would read past the shorter list
    ind, ni = _handles(input_desc)
    inb, _ = _handles(inputs)
    outd, no = _handles(output_desc)
    outb, _ = _handles(outputs)
    return _c.aclopExecuteV2(_cstr(op_type), ni, ind, inb, no, outd, outb, attr or None, stream or None)


def execute(op_type, input_desc, inputs, output_desc, outputs, attr, stream):
    if _counts_differ(input_desc, inputs, output_desc, outputs):
        return _ACL_ERROR_INVALID_PARAM
    ind, ni = _handles(input_desc)
    inb, _ = _handles(inputs)
    outd, no = _handles(output_desc)
    outb, _ = _handles(outputs)
    return _c.aclopExecute(_cstr(op_type), ni, ind, inb, no, outd, outb, attr or None, stream or None)


def compile(op_type, input_desc, output_desc, attr, engine_type, compile_flag, op_path):  # noqa: A001 (pyACL's name)
    ind, ni = _handles(input_desc)
    outd, no = _handles(output_desc)
    return _c.aclopCompile(_cstr(op_type), ni, ind, no, outd, attr or None, engine_type, compile_flag,
                           _cstr(op_path) if op_path else None)


def set_compile_flag(flag):
    return _c.aclopSetCompileFlag(flag)


def create_handle(op_type, input_desc, output_desc, attr):
    ind, ni = _handles(input_desc)
    outd, no = _handles(output_desc)
    h = _ct.c_void_p()
    ret = _c.aclopCreateHandle(_cstr(op_type), ni, ind, no, outd, attr or None, _ct.byref(h))
    return _ptr(h.value), ret


def destroy_handle(handle):
    _c.aclopDestroyHandle(handle or None)


def exec_with_handle(handle, inputs, outputs, stream):
    inb, ni = _handles(inputs)
    outb, no = _handles(outputs)
    return _c.aclopExecWithHandle(handle or None, ni, inb, no, outb, stream or None)


def set_model_dir(model_dir):
    return _c.aclopSetModelDir(_cstr(model_dir))


def load(model, model_size):
    return _c.aclopLoad(model or None, model_size)


def __getattr__(name):
    # pyACL functions this module does not have: a clear error, not a bare AttributeError.
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md lists what is)")
