#!/usr/bin/env python3
"""Builds a custom-operator project into an installable operator package
(docs/ascendc.md, "Custom operator packages").

  opp_build.py PROJECT --out DIR [--vendor customize]

PROJECT is laid out as CANN's custom-operator projects are: op_host/*.cpp (the
operator definitions with OP_ADD, tiling and inference functions, tiling data
headers *_tiling.h) and op_kernel/*.cpp (the kernels, one per operator, named
after it in snake case; each is compiled with op_host/<name>_tiling.h). The
package is DIR/vendors/<vendor>/:

  op_api/include/aclnn_<op>.h   the two-phase API of each operator
  op_api/lib/libcust_opapi.so   host code, kernels and the aclnn functions
  version.info                  the package's name and version

Applications include aclnn_<op>.h and link -lcust_opapi (ascendc++ adds the rest).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
DRIVER = "@OC_LIB_DIR@/ascendc++"
if DRIVER.startswith("@"):
    DRIVER = os.path.join(HERE, "..", "..", "build", "ascendc++")
DESCRIBE = os.path.join(HERE, "op_describe.cc")
if not os.path.exists(DESCRIBE):
    DESCRIBE = "@OC_SOURCE_DIR@/tools/ascendc/op_describe.cc"

ATTR_C = {"bool": "bool", "int": "int64_t", "float": "double", "string": "const char *",
          "list_int": "const aclIntArray *", "list_float": "const aclFloatArray *"}
ATTR_KIND = {"bool": ("OC_ATTR_BOOL", "b"), "int": ("OC_ATTR_INT", "i"), "float": ("OC_ATTR_FLOAT", "f"),
             "string": ("OC_ATTR_STRING", "s"), "list_int": ("OC_ATTR_LIST_INT", "li"),
             "list_float": ("OC_ATTR_LIST_FLOAT", "lf")}


def snake(t):
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", t)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"opp_build: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def signature(op):
    names = [i["name"] for i in op["inputs"]]
    params = [f"const aclTensor *{n}" for n in names]
    params += [f"{ATTR_C[a['kind']]} {a['name']}" for a in op["attrs"]]
    outs = [o["name"] + ("Out" if o["name"] in names else "") for o in op["outputs"]]
    params += [f"const aclTensor *{n}" for n in outs]
    return params, names, outs


def header(op):
    params, _, _ = signature(op)
    t, guard = op["type"], "ACLNN_" + snake(op["type"]).upper() + "_H_"
    return (f"/* The two-phase API of the custom operator {t} (written by opp_build.py). */\n"
            f"#ifndef {guard}\n#define {guard}\n#include \"aclnn/aclnn_base.h\"\n\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
            f"/* Checks the tensors against {t}'s definition and sizes the launch. */\n"
            f"__attribute__((visibility(\"default\"))) aclnnStatus aclnn{t}GetWorkspaceSize("
            + ", ".join(params + ["uint64_t *workspaceSize", "aclOpExecutor **executor"]) + ");\n"
            f"/* Queues {t} on the stream. */\n"
            f"__attribute__((visibility(\"default\"))) aclnnStatus aclnn{t}(void *workspace, uint64_t workspaceSize, "
            "aclOpExecutor *executor, aclrtStream stream);\n\n"
            "#ifdef __cplusplus\n}\n#endif\n\n#endif\n")


def source(op):
    params, ins, outs = signature(op)
    t = op["type"]
    attrs = []
    for a in op["attrs"]:
        kind, field = ATTR_KIND[a["kind"]]
        attrs.append(f"  attrs[{len(attrs)}].kind = {kind};\n  attrs[{len(attrs)}].{field} = {a['name']};\n")
    n_attr = max(len(op["attrs"]), 1)
    return (f"#include \"aclnn_{snake(t)}.h\"\n#include \"aclnn/oc_op_call.h\"\n\n"
            f"extern \"C\" aclnnStatus aclnn{t}GetWorkspaceSize("
            + ", ".join(params + ["uint64_t *workspaceSize", "aclOpExecutor **executor"]) + ") {\n"
            f"  const aclTensor *inputs[] = {{{', '.join(ins) or 'nullptr'}}};\n"
            f"  const aclTensor *outputs[] = {{{', '.join(outs) or 'nullptr'}}};\n"
            f"  OcAclnnAttr attrs[{n_attr}] = {{}};\n" + "".join(attrs) +
            f"  return OcAclnnPrepare(\"aclnn{t}GetWorkspaceSize\", \"{t}\", inputs, {len(ins)}, outputs, {len(outs)}, "
            f"attrs, {len(op['attrs'])}, workspaceSize, executor);\n}}\n\n"
            f"extern \"C\" aclnnStatus aclnn{t}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
            "aclrtStream stream) {\n"
            f"  return OcAclnnRun(\"aclnn{t}\", workspace, workspaceSize, executor, stream);\n}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("project")
    ap.add_argument("--out", required=True)
    ap.add_argument("--vendor", default="customize")
    ap.add_argument("--version", default="1.0")
    a = ap.parse_args()
    host = sorted(glob.glob(os.path.join(a.project, "op_host", "*.cpp")))
    kernels = sorted(glob.glob(os.path.join(a.project, "op_kernel", "*.cpp")))
    if not host or not kernels:
        sys.exit(f"opp_build: {a.project} needs op_host/*.cpp and op_kernel/*.cpp")
    inc = ["-I", os.path.join(a.project, "op_host")]
    tmp = tempfile.mkdtemp(prefix="opp_build")
    describe = os.path.join(tmp, "describe")
    run([DRIVER, *inc, DESCRIBE, *host, "-o", describe])
    ops = json.loads(run([describe]))
    if not ops:
        sys.exit("opp_build: no operator is registered (OP_ADD) in op_host/")
    pkg = os.path.join(a.out, "vendors", a.vendor)
    inc_dir, lib_dir = os.path.join(pkg, "op_api", "include"), os.path.join(pkg, "op_api", "lib")
    os.makedirs(inc_dir, exist_ok=True)
    os.makedirs(lib_dir, exist_ok=True)
    gen = []
    for op in ops:
        with open(os.path.join(inc_dir, f"aclnn_{snake(op['type'])}.h"), "w") as f:
            f.write(header(op))
        path = os.path.join(tmp, f"aclnn_{snake(op['type'])}.cpp")
        with open(path, "w") as f:
            f.write(source(op))
        gen.append(path)
    objs = []
    for k in kernels:
        tiling = os.path.join(a.project, "op_host", os.path.splitext(os.path.basename(k))[0] + "_tiling.h")
        obj = os.path.join(tmp, os.path.basename(k) + ".o")
        run([DRIVER, "-fPIC", "-c", *inc, *(["-include", tiling] if os.path.exists(tiling) else []), k, "-o", obj])
        objs.append(obj)
    lib = os.path.join(lib_dir, "libcust_opapi.so")
    run([DRIVER, "-shared", "-fPIC", *inc, "-I", inc_dir, *host, *gen, *objs, "-o", lib])
    with open(os.path.join(pkg, "version.info"), "w") as f:
        f.write(f"custom_opp_compiler_version={a.version}\nvendor={a.vendor}\nops={','.join(o['type'] for o in ops)}\n")
    print(f"opp_build: {len(ops)} operator(s) ({', '.join(o['type'] for o in ops)}) -> {pkg}")


if __name__ == "__main__":
    main()
