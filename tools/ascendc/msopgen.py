#!/usr/bin/env python3
"""msopgen: turns an operator description (JSON) into a custom-operator project
that builds into a package (docs/ascendc.md, "Generating a project: msopgen").

  msopgen gen -i op.json [-c ai_core-Ascend910B] [-lan cpp] [-out DIR] [-m 0|1]

op.json is a list of operators, each
  {"op": "AddCustom",
   "input_desc":  [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16", "float"]}],
   "output_desc": [{"name": "z", "param_type": "required", "format": ["ND"], "type": ["fp16", "float"]}],
   "attr": [{"name": "alpha", "param_type": "optional", "type": "float", "default_value": "0.01"}]}
The type lists of one operator go together column by column (column k is one
combination of data types); a list of one entry stands for every column.

DIR (default: the current folder) gets, per operator:
  op_host/<op>.cpp        the OpDef, InferShape, InferDataType and a tiling function
  op_host/<op>_tiling.h   the tiling data (totalLength, tileNum and the scalar attributes)
  op_kernel/<op>.cpp      the kernel, with GET_TILING_DATA and a body to fill in
and, once, CMakeLists.txt (ascendc_add_operator_package) and build.sh. <op> is the
operator's type in snake case. -m 1 adds the operators to an existing project.
"""
import argparse
import json
import math
import os
import re
import stat
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
OPENCANN_ROOT = "@OC_LIB_DIR@"
if OPENCANN_ROOT.startswith("@"):
    OPENCANN_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "build"))


class Refused(Exception):
    """A description msopgen cannot turn into a project; the message says why."""


# JSON spelling -> (ge::DataType, the C++ type a kernel uses for it).
DTYPES = {}
for names, ge, cxx in [
        (("fp16", "float16", "half"), "DT_FLOAT16", "half"),
        (("float", "fp32", "float32"), "DT_FLOAT", "float"),
        (("bf16", "bfloat16"), "DT_BF16", "bfloat16_t"),
        (("double", "fp64", "float64"), "DT_DOUBLE", "double"),
        (("int8",), "DT_INT8", "int8_t"), (("int16",), "DT_INT16", "int16_t"),
        (("int32",), "DT_INT32", "int32_t"), (("int64",), "DT_INT64", "int64_t"),
        (("uint8",), "DT_UINT8", "uint8_t"), (("uint16",), "DT_UINT16", "uint16_t"),
        (("uint32",), "DT_UINT32", "uint32_t"), (("uint64",), "DT_UINT64", "uint64_t"),
        (("bool",), "DT_BOOL", "uint8_t")]:
    for n in names:
        DTYPES[n] = (ge, cxx)

FORMATS = ["ND", "NCHW", "NHWC", "HWCN", "CHWN", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "NCDHW", "NDHWC",
           "DHWCN", "NDC1HWC0", "FRACTAL_Z_3D", "NC", "CN"]
PARAM_TYPES = {"required": "REQUIRED", "optional": "OPTIONAL"}
ATTR_TYPES = ["int", "float", "bool", "string", "list_int", "list_float"]
# Chip families with a profile here (docs/ascendc.md, "Limits checked"); the
# generated definition names the chip as CANN's AddConfig does, in lower case.
SOCS = ("Ascend910B", "Ascend910", "Ascend310P")
# Names the generated kernel, tiling data and aclnn functions use beside the parameters.
RESERVED = {"workspace", "tiling", "tiling_data", "op", "totalLength", "tileNum", "inputs", "outputs", "attrs",
            "workspaceSize", "executor", "stream"}
CXX_WORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if
inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq half""".split())
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def snake(t):
    """The kernel's and the files' name: AddCustom -> add_custom (as opp_build.py and the runtime spell it)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", t)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def spelled(values):
    return ", ".join(values)


# ---- reading the description -------------------------------------------------------------------

