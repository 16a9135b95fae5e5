"""Single-operator models through atc + msame, compared with onnxruntime.

Each case builds a one-node ONNX model (weights as initializers where an
exporter would make them constant), runs onnxruntime on it as the reference,
and checks our compiled output at rtol 1e-3 / atol 1e-5 (exact for ints/bools)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from oc_harness import compile_and_compare

R = np.random.default_rng(7)


def f32(*shape, lo=-1.0, hi=1.0):
    return (R.random(shape) * (hi - lo) + lo).astype(np.float32)


def pos(*shape):
    return f32(*shape, lo=0.1, hi=2.0)


def single(op, inputs, consts=(), attrs=None, n_out=1, opset=17, outputs=None):
    """inputs: list of (name, array) fed at run time; consts: (name, array) initializers.
    The node's input order is the order of `order` built from both lists."""
    attrs = attrs or {}
    names = [n for n, _ in inputs] + [n for n, _ in consts]
    order = attrs.pop("_order", names)
    outs = outputs or [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, order, outs, name="node0", **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outs if o],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in consts])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return model, {n: a for n, a in inputs}


CASES = {
    # --- element-wise and activations
    "add_broadcast": lambda: single("Add", [("a", f32(2, 3, 4, 5)), ("b", f32(3, 1, 5))]),
    "sub_scalar": lambda: single("Sub", [("a", f32(4, 7))], [("b", np.float32(0.5))]),
    "mul_channel": lambda: single("Mul", [("a", f32(1, 8, 5, 5)), ("b", f32(8, 1, 1))]),
    "div": lambda: single("Div", [("a", f32(3, 9)), ("b", pos(3, 9))]),
    "pow": lambda: single("Pow", [("a", pos(3, 9)), ("b", f32(9))]),
    "add_int64": lambda: single("Add", [("a", R.integers(-50, 50, (4, 6)).astype(np.int64)),
                                        ("b", R.integers(-50, 50, (6,)).astype(np.int64))]),
    **{f"unary_{op.lower()}": (lambda op=op, gen=gen: single(op, [("x", gen(2, 3, 17))]))
       for op, gen in [("Sqrt", pos), ("Exp", f32), ("Log", pos), ("Erf", f32), ("Tanh", f32),
                       ("Sigmoid", f32), ("Relu", f32), ("Neg", f32), ("Abs", f32)]},
    "leaky_relu": lambda: single("LeakyRelu", [("x", f32(4, 33))], attrs={"alpha": 0.2}),
    "clip": lambda: single("Clip", [("x", f32(5, 20, lo=-9, hi=9))],
                           [("lo", np.float32(-1.5)), ("hi", np.float32(6.0))]),
    "clip_opset6_attrs": lambda: single("Clip", [("x", f32(5, 20, lo=-9, hi=9))],
                                        attrs={"min": -1.0, "max": 2.0}, opset=7),
    "hard_sigmoid": lambda: single("HardSigmoid", [("x", f32(3, 40, lo=-5, hi=5))], attrs={"alpha": 0.25}),
    "hard_swish": lambda: single("HardSwish", [("x", f32(3, 40, lo=-5, hi=5))], opset=14),
    "gelu": lambda: single("Gelu", [("x", f32(3, 40, lo=-4, hi=4))], opset=20),
    "gelu_tanh": lambda: single("Gelu", [("x", f32(3, 40, lo=-4, hi=4))], attrs={"approximate": "tanh"}, opset=20),
    "softmax_axis1_opset11": lambda: single("Softmax", [("x", f32(2, 3, 5, lo=-5, hi=5))], attrs={"axis": 1}, opset=11),
    "softmax_last": lambda: single("Softmax", [("x", f32(2, 3, 50, lo=-20, hi=20))]),
    "log_softmax": lambda: single("LogSoftmax", [("x", f32(4, 30, lo=-5, hi=5))], attrs={"axis": 0}),
    "layer_norm": lambda: single("LayerNormalization", [("x", f32(2, 5, 64))],
                                 [("g", f32(64)), ("b", f32(64))], attrs={"axis": -1, "epsilon": 1e-5}),
    # --- reductions
    "reduce_sum_axes_input": lambda: single("ReduceSum", [("x", f32(3, 4, 5))], [("axes", np.array([1], np.int64))]),
    "reduce_mean_attr": lambda: single("ReduceMean", [("x", f32(3, 4, 5))], attrs={"axes": [0, 2], "keepdims": 0}, opset=13),
    "reduce_max_all": lambda: single("ReduceMax", [("x", f32(3, 4, 5))], opset=18),
    "reduce_l2": lambda: single("ReduceL2", [("x", f32(3, 4, 5))], [("axes", np.array([-1], np.int64))], opset=18),
    "argmax": lambda: single("ArgMax", [("x", f32(3, 7, 5))], attrs={"axis": 1, "keepdims": 0}),
    # --- compute
    "gemm_transb": lambda: single("Gemm", [("a", f32(5, 33))], [("w", f32(17, 33)), ("c", f32(17))],
                                  attrs={"transB": 1, "alpha": 0.5, "beta": 2.0}),
    "gemm_transa": lambda: single("Gemm", [("a", f32(33, 5)), ("w", f32(33, 17))], attrs={"transA": 1}),
    "matmul_2d": lambda: single("MatMul", [("a", f32(31, 65))], [("b", f32(65, 47))]),
    # One row tile (M <= 14) with constant weights over several K blocks and panels: the sgemm
    # driver streams each weight panel over all K in one block.
    "gemm_m1_long_k": lambda: single("Gemm", [("a", f32(1, 600))], [("w", f32(70, 600)), ("c", f32(70))],
                                     attrs={"transB": 1}),
    "gemm_m8_long_k": lambda: single("Gemm", [("a", f32(8, 530))], [("w", f32(530, 100)), ("c", f32(100))]),
    "matmul_m3_long_k": lambda: single("MatMul", [("a", f32(1, 3, 700))], [("b", f32(700, 45))]),
    "matmul_batched_broadcast": lambda: single("MatMul", [("a", f32(2, 3, 7, 16)), ("b", f32(3, 16, 9))]),
    "matmul_vec": lambda: single("MatMul", [("a", f32(16)), ("b", f32(4, 16, 5))]),
    "conv_basic": lambda: single("Conv", [("x", f32(1, 3, 11, 13))], [("w", f32(8, 3, 3, 3)), ("b", f32(8))],
                                 attrs={"pads": [1, 1, 1, 1]}),
    "conv_stride_dilation": lambda: single("Conv", [("x", f32(2, 4, 15, 15))], [("w", f32(6, 4, 3, 3))],
                                           attrs={"strides": [2, 2], "dilations": [2, 2], "pads": [2, 1, 0, 2]}),
    "conv_groups": lambda: single("Conv", [("x", f32(1, 8, 9, 9))], [("w", f32(4, 4, 3, 3))], attrs={"group": 2}),
    "conv_depthwise_same_upper": lambda: single("Conv", [("x", f32(1, 16, 10, 10))], [("w", f32(16, 1, 3, 3))],
                                                attrs={"group": 16, "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    "conv_1x1": lambda: single("Conv", [("x", f32(2, 32, 7, 7))], [("w", f32(24, 32, 1, 1)), ("b", f32(24))]),
    # 1-D convs over H with W = 1 (the kernel swaps the axes: conv.cc)
    "conv_hx1_kernel5": lambda: single("Conv", [("x", f32(1, 16, 40, 1))], [("w", f32(32, 16, 5, 1)), ("b", f32(32))],
                                       attrs={"pads": [2, 0, 2, 0]}),
    "conv_hx1_stride_dilation": lambda: single("Conv", [("x", f32(2, 8, 33, 1))], [("w", f32(12, 8, 3, 1))],
                                               attrs={"strides": [2, 1], "dilations": [2, 1], "pads": [1, 0, 3, 0]}),
    "conv_hx1_groups": lambda: single("Conv", [("x", f32(1, 8, 20, 1))], [("w", f32(8, 2, 3, 1))],
                                      attrs={"group": 4, "pads": [1, 0, 1, 0]}),
    "conv_hx1_depthwise": lambda: single("Conv", [("x", f32(1, 8, 20, 1))], [("w", f32(8, 1, 5, 1))],
                                         attrs={"group": 8}),
    "conv_1d": lambda: single("Conv", [("x", f32(1, 4, 20))], [("w", f32(5, 4, 3))], attrs={"pads": [1, 1]}),
    "conv_transpose": lambda: single("ConvTranspose", [("x", f32(1, 4, 5, 5))], [("w", f32(4, 3, 3, 3)), ("b", f32(3))],
                                     attrs={"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    "conv_transpose_groups": lambda: single("ConvTranspose", [("x", f32(1, 4, 4, 6))], [("w", f32(4, 2, 2, 3))],
                                            attrs={"group": 2, "strides": [2, 1]}),
    # --- pooling and normalisation
    "maxpool_ceil": lambda: single("MaxPool", [("x", f32(1, 3, 10, 10))],
                                   attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "maxpool_pads": lambda: single("MaxPool", [("x", f32(2, 3, 9, 9))],
                                   attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "avgpool_count_include_pad": lambda: single("AveragePool", [("x", f32(1, 2, 8, 8))],
                                                attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    "avgpool_exclude_pad_ceil": lambda: single("AveragePool", [("x", f32(1, 2, 9, 9))],
                                               attrs={"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    "global_avgpool": lambda: single("GlobalAveragePool", [("x", f32(2, 5, 6, 7))]),
    "global_maxpool": lambda: single("GlobalMaxPool", [("x", f32(2, 5, 6, 7))]),
    "batchnorm": lambda: single("BatchNormalization", [("x", f32(2, 4, 5, 5))],
                                [("s", f32(4)), ("b", f32(4)), ("m", f32(4)), ("v", pos(4))]),
    # --- tensor movement
    "reshape": lambda: single("Reshape", [("x", f32(2, 3, 4))], [("s", np.array([0, -1], np.int64))]),
    "transpose": lambda: single("Transpose", [("x", f32(2, 3, 4, 5))], attrs={"perm": [0, 2, 3, 1]}),
    "flatten": lambda: single("Flatten", [("x", f32(2, 3, 4, 5))], attrs={"axis": 2}),
    "squeeze": lambda: single("Squeeze", [("x", f32(1, 3, 1, 5))], [("axes", np.array([0, 2], np.int64))]),
    "squeeze_opset11_attr": lambda: single("Squeeze", [("x", f32(1, 3, 1, 5))], attrs={"axes": [2]}, opset=11),
    "unsqueeze": lambda: single("Unsqueeze", [("x", f32(3, 5))], [("axes", np.array([0, -1], np.int64))]),
    "concat": lambda: single("Concat", [("a", f32(2, 3, 4)), ("b", f32(2, 5, 4))], attrs={"axis": 1}),
    "split": lambda: single("Split", [("x", f32(2, 10))], [("s", np.array([3, 7], np.int64))], attrs={"axis": 1}, n_out=2),
    "slice_neg_step": lambda: single("Slice", [("x", f32(6, 8))], [("st", np.array([-1, 1], np.int64)),
                                     ("en", np.array([-7, 100], np.int64)), ("ax", np.array([0, 1], np.int64)),
                                     ("sp", np.array([-2, 3], np.int64))]),
    "gather": lambda: single("Gather", [("x", f32(5, 4))], [("i", np.array([[0, 4], [-1, 2]], np.int64))], attrs={"axis": 0}),
    "gather_axis1": lambda: single("Gather", [("x", f32(3, 6, 2)), ("i", np.array([5, 0, 1], np.int64))], attrs={"axis": 1}),
    "expand": lambda: single("Expand", [("x", f32(3, 1))], [("s", np.array([2, 3, 4], np.int64))]),
    "where": lambda: single("Where", [("c", R.random((3, 4)) > 0.5), ("a", f32(3, 4)), ("b", f32(4))]),
    "equal_int": lambda: single("Equal", [("a", R.integers(0, 3, (4, 5)).astype(np.int64)),
                                          ("b", R.integers(0, 3, (5,)).astype(np.int64))]),
    "cast_float_to_int": lambda: single("Cast", [("x", f32(4, 5, lo=-10, hi=10))], attrs={"to": TensorProto.INT32}),
    "cast_int_to_float": lambda: single("Cast", [("x", R.integers(-100, 100, (7,)).astype(np.int64))],
                                        attrs={"to": TensorProto.FLOAT}),
    "shape": lambda: single("Shape", [("x", f32(2, 3, 4))]),
    "constant_of_shape": lambda: single("ConstantOfShape", [], [("s", np.array([2, 3], np.int64))],
                                       attrs={"value": numpy_helper.from_array(np.array([1.5], np.float32))}),
    "range": lambda: single("Range", [], [("a", np.int64(2)), ("b", np.int64(20)), ("d", np.int64(3))]),
    "trilu_lower": lambda: single("Trilu", [("x", f32(2, 5, 6))], [("k", np.int64(1))], attrs={"upper": 0}, opset=14),
    # Integer sums past the type's range wrap (two's complement), as onnxruntime's do.
    "cumsum_int32_wraps": lambda: single(
        "CumSum", [("x", np.array([[2**31 - 10, 7, 5, -3], [-2**31 + 4, -9, 2**31 - 1, 2**31 - 1]], np.int32))],
        [("axis", np.int32(1))]),
    "cumsum_int64_wraps_reverse": lambda: single(
        "CumSum", [("x", np.array([2**63 - 1, 2**62, 2**62, -5], np.int64))], [("axis", np.int64(0))],
        attrs={"reverse": 1, "exclusive": 1}),
    "resize_nearest": lambda: single("Resize", [("x", f32(1, 2, 3, 4))],
                                     [("roi", np.array([], np.float32)), ("sc", np.array([1, 1, 2, 2], np.float32))],
                                     attrs={"mode": "nearest"}),
    "resize_linear_half_pixel": lambda: single("Resize", [("x", f32(1, 2, 4, 5))],
                                               [("roi", np.array([], np.float32)), ("sc", np.array([1, 1, 1.5, 2], np.float32))],
                                               attrs={"mode": "linear", "coordinate_transformation_mode": "half_pixel"}),
    "pad_reflect": lambda: single("Pad", [("x", f32(1, 2, 4, 5))], [("p", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))],
                                  attrs={"mode": "reflect"}),
    "pad_constant": lambda: single("Pad", [("x", f32(2, 3))], [("p", np.array([1, 0, 0, 2], np.int64)),
                                   ("v", np.float32(0.5))]),
    # --- recurrent
    "lstm_bidirectional": lambda: single(
        "LSTM", [("x", f32(5, 2, 3))], [("w", f32(2, 16, 3)), ("r", f32(2, 16, 4)), ("b", f32(2, 32))],
        attrs={"hidden_size": 4, "direction": "bidirectional"}, n_out=3),
    "gru_linear_before_reset": lambda: single(
        "GRU", [("x", f32(6, 3, 4))], [("w", f32(1, 15, 4)), ("r", f32(1, 15, 5)), ("b", f32(1, 30))],
        attrs={"hidden_size": 5, "linear_before_reset": 1}, n_out=2),
    "gru_reverse": lambda: single(
        "GRU", [("x", f32(4, 2, 3))], [("w", f32(1, 12, 3)), ("r", f32(1, 12, 4))],
        attrs={"hidden_size": 4, "direction": "reverse"}, n_out=2),
    # --- Einsum (MaxViT and einsum-written attention use it)
    "einsum_attention_scores": lambda: single("Einsum", [("q", f32(1, 2, 7, 5)), ("k", f32(1, 2, 9, 5))],
                                              attrs={"equation": "bhid,bhjd->bhij"}, opset=12),
    "einsum_heads_last": lambda: single("Einsum", [("a", f32(2, 6, 3, 4)), ("v", f32(2, 6, 3, 4))],
                                        attrs={"equation": "bqhd,bkhd->bhqk"}, opset=12),
    "einsum_ellipsis_broadcast": lambda: single("Einsum", [("a", f32(3, 1, 4, 5)), ("b", f32(1, 2, 5, 6))],
                                                attrs={"equation": "...ij,...jk->...ik"}, opset=12),
    "einsum_implicit_output": lambda: single("Einsum", [("a", f32(4, 3)), ("b", f32(3, 5))],
                                             attrs={"equation": "ij,jk"}, opset=12),
    "einsum_trace_and_sum": lambda: single("Einsum", [("a", f32(2, 5, 5))], attrs={"equation": "bii->b"}, opset=12),
    "einsum_diag_outer_three": lambda: single("Einsum", [("a", f32(4, 4)), ("b", f32(3)), ("c", f32(4))],
                                              attrs={"equation": "ii,j,i->ij"}, opset=12),
    "einsum_transpose_int64": lambda: single("Einsum", [("a", R.integers(-9, 9, (2, 3, 4)).astype(np.int64))],
                                             attrs={"equation": "abc->cab"}, opset=12),
    # --- attention family (opset 23+)
    "attention_3d_bert_mask": lambda: single(
        "Attention", [("q", f32(2, 128, 96)), ("k", f32(2, 128, 96)), ("v", f32(2, 128, 96)),
                      ("m", f32(2, 1, 128, 128, lo=-3, hi=0))],
        attrs={"q_num_heads": 4, "kv_num_heads": 4}, opset=23),
    "attention_4d_gqa_causal_long": lambda: single(
        "Attention", [("q", f32(1, 8, 300, 32)), ("k", f32(1, 2, 300, 32)), ("v", f32(1, 2, 300, 24))],
        attrs={"is_causal": 1}, opset=23),
    "attention_past_present_bool_mask": lambda: single(
        "Attention", [("q", f32(2, 4, 5, 16)), ("k", f32(2, 4, 5, 16)), ("v", f32(2, 4, 5, 16)),
                      ("m", R.random((5, 12)) > 0.3), ("pk", f32(2, 4, 7, 16)), ("pv", f32(2, 4, 7, 16))],
        attrs={"softcap": 3.0}, opset=23, n_out=3),
    "rms_norm_last_axis": lambda: single("RMSNormalization", [("x", f32(3, 7, 64))], [("s", f32(64))], opset=23),
    "rms_norm_axis1": lambda: single("RMSNormalization", [("x", f32(2, 3, 5))], [("s", f32(3, 5))],
                                     attrs={"axis": 1, "epsilon": 0.01}, opset=23),
    "rotary_position_ids": lambda: single(
        "RotaryEmbedding", [("x", f32(2, 4, 3, 16)), ("c", f32(20, 8)), ("s", f32(20, 8)),
                            ("p", R.integers(0, 20, (2, 3)).astype(np.int64))], opset=23),
    "rotary_3d_interleaved_partial": lambda: single(
        "RotaryEmbedding", [("x", f32(2, 5, 48)), ("c", f32(2, 5, 4)), ("s", f32(2, 5, 4))],
        attrs={"num_heads": 3, "interleaved": 1, "rotary_embedding_dim": 8}, opset=23),
    "tensor_scatter_linear": lambda: single(
        "TensorScatter", [("c", f32(3, 2, 6, 4)), ("u", f32(3, 2, 2, 4)), ("w", np.array([0, 3, 4], np.int64))],
        opset=24),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_onnxruntime(case):
    model, feeds = CASES[case]()
    compile_and_compare(model, feeds, rtol=1e-3, atol=1e-5)
