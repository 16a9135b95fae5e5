"""Writes the ONNX backend node tests of the installed onnx package to a cache folder.

The onnx wheel does not ship onnx/backend/test/data/node, but it ships the code that
makes those cases (onnx.backend.test.case.node). This writes them in the layout the
ONNX repository uses (<case>/model.onnx, <case>/test_data_set_<k>/{input,output}_<j>.pb)
plus manifest.json, which names the op each case tests. The folder is rebuilt only when
the onnx version or this file changes (stamp in the manifest).

Usage: generate_cases.py OUT_DIR [--force]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import warnings

MANIFEST = "manifest.json"


def _stamp() -> str:
    import onnx

    with open(__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"onnx-{onnx.__version__}-gen-{digest}"


def _value_kind(type_proto) -> str:
    for kind in ("tensor_type", "sequence_type", "optional_type", "map_type", "sparse_tensor_type"):
        if type_proto.HasField(kind):
            return kind.replace("_type", "")
    return "unknown"


def _serialize(value, value_info) -> bytes:
    from onnx import TensorProto, numpy_helper

    kind = _value_kind(value_info.type)
    if kind == "sequence":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def _case_op(case, ops_by_name: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(domain, op_type) the case tests: the single node of a plain case; an
    '_expanded' case (the op's function body) counts for the op it expands."""
    base = case.name.split("_expanded")[0]
    if base != case.name and base in ops_by_name:
        return ops_by_name[base]
    nodes = case.model.graph.node
    if len(nodes) == 1:
        return (nodes[0].domain or "", nodes[0].op_type)
    # Multi-node cases without an expansion suffix: name the first node whose
    # type appears in the test name, else the last node.
    flat = case.name.replace("_", "").lower()
    for n in nodes:
        if n.op_type.lower() in flat:
            return (n.domain or "", n.op_type)
    return (nodes[-1].domain or "", nodes[-1].op_type)


def _opset(model, domain: str) -> int:
    for o in model.opset_import:
        if (o.domain or "") in ({domain} if domain not in ("", "ai.onnx") else {"", "ai.onnx"}):
            return o.version
    return 0


def generate(out_dir: str, force: bool = False) -> dict:
    stamp = _stamp()
    manifest_path = os.path.join(out_dir, MANIFEST)
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        if manifest.get("stamp") == stamp:
            return manifest

    import numpy as np  # noqa: F401  (the case modules need it)
    import onnx
    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)

    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    ops_by_name: dict[str, tuple[str, str]] = {}
    entries = []
    for case in cases:
        if case.kind != "node" or case.model is None:
            continue
        domain, op = _case_op(case, ops_by_name)
        if "_expanded" not in case.name:
            ops_by_name[case.name] = (domain, op)
        case_dir = os.path.join(out_dir, case.name)
        os.makedirs(case_dir)
        graph = case.model.graph
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(case_dir, f"test_data_set_{k}")
            os.makedirs(ds)
            for j, value in enumerate(inputs):
                with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                    f.write(_serialize(value, graph.input[j]))
            for j, value in enumerate(outputs):
                with open(os.path.join(ds, f"output_{j}.pb"), "wb") as f:
                    f.write(_serialize(value, graph.output[j]))
        entries.append({
            "name": case.name,
            "domain": domain,
            "op": op,
            "opset": _opset(case.model, domain),
            "data_sets": len(case.data_sets),
            "input_kinds": [_value_kind(v.type) for v in graph.input],
            "output_kinds": [_value_kind(v.type) for v in graph.output],
            "nodes": sorted({(n.domain + "::" if n.domain else "") + n.op_type for n in graph.node}),
        })
    manifest = {"stamp": stamp, "onnx_version": onnx.__version__, "cases": entries}
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, manifest_path)
    return manifest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--force", action="store_true", help="regenerate even if the stamp matches")
    args = ap.parse_args()
    manifest = generate(args.out_dir, args.force)
    print(f"{len(manifest['cases'])} node test cases in {args.out_dir} ({manifest['stamp']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