def read_params(op, key, descs, role):
    if descs is None:
        descs = []
    if not isinstance(descs, list):
        raise Refused(f"{op}: \"{key}\" must be a list of {role} descriptions, not {type(descs).__name__}")
    params = []
    for i, d in enumerate(descs):
        where = f"{op}: {key}[{i}]"
        if not isinstance(d, dict):
            raise Refused(f"{where} must be an object with \"name\", \"param_type\", \"format\" and \"type\"")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise Refused(f"{where} has no \"name\" (the {role}'s name, a C++ identifier)")
        where = f"{op}: {key}[{i}] '{name}'"
        pt = d.get("param_type", "required")
        if pt == "dynamic":
            raise Refused(f"{where}: param_type \"dynamic\" (a list of tensors) is not supported yet; "
                          f"expected \"required\" or \"optional\"")
        if pt not in PARAM_TYPES:
            raise Refused(f"{where}: unknown param_type {json.dumps(pt)}; expected \"required\" or \"optional\"")
        if role == "output" and pt != "required":
            raise Refused(f"{where}: an output must be \"required\", not {json.dumps(pt)}")
        types = d.get("type")
        if isinstance(types, str):
            types = [types]
        if not isinstance(types, list) or not types:
            raise Refused(f"{where} needs \"type\": a list of data types such as [\"fp16\", \"float\"]")
        ge_types = []
        for t in types:
            key_t = t.lower() if isinstance(t, str) else t
            if key_t not in DTYPES:
                raise Refused(f"{where}: unknown type {json.dumps(t)}; expected one of {spelled(DTYPES)}")
            ge_types.append(DTYPES[key_t])
        formats = d.get("format", ["ND"])
        if isinstance(formats, str):
            formats = [formats]
        if not isinstance(formats, list) or not formats:
            raise Refused(f"{where}: \"format\" must be a list of formats such as [\"ND\"]")
        for f in formats:
            if not isinstance(f, str) or f.upper() not in FORMATS:
                raise Refused(f"{where}: unknown format {json.dumps(f)}; expected one of {spelled(FORMATS)}")
        formats = [f.upper() for f in formats]
        if len(formats) == 1:
            formats = formats * len(ge_types)
        elif len(ge_types) == 1:
            ge_types = ge_types * len(formats)
        if len(formats) != len(ge_types):
            raise Refused(f"{where} lists {len(ge_types)} types and {len(formats)} formats; they go together one "
                          f"to one (or one of them has a single entry)")
        params.append({"name": name, "param": PARAM_TYPES[pt], "types": ge_types, "formats": formats})
    return params


def attr_default(where, kind, v):
    """The C++ argument of the default value, checked against the attribute's type."""
    def bad(expected):
        return Refused(f"{where}: default_value {json.dumps(v)} is not {expected}")

    def number(x, integral):
        if isinstance(x, bool):
            raise bad("a number")
        if isinstance(x, str):
            try:
                x = int(x.strip(), 0) if integral else float(x.strip())
            except ValueError:
                raise bad("an integer" if integral else "a number") from None
        if integral:
            if isinstance(x, float):
                if not x.is_integer():
                    raise bad("an integer")
                x = int(x)
            if not isinstance(x, int):
                raise bad("an integer")
            return str(x)
        if not isinstance(x, (int, float)) or not math.isfinite(float(x)):
            raise bad("a finite number")
        return repr(float(x))

    def items(x):
        if isinstance(x, str):
            x = x.strip().strip("[]")
            return [p for p in (s.strip() for s in x.split(",")) if p]
        if isinstance(x, list):
            return x
        raise bad("a list")

    if kind == "int":
        return number(v, True)
    if kind == "float":
        return number(v, False)
    if kind == "bool":
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower()
        if v in (0, 1):
            return "true" if v else "false"
        raise bad("true or false")
    if kind == "string":
        if not isinstance(v, str):
            raise bad("a string")
        return json.dumps(v)  # a valid C string literal for printable text
    integral = kind == "list_int"
    values = []
    for x in items(v):
        try:
            values.append(number(x, integral) + ("" if integral else "f"))
        except Refused:
            raise Refused(f"{where}: default_value {json.dumps(v)} is not a list of "
                          f"{'integers' if integral else 'numbers'} (item {json.dumps(x)})") from None
    return "{" + ", ".join(values) + "}"


