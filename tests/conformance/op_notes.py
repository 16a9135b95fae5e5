"""Why a default-domain ONNX op is not implemented (for docs/conformance.md).

Ops not named here are reported as "not implemented yet". A reason names what stands in
the way when that is more than the kernel itself (a type the runtime does not have, a
feature of the IR, an output that cannot be compared).
"""
from __future__ import annotations

_STRING = ("string tensors: not implemented yet (tensors are fixed-size buffers planned in one arena; "
           "variable-length strings need a per-run string store in the executor)")

REASONS: dict[str, str] = {
    "RegexFullMatch": _STRING,
    "StringConcat": _STRING,
    "StringNormalizer": _STRING,
    "StringSplit": _STRING,
    "ImageDecoder": "decodes encoded image bytes: needs image codecs, not planned for the CPU runtime",
}


# Default-domain ops the ONNX parser handles itself (no registry entry needed).
PARSER_OPS = {"Constant": "folded into a constant value by the ONNX parser"}


def unsupported_reason(op: str, deprecated: bool = False) -> str:
    if deprecated:
        return "deprecated in the newest opset; " + REASONS.get(op, "not implemented yet")
    return REASONS.get(op, "not implemented yet")
