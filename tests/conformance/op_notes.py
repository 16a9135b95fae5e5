"""Why a default-domain ONNX op is not implemented (for docs/conformance.md).

Ops not named here are reported as "not implemented yet". A reason names what stands in
the way when that is more than the kernel itself (a type the runtime does not have, a
feature of the IR, an output that cannot be compared).
"""
from __future__ import annotations

_SEQUENCE = "sequence type: the runtime has tensors only"
_OPTIONAL = "optional type: the runtime has tensors only"
_SUBGRAPH = "control flow: subgraph attributes are not supported by the IR yet"
_STRING = "string tensors: no string data type in the IR"
_RANDOM = "random generator: not implemented yet (outputs are not comparable with a reference)"
_QUANT = "quantized (integer) compute: not implemented yet"

REASONS: dict[str, str] = {
    "ConcatFromSequence": _SEQUENCE,
    "SequenceAt": _SEQUENCE,
    "SequenceConstruct": _SEQUENCE,
    "SequenceEmpty": _SEQUENCE,
    "SequenceErase": _SEQUENCE,
    "SequenceInsert": _SEQUENCE,
    "SequenceLength": _SEQUENCE,
    "SplitToSequence": _SEQUENCE,
    "SequenceMap": _SEQUENCE + "; also a subgraph attribute",
    "Optional": _OPTIONAL,
    "OptionalGetElement": _OPTIONAL,
    "OptionalHasElement": _OPTIONAL,
    "If": _SUBGRAPH,
    "Loop": _SUBGRAPH,
    "Scan": _SUBGRAPH,
    "RegexFullMatch": _STRING,
    "StringConcat": _STRING,
    "StringNormalizer": _STRING,
    "StringSplit": _STRING,
    "TfIdfVectorizer": "n-gram counting over int/string tensors: not implemented yet (string inputs need a string type)",
    "ImageDecoder": "decodes encoded image bytes: needs image codecs, not planned for the CPU runtime",
    "Bernoulli": _RANDOM,
    "Multinomial": _RANDOM,
    "RandomNormal": _RANDOM,
    "RandomNormalLike": _RANDOM,
    "RandomUniform": _RANDOM,
    "RandomUniformLike": _RANDOM,
    "ConvInteger": _QUANT,
    "MatMulInteger": _QUANT,
    "QLinearConv": _QUANT,
    "QLinearMatMul": _QUANT,
    "DynamicQuantizeLinear": _QUANT,
    "QuantizeLinear": _QUANT,
    "DequantizeLinear": _QUANT,
    "NegativeLogLikelihoodLoss": "training loss: not implemented yet",
    "SoftmaxCrossEntropyLoss": "training loss: not implemented yet",
    "Det": "linear algebra (LU decomposition): not implemented yet",
    "NonZero": "data-dependent output shape: the runtime needs static shapes",
    "Unique": "data-dependent output shape: the runtime needs static shapes",
    "NonMaxSuppression": "data-dependent output shape: the runtime needs static shapes",
    "Compress": "data-dependent output shape (unless the condition is constant): not implemented yet",
    "CausalConvWithState": "recurrent-state op new in the newest opset: not implemented yet",
    "LinearAttention": "attention variant new in the newest opset: not implemented yet",
    "TensorScatter": "KV-cache update op new in the newest opset: not implemented yet",
}


# Default-domain ops the ONNX parser handles itself (no registry entry needed).
PARSER_OPS = {"Constant": "folded into a constant value by the ONNX parser"}


def unsupported_reason(op: str, deprecated: bool = False) -> str:
    if deprecated:
        return "deprecated in the newest opset; " + REASONS.get(op, "not implemented yet")
    return REASONS.get(op, "not implemented yet")