def read_attrs(op, attrs):
    if attrs is None:
        attrs = []
    if not isinstance(attrs, list):
        raise Refused(f"{op}: \"attr\" must be a list of attribute descriptions, not {type(attrs).__name__}")
    out = []
    for i, a in enumerate(attrs):
        where = f"{op}: attr[{i}]"
        if not isinstance(a, dict):
            raise Refused(f"{where} must be an object with \"name\", \"param_type\", \"type\" and \"default_value\"")
        name = a.get("name")
        if not isinstance(name, str) or not name:
            raise Refused(f"{where} has no \"name\" (the attribute's name, a C++ identifier)")
        where = f"{op}: attr[{i}] '{name}'"
        kind = a.get("type")
        if kind not in ATTR_TYPES:
            raise Refused(f"{where}: unknown type {json.dumps(kind)}; expected one of {spelled(ATTR_TYPES)}")
        pt = a.get("param_type", "required")
        if pt not in PARAM_TYPES:
            raise Refused(f"{where}: unknown param_type {json.dumps(pt)}; expected \"required\" or \"optional\"")
        default = None
        if pt == "optional":
            if "default_value" not in a:
                raise Refused(f"{where} is optional and needs a \"default_value\" (a {kind})")
            default = attr_default(where, kind, a["default_value"])
        out.append({"name": name, "kind": kind, "param": PARAM_TYPES[pt], "default": default})
    return out


def read_op(i, d):
    if not isinstance(d, dict):
        raise Refused(f"operator #{i + 1} must be an object such as {{\"op\": \"AddCustom\", \"input_desc\": [...], "
                      f"\"output_desc\": [...]}}, not {type(d).__name__}")
    op = d.get("op")
    if op is None:
        raise Refused(f"operator #{i + 1} has no \"op\" (its type in upper camel case, e.g. \"AddCustom\")")
    if not isinstance(op, str) or not re.fullmatch(r"[A-Z][A-Za-z0-9]*", op):
        raise Refused(f"operator #{i + 1}: \"op\" {json.dumps(op)} is not an operator type in upper camel case "
                      f"(letters and digits, starting with a capital, e.g. \"AddCustom\")")
    lang = d.get("language", "cpp")
    if lang != "cpp":
        raise Refused(f"{op}: \"language\" {json.dumps(lang)} is not supported: only \"cpp\" (Ascend C)")
    inputs = read_params(op, "input_desc", d.get("input_desc"), "input")
    if not d.get("output_desc"):
        raise Refused(f"{op}: \"output_desc\" is missing or empty; an operator needs at least one output")
    outputs = read_params(op, "output_desc", d.get("output_desc"), "output")
    attrs = read_attrs(op, d.get("attr"))
    seen = {}
    for role, items in (("input_desc", inputs), ("output_desc", outputs), ("attr", attrs)):
        for p in items:
            n = p["name"]
            if not IDENT.match(n) or n in CXX_WORDS:
                raise Refused(f"{op}: {role} name {json.dumps(n)} is not usable as a C++ parameter name")
            if n in RESERVED:
                raise Refused(f"{op}: {role} name {json.dumps(n)} is reserved (the generated code uses it)")
            if n in seen:
                raise Refused(f"{op}: duplicate name {json.dumps(n)} (in {seen[n]} and {role}); inputs, outputs and "
                              f"attributes need distinct names")
            seen[n] = role
    columns = {len(p["types"]) for p in inputs + outputs}
    if len(columns - {1}) > 1:
        lists = ", ".join(f"'{p['name']}' {len(p['types'])}" for p in inputs + outputs)
        raise Refused(f"{op}: the type lists have different lengths ({lists}); column k of every list is one "
                      f"combination, so they need the same length (or a single entry)")
    n = max(columns)
    for p in inputs + outputs:
        if len(p["types"]) == 1 and n > 1:
            p["types"], p["formats"] = p["types"] * n, p["formats"] * n
    return {"type": op, "snake": snake(op), "inputs": inputs, "outputs": outputs, "attrs": attrs}


def read_description(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Refused(f"cannot read the operator description: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise Refused(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(doc, list):
        raise Refused(f"expected a list of operator descriptions ([{{\"op\": ...}}, ...]), not a JSON "
                      f"{ {dict: 'object', str: 'string'}.get(type(doc), type(doc).__name__) }")
    if not doc:
        raise Refused("the list of operators is empty")
    ops, types = [], {}
    for i, d in enumerate(doc):
        op = read_op(i, d)
        if op["type"] in types:
            raise Refused(f"operator #{i + 1}: duplicate op {json.dumps(op['type'])} (also operator "
                          f"#{types[op['type']] + 1})")
        types[op["type"]] = i
        ops.append(op)
    return ops


# ---- writing the project -----------------------------------------------------------------------

def tiling_header(op):
    t = op["type"]
    fields = ["  TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements of the reference tensor",
              "  TILING_DATA_FIELD_DEF(uint32_t, tileNum);      // tiles per block"]
    for a in op["attrs"]:
        c = {"float": "float", "int": "int64_t", "bool": "uint8_t"}.get(a["kind"])
        if c:
            fields.append(f"  TILING_DATA_FIELD_DEF({c}, {a['name']});  // attribute {a['name']}")
    return (f"/* {t}'s tiling data: what the host's tiling function tells each block.\n"
            f" * Generated by msopgen; add the fields your kernel needs. */\n"
            f"#pragma once\n#include \"register/tilingdata_base.h\"\n\n"
            f"namespace optiling {{\nBEGIN_TILING_DATA_DEF({t}TilingData)\n" + "\n".join(fields) +
            f"\nEND_TILING_DATA_DEF;\n\nREGISTER_TILING_DATA_CLASS({t}, {t}TilingData)\n}}  // namespace optiling\n")


def reference_input(op):
    """The input whose shape sizes the work: the first required one (else the first)."""
    for i, p in enumerate(op["inputs"]):
        if p["param"] == "REQUIRED":
            return i
    return 0 if op["inputs"] else None


def host_source(op, soc):
    t, s = op["type"], op["snake"]
    ref = reference_input(op)
    attr_lines = []
    for i, a in enumerate(op["attrs"]):
        getter = {"float": "GetFloat", "int": "GetInt", "bool": "GetBool"}.get(a["kind"])
        if getter:
            attr_lines.append(f"  if (const auto* v = attrs->{getter}({i})) tiling.set_{a['name']}(*v);")
        else:
            attr_lines.append(f"  // attribute {a['name']} ({a['kind']}, index {i}): read it from attrs if the "
                              f"tiling needs it")
    attr_block = ("  const gert::RuntimeAttrs* attrs = context->GetAttrs();\n" + "\n".join(attr_lines) + "\n"
                  if attr_lines else "")
    if ref is None:
        size_src = "context->GetOutputShape(0)"
        shape_body = ("  // No inputs: the caller's output shapes stay as they are. Set them here if the\n"
                      "  // attributes decide them.\n  (void)context;\n")
        dtype_body = "".join(f"  context->SetOutputDataType({k}, ge::{o['types'][0][0]});\n"
                             for k, o in enumerate(op["outputs"]))
    else:
        size_src = f"context->GetInputShape({ref})"
        shape_body = (f"  // Every output takes the shape of input '{op['inputs'][ref]['name']}'; change this for an\n"
                      f"  // operator that reshapes, reduces or broadcasts.\n"
                      f"  const gert::Shape* in = context->GetInputShape({ref});\n"
                      f"  if (in == nullptr) return GRAPH_FAILED;\n" +
                      "".join(f"  *context->GetOutputShape({k}) = *in;\n" for k in range(len(op["outputs"]))))
        rin = op["inputs"][ref]
        dtype_body = f"  const DataType in = context->GetInputDataType({ref});\n"
        for k, o in enumerate(op["outputs"]):
            if [g for g, _ in o["types"]] == [g for g, _ in rin["types"]]:
                dtype_body += f"  context->SetOutputDataType({k}, in);  // '{o['name']}' has the types of " \
                              f"'{rin['name']}'\n"
            else:
                pairs = ", ".join(dict.fromkeys(f"{{{a[0]}, {b[0]}}}" for a, b in zip(rin["types"], o["types"])))
                dtype_body += (f"  // '{o['name']}': the type in the (first) column of '{rin['name']}''s type.\n"
                               f"  static const std::pair<DataType, DataType> column{k}[] = {{{pairs}}};\n"
                               f"  for (const auto& c : column{k})\n"
                               f"    if (c.first == in) {{\n"
                               f"      context->SetOutputDataType({k}, c.second);\n"
                               f"      break;\n    }}\n")
    defs = []
    for role, items in (("Input", op["inputs"]), ("Output", op["outputs"])):
        for p in items:
            dts = ", ".join(f"ge::{g}" for g, _ in p["types"])
            fms = ", ".join(f"ge::FORMAT_{f}" for f in p["formats"])
            defs.append(f"    this->{role}(\"{p['name']}\")\n        .ParamType({p['param']})\n"
                        f"        .DataType({{{dts}}})\n        .Format({{{fms}}});")
    for a in op["attrs"]:
        kind = {"int": "Int", "float": "Float", "bool": "Bool", "string": "String", "list_int": "ListInt",
                "list_float": "ListFloat"}[a["kind"]]
        defs.append(f"    this->Attr(\"{a['name']}\").AttrType({a['param']}).{kind}({a['default'] or ''});")
    return f"""/* {t}'s host side: the tiling function, shape and type inference, and the
 * operator definition (OpDef + OP_ADD). Generated by msopgen; the definition
 * follows the JSON description, the tiling is a starting point to adapt. */
#include <utility>

#include "{s}_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {{
constexpr uint32_t BLOCK_DIM = 8;  // blocks the kernel runs on
constexpr uint32_t TILE_NUM = 8;   // tiles per block

static ge::graphStatus TilingFunc(gert::TilingContext* context) {{
  {t}TilingData tiling;
  const gert::StorageShape* shape = {size_src};
  if (shape == nullptr) return ge::GRAPH_FAILED;
  uint32_t totalLength = static_cast<uint32_t>(shape->GetOriginShape().GetShapeSize());
  // Size the tiles for the Unified Buffer here if the kernel needs it:
  //   platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetCoreMemSize(
  //       platform_ascendc::CoreMemType::UB, ubSize);
  context->SetBlockDim(BLOCK_DIM);
  tiling.set_totalLength(totalLength);
  tiling.set_tileNum(TILE_NUM);
{attr_block}  tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
  size_t* workspace = context->GetWorkspaceSizes(1);
  workspace[0] = 0;  // bytes of global scratch memory the kernel needs
  return ge::GRAPH_SUCCESS;
}}
}}  // namespace optiling

namespace ge {{
static graphStatus InferShape(gert::InferShapeContext* context) {{
{shape_body}  return GRAPH_SUCCESS;
}}

static graphStatus InferDataType(gert::InferDataTypeContext* context) {{
{dtype_body}  return GRAPH_SUCCESS;
}}
}}  // namespace ge

namespace ops {{
class {t} : public OpDef {{
 public:
  explicit {t}(const char* name) : OpDef(name) {{
{chr(10).join(defs)}
    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
    this->AICore().SetTiling(optiling::TilingFunc);
    this->AICore().AddConfig("{soc.lower()}");
  }}
}};
OP_ADD({t});
}}  // namespace ops
"""


def kernel_source(op):
    t, s = op["type"], op["snake"]
    params = [p["name"] for p in op["inputs"] + op["outputs"]]
    gm_args = ", ".join(f"GM_ADDR {n}" for n in params)
    sets, members = [], []
    for p in op["inputs"] + op["outputs"]:
        n, c = p["name"], p["types"][0][1]
        line = (f"    {n}Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ {c}*>({n}) + blockLength_ * "
                f"AscendC::GetBlockIdx(), blockLength_);")
        if p["param"] == "OPTIONAL":
            line = f"    if ({n} != nullptr)  // optional: NULL when the caller leaves it out\n  " + line
        sets.append(line)
        members.append(f"  AscendC::GlobalTensor<{c}> {n}Gm_;")
    return f"""/* {t}'s kernel. Generated by msopgen: the tiling and the global tensors are set
 * up; the computation is yours to write (see "Write the computation here").
 * The tensors use the first data type the definition lists for them. */
#include "kernel_operator.h"

class Kernel{t} {{
 public:
  __aicore__ inline Kernel{t}() {{}}
  __aicore__ inline void Init({gm_args}, uint32_t totalLength, uint32_t tileNum) {{
    blockLength_ = totalLength / AscendC::GetBlockNum();  // each block's share of the elements
    tileNum_ = tileNum;
{chr(10).join(sets)}
  }}
  __aicore__ inline void Process() {{
    // Write the computation here: for each of the tileNum_ tiles, copy the inputs
    // in (DataCopy into queues the pipe_ holds), compute on the local tensors,
    // and copy the results out to the outputs' global tensors.
  }}

 private:
  AscendC::TPipe pipe_;
{chr(10).join(members)}
  uint32_t blockLength_ = 0;
  uint32_t tileNum_ = 0;
}};

extern "C" __global__ __aicore__ void {s}({gm_args}, GM_ADDR workspace, GM_ADDR tiling) {{
  GET_TILING_DATA(tiling_data, tiling);
  Kernel{t} op;
  op.Init({", ".join(params)}, tiling_data.totalLength, tiling_data.tileNum);
  op.Process();
}}
"""


CMAKELISTS = """# A custom-operator project generated by msopgen: op_host/ and op_kernel/ build
# into a package (op_api/include/aclnn_<op>.h, op_api/lib/libcust_opapi.so).
#   cmake -S . -B build_out [-DOPENCANN_ROOT=<OpenCANN build folder>] && cmake --build build_out
# leaves it in build_out/opp/vendors/customize/ (or run ./build.sh).
cmake_minimum_required(VERSION 3.20)
project(%NAME% LANGUAGES NONE)

# OpenCANN's build folder (it has ascendc-opp-build and cmake/AscendCOppConfig.cmake);
# CMAKE_PREFIX_PATH works as well.
set(OPENCANN_ROOT "%ROOT%" CACHE PATH "OpenCANN build folder")
find_package(AscendCOpp REQUIRED CONFIG HINTS "${OPENCANN_ROOT}")

ascendc_add_operator_package(custom_opp
  SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}"
  VENDOR customize
  VERSION 1.0
  OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/opp")
"""

BUILD_SH = """#!/bin/bash
# Configures and builds this operator project into a package under build_out/opp/
# (generated by msopgen). OPENCANN_ROOT=<OpenCANN build folder> ./build.sh picks the
# OpenCANN to build with; other arguments go to cmake's configure step.
set -e
cd "$(dirname "$0")"
cmake -S . -B build_out ${OPENCANN_ROOT:+-DOPENCANN_ROOT="$OPENCANN_ROOT"} "$@"
cmake --build build_out
echo "package: $(pwd)/build_out/opp/vendors/customize"
"""


def write(path, text, executable=False):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if executable:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def generate(ops, out, soc, mode):
    host, kernel = os.path.join(out, "op_host"), os.path.join(out, "op_kernel")
    existing = os.path.isdir(host) or os.path.exists(os.path.join(out, "CMakeLists.txt"))
    if mode == 0 and existing:
        raise Refused(f"{out} already holds an operator project; use -m 1 to add operators to it")
    if mode == 1 and not os.path.isdir(host):
        raise Refused(f"-m 1 adds operators to an existing project, but {out} has no op_host/")
    for op in ops:
        for p in (os.path.join(host, op["snake"] + ".cpp"), os.path.join(kernel, op["snake"] + ".cpp")):
            if os.path.exists(p):
                raise Refused(f"{op['type']}: {p} exists already; the project has this operator")
    os.makedirs(host, exist_ok=True)
    os.makedirs(kernel, exist_ok=True)
    for op in ops:
        write(os.path.join(host, op["snake"] + "_tiling.h"), tiling_header(op))
        write(os.path.join(host, op["snake"] + ".cpp"), host_source(op, soc))
        write(os.path.join(kernel, op["snake"] + ".cpp"), kernel_source(op))
    if mode == 0:
        name = re.sub(r"\W", "_", os.path.basename(os.path.abspath(out))) or "custom_opp"
        write(os.path.join(out, "CMakeLists.txt"),
              CMAKELISTS.replace("%NAME%", name).replace("%ROOT%", OPENCANN_ROOT))
        write(os.path.join(out, "build.sh"), BUILD_SH, executable=True)


def parse_soc(value):
    m = re.fullmatch(r"ai_core-(\w+)", value or "", re.IGNORECASE)
    if not m:
        if value and value.lower().startswith("aicpu"):
            raise Refused(f"-c {value} is not supported: AI CPU operators are not generated; use ai_core-<soc>, "
                          f"e.g. ai_core-Ascend910B")
        raise Refused(f"-c {value!r} is not supported: expected ai_core-<soc>, e.g. ai_core-Ascend910B "
                      f"(chip families: {spelled(SOCS)})")
    soc = m.group(1)
    for family in SOCS:  # longest family first: Ascend910B1 is a 910B, Ascend910A a 910
        if soc.lower().startswith(family.lower()):
            return soc
    raise Refused(f"-c {value} is not supported: the chip {soc} has no profile here (chip families: "
                  f"{spelled(SOCS)})")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="msopgen", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="gen")
    gen = sub.add_parser("gen", help="generate a custom-operator project from an operator description")
    gen.add_argument("-i", "--input", required=True, help="the operator description (.json)")
    gen.add_argument("-c", "--compute_unit", default="ai_core-Ascend910B", help="ai_core-<soc>")
    gen.add_argument("-lan", "--language", default="cpp", help="cpp (Ascend C); the only one supported")
    gen.add_argument("-out", "--output", default=".", help="the project folder (default: the current one)")
    gen.add_argument("-m", "--mode", default="0", help="0: a new project; 1: add the operators to an existing one")
    gen.add_argument("-f", "--framework", default="tf",
                     help="accepted for compatibility; the package's API is aclnn whatever the framework")
    a = ap.parse_args(argv)
    if a.command != "gen":
        ap.error("the command is `msopgen gen -i op.json ...`")
    try:
        if a.language.lower() != "cpp":
            raise Refused(f"-lan {a.language} is not supported: only -lan cpp (Ascend C) projects are generated")
        if a.mode not in ("0", "1"):
            raise Refused(f"-m {a.mode} is not supported: expected 0 (a new project) or 1 (add to a project)")
        soc = parse_soc(a.compute_unit)
        try:
            ops = read_description(a.input)
        except Refused as e:
            raise Refused(f"{a.input}: {e}") from None
        generate(ops, a.output, soc, int(a.mode))
    except Refused as e:
        print(f"msopgen: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"msopgen: error: {e}", file=sys.stderr)
        return 1
    for op in ops:
        print(f"msopgen: {op['type']} -> {os.path.join(a.output, 'op_host', op['snake'] + '.cpp')}, "
              f"{os.path.join(a.output, 'op_kernel', op['snake'] + '.cpp')}")
    print(f"msopgen: build it with {os.path.join(a.output, 'build.sh')} (or cmake -S {a.output} -B <build>)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
