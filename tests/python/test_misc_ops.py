"""Single-operator models of the 'misc' op groups (math_misc, loss, norm_misc,
tensor_misc, window, image_misc, linalg, training) through atc + msame.

The reference is onnxruntime where it implements the op at that opset; where it
does not (newest-opset ops, ai.onnx.preview.training), a numpy formula written
here from the ONNX operator text is the reference."""
import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from oc_harness import assert_close, atc_compile, compile_and_compare, msame_run, save_model

R = np.random.default_rng(11)


def f32(*shape, lo=-1.0, hi=1.0):
    return (R.random(shape) * (hi - lo) + lo).astype(np.float32)


def f64(*shape, lo=-1.0, hi=1.0):
    return (R.random(shape) * (hi - lo) + lo).astype(np.float64)


def model_of(op, inputs, consts=(), attrs=None, n_out=1, opset=17, domain="", extra_opsets=()):
    attrs = dict(attrs or {})
    names = [n for n, _ in inputs] + [n for n, _ in consts]
    order = attrs.pop("_order", names)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, order, outs, name="node0", domain=domain, **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in consts])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    if domain and not any(d == domain for d, _ in extra_opsets):
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8 if opset < 21 else 10
    return model, {n: a for n, a in inputs}


def ours(model, feeds):
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        om, _ = atc_compile(path, os.path.join(d, "model"), {k: list(v.shape) for k, v in feeds.items()})
        outs, _ = msame_run(om, list(feeds.values()), d)
    return outs


def check_numpy(model, feeds, expected, rtol=1e-4, atol=1e-5):
    outs = ours(model, feeds)
    assert len(outs) == len(expected)
    for i, (a, e) in enumerate(zip(outs, expected)):
        assert_close(a, np.asarray(e), rtol, atol, what=f"output {i}")


# ---- cases checked against onnxruntime --------------------------------------------------------

def sce_case(shape, reduction, weight=False, ii=None, log_prob=False, op="SoftmaxCrossEntropyLoss", seed_cls=None):
    n, c = shape[0], shape[1]
    x = f32(*shape, lo=-3, hi=3)
    if op == "NegativeLogLikelihoodLoss":
        x = np.log(np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)).astype(np.float32)
    t = R.integers(0, c, (n, *shape[2:])).astype(np.int64)
    if ii is not None:
        t.flat[::3] = ii
    inputs = [("x", x), ("t", t)]
    if weight:
        inputs.append(("w", f32(c, lo=0.2, hi=2.0)))
    attrs = {"reduction": reduction}
    if ii is not None:
        attrs["ignore_index"] = ii
    return model_of(op, inputs, attrs=attrs, n_out=2 if log_prob else 1, opset=13)


ORT_CASES = {
    **{f"unary_{op.lower()}": (lambda op=op, lo=lo, hi=hi: model_of(op, [("x", f32(3, 5, 41, lo=lo, hi=hi))]))
       for op, lo, hi in [("Tan", -1.2, 1.2), ("Acos", -0.99, 0.99), ("Asin", -0.99, 0.99), ("Atan", -4, 4),
                          ("Sinh", -3, 3), ("Cosh", -3, 3), ("Asinh", -5, 5), ("Acosh", 1.01, 6),
                          ("Atanh", -0.95, 0.95)]},
    "shrink_soft": lambda: model_of("Shrink", [("x", f32(4, 50, lo=-2, hi=2))], attrs={"lambd": 0.7, "bias": 0.3}),
    "shrink_hard_default": lambda: model_of("Shrink", [("x", f32(4, 50, lo=-2, hi=2))]),
    "binarizer": lambda: model_of("Binarizer", [("x", f32(6, 13))], attrs={"threshold": 0.25}, domain="ai.onnx.ml"),
    "array_feature_extractor_3d": lambda: model_of(
        "ArrayFeatureExtractor", [("x", f32(2, 3, 7))], [("i", np.array([6, 0, 3, 3], np.int64))], domain="ai.onnx.ml"),
    "array_feature_extractor_1d": lambda: model_of(
        "ArrayFeatureExtractor", [("x", f32(9))], [("i", np.array([8, 1], np.int64))], domain="ai.onnx.ml"),
    "hardmax_axis1_ties": lambda: model_of(
        "Hardmax", [("x", np.round(f32(3, 6, 5, lo=0, hi=3)))], attrs={"axis": 1}, opset=13),
    "hardmax_opset11_flatten": lambda: model_of("Hardmax", [("x", f32(3, 4, 5))], attrs={"axis": 1}, opset=11),
    "lp_norm_l1_axis0": lambda: model_of("LpNormalization", [("x", f32(5, 6, 7))], attrs={"axis": 0, "p": 1}),
    "lp_norm_l2_last": lambda: model_of("LpNormalization", [("x", f32(5, 6, 300))]),
    "mvn_default_axes": lambda: model_of("MeanVarianceNormalization", [("x", f32(2, 3, 8, 9, lo=0, hi=4))]),
    "mvn_axes_1_2": lambda: model_of("MeanVarianceNormalization", [("x", f32(3, 4, 5, 2))], attrs={"axes": [1, 2]}),
    "reverse_sequence_time_major": lambda: model_of(
        "ReverseSequence", [("x", f32(6, 4, 3)), ("l", np.array([6, 1, 0, 4], np.int64))],
        attrs={"batch_axis": 1, "time_axis": 0}),
    "reverse_sequence_batch_major": lambda: model_of(
        "ReverseSequence", [("x", f32(3, 5, 2, 2)), ("l", np.array([2, 5, 3], np.int64))],
        attrs={"batch_axis": 0, "time_axis": 1}),
    "center_crop_pad_mixed": lambda: model_of(
        "CenterCropPad", [("x", f32(4, 9, 6))], [("s", np.array([6, 9], np.int64))], attrs={"axes": [1, -1]},
        opset=18),
    "center_crop_pad_all_axes": lambda: model_of(
        "CenterCropPad", [("x", f32(5, 4, 3))], [("s", np.array([2, 7, 3], np.int64))], opset=18),
    "sce_none_4d_log_prob": lambda: sce_case((2, 5, 3, 4), "none", log_prob=True),
    "sce_mean_weight_ii": lambda: sce_case((6, 7), "mean", weight=True, ii=2),
    "sce_sum_weight_3d": lambda: sce_case((4, 3, 5), "sum", weight=True),
    "sce_mean_no_weight_negative_ii_log_prob": lambda: sce_case((3, 4, 6), "mean", ii=-5, log_prob=True),
    "sce_mean_large_c": lambda: sce_case((8, 1000), "mean"),
    "nll_mean_weight_ii_4d": lambda: sce_case((2, 4, 3, 3), "mean", weight=True, ii=1, op="NegativeLogLikelihoodLoss"),
    "nll_none": lambda: sce_case((5, 6, 2), "none", op="NegativeLogLikelihoodLoss"),
    "nll_sum_no_weight": lambda: sce_case((9, 3), "sum", op="NegativeLogLikelihoodLoss"),
    **{f"window_{op.lower()}_{'periodic' if per else 'symmetric'}": (
        lambda op=op, per=per: model_of(op, [], [("n", np.array(37, np.int64))], attrs={"periodic": per}, opset=17))
       for op in ["HannWindow", "HammingWindow", "BlackmanWindow"] for per in [0, 1]},
    "hann_window_double_int32_size": lambda: model_of(
        "HannWindow", [], [("n", np.array(16, np.int32))], attrs={"output_datatype": 11}, opset=17),
    "mel_weight_matrix": lambda: model_of(
        "MelWeightMatrix", [], [("m", np.array(12, np.int64)), ("d", np.array(256, np.int64)),
                                ("r", np.array(16000, np.int64)), ("lo", np.array(60.0, np.float32)),
                                ("hi", np.array(7000.0, np.float32))], opset=17),
    "maxunpool_2d_stride2": lambda: maxunpool_case((2, 3, 4, 6), [2, 2], [2, 2]),
    "maxunpool_2d_overlap_pads": lambda: maxunpool_case((1, 2, 5, 4), [3, 3], [1, 1], pads=[1, 1, 1, 1]),
    "col2im_2d_pads_strides_dilations": lambda: model_of(
        "Col2Im", [("x", f32(2, 3 * 2 * 3, 5 * 4))], [("i", np.array([9, 8], np.int64)), ("b", np.array([2, 3], np.int64))],
        attrs={"strides": [2, 2], "pads": [1, 0, 1, 1], "dilations": [2, 1]}, opset=18),
    "col2im_plain": lambda: model_of(
        "Col2Im", [("x", f32(1, 5 * 4, 12))], [("i", np.array([4, 5], np.int64)), ("b", np.array([2, 2], np.int64))],
        opset=18),
    "det_batched": lambda: model_of("Det", [("x", f32(3, 2, 5, 5, lo=-2, hi=2))]),
    "det_2d_singular_rows": lambda: model_of("Det", [("x", np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32))]),
}


def maxunpool_case(shape, kernel, strides, pads=None):
    """Values and indices from a real MaxPool, as exporters produce them."""
    x = f32(*shape)
    pool = helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=kernel, strides=strides,
                            pads=pads or [0] * (2 * len(kernel)))
    g = helper.make_graph([pool], "p", [helper.make_tensor_value_info("x", 1, x.shape)],
                          [helper.make_empty_tensor_value_info("v"), helper.make_empty_tensor_value_info("i")])
    import onnxruntime as ort
    v, i = ort.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    attrs = {"kernel_shape": kernel, "strides": strides}
    if pads:
        attrs["pads"] = pads
    return model_of("MaxUnpool", [("v", v), ("i", i)], attrs=attrs)


@pytest.mark.parametrize("case", sorted(ORT_CASES))
def test_misc_op_matches_onnxruntime(case):
    model, feeds = ORT_CASES[case]()
    compile_and_compare(model, feeds, rtol=1e-4, atol=1e-5)


# ---- cases checked against numpy formulas ------------------------------------------------------

def test_swish_matches_formula():
    x = f32(4, 70, lo=-30, hi=30)
    model, feeds = model_of("Swish", [("x", x)], attrs={"alpha": 0.6}, opset=24)
    check_numpy(model, feeds, [(x / (1 + np.exp(-0.6 * x.astype(np.float64)))).astype(np.float32)])


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumprod_matches_numpy(exclusive, reverse):
    x = f32(3, 6, 4, lo=0.5, hi=1.5)
    model, feeds = model_of("CumProd", [("x", x)], [("a", np.array(1, np.int32))],
                            attrs={"exclusive": exclusive, "reverse": reverse}, opset=26)
    v = x[:, ::-1] if reverse else x
    if exclusive:
        v = np.concatenate([np.ones_like(v[:, :1]), v[:, :-1]], axis=1)
    y = np.cumprod(v, axis=1)
    check_numpy(model, feeds, [y[:, ::-1] if reverse else y])


def test_cumprod_int64_negative_axis():
    x = R.integers(-3, 4, (4, 5)).astype(np.int64)
    model, feeds = model_of("CumProd", [("x", x)], [("a", np.array(-1, np.int64))], opset=26)
    check_numpy(model, feeds, [np.cumprod(x, axis=1)])


def test_mvn_float64_matches_formula():
    x = f64(3, 4, 6, lo=-2, hi=5)
    model, feeds = model_of("MeanVarianceNormalization", [("x", x)], attrs={"axes": [0, 2]})
    m = x.mean(axis=(0, 2), keepdims=True)
    sd = np.sqrt((x * x).mean(axis=(0, 2), keepdims=True) - m * m)
    check_numpy(model, feeds, [(x - m) / (sd + 1e-9)], rtol=1e-9, atol=1e-12)


def test_trig_float64_matches_numpy():
    x = f64(7, 9, lo=-0.9, hi=0.9)
    for op, fn in [("Atan", np.arctan), ("Asin", np.arcsin), ("Tan", np.tan), ("Atanh", np.arctanh)]:
        model, feeds = model_of(op, [("x", x)])
        check_numpy(model, feeds, [fn(x)], rtol=1e-12, atol=1e-14)


def test_maxunpool_output_shape_places_unpooled_tensor_in_corner():
    # Indices refer to the unpooled [1,1,4,4] tensor; output_shape only adds zeros after it
    # (the ONNX reference and node test; not a re-indexing into the larger shape).
    x = np.array([[[[5, 6], [7, 8]]]], np.float32)
    idx = np.array([[[[5, 7], [13, 15]]]], np.int64)
    model, feeds = model_of("MaxUnpool", [("x", x), ("i", idx)], [("s", np.array([1, 1, 5, 6], np.int64))],
                            attrs={"kernel_shape": [2, 2], "strides": [2, 2]})
    y = np.zeros((1, 1, 5, 6), np.float32)
    flat = np.zeros(16, np.float32)
    flat[idx.ravel()] = x.ravel()
    y[:, :, :4, :4] = flat.reshape(1, 1, 4, 4)
    check_numpy(model, feeds, [y])


def training_model(op, n_groups, state_names, attrs, dtype=np.float32):
    shapes = [(3, 4), (7,)][:n_groups]
    r = np.array(0.1, np.float32)
    t = np.array(3, np.int64)
    # R and T are initializers: msame's .npy inputs cannot be 0-d.
    consts = [("R", r), ("T", t)]
    ins = []
    for kind in ["X", "G"] + state_names:
        for g in range(n_groups):
            ins.append((f"{kind}{g}", f32(*shapes[g], lo=0.1, hi=1.0).astype(dtype)))
    outs = [f"{k}{g}_new" for k in ["X"] + state_names for g in range(n_groups)]
    node = helper.make_node(op, ["R", "T"] + [n for n, _ in ins], outs, domain="ai.onnx.preview.training", **attrs)
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                                          a.shape) for n, a in ins],
                              [helper.make_empty_tensor_value_info(o) for o in outs],
                              initializer=[numpy_helper.from_array(a, n) for n, a in consts])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.preview.training", 1)])
    model.ir_version = 8
    return model, dict(ins)


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
def test_momentum_matches_formula(mode):
    a, b, nc = 0.9, 0.3, 0.01
    model, f = training_model("Momentum", 2, ["V"], {"alpha": a, "beta": b, "mode": mode, "norm_coefficient": nc})
    xs, vs = [], []
    for g in range(2):
        x, gr, v = (f[f"{k}{g}"].astype(np.float64) for k in "XGV")
        gr = nc * x + gr
        v_new = a * v + b * gr
        xs.append(x - 0.1 * (v_new if mode == "standard" else gr + a * v_new))
        vs.append(v_new)
    check_numpy(model, f, [o.astype(np.float32) for o in xs + vs])


def test_adagrad_matches_formula():
    model, f = training_model("Adagrad", 1, ["H"], {"decay_factor": 0.1, "epsilon": 1e-4, "norm_coefficient": 0.02},
                              dtype=np.float64)
    x, g, h = f["X0"], f["G0"], f["H0"]
    g = 0.02 * x + g
    h_new = h + g * g
    rate = 0.1 / (1 + 3 * 0.1)
    check_numpy(model, f, [x - rate * g / (np.sqrt(h_new) + 1e-4), h_new], rtol=1e-6)


def test_adam_matches_formula():
    al, be, eps, nc, ncp = 0.8, 0.95, 1e-3, 0.01, 0.02
    model, f = training_model("Adam", 2, ["V", "H"], {"alpha": al, "beta": be, "epsilon": eps,
                                                      "norm_coefficient": nc, "norm_coefficient_post": ncp})
    al, be, eps, nc, ncp = (float(np.float32(v)) for v in (al, be, eps, nc, ncp))
    res = {"X": [], "V": [], "H": []}
    for g in range(2):
        x, gr, v, h = (f[f"{k}{g}"].astype(np.float64) for k in "XGVH")
        gr = nc * x + gr
        v = al * v + (1 - al) * gr
        h = be * h + (1 - be) * gr * gr
        rate = float(np.float32(0.1)) * np.sqrt(1 - be ** 3) / (1 - al ** 3)
        res["X"].append((1 - ncp) * (x - rate * v / (np.sqrt(h) + eps)))
        res["V"].append(v)
        res["H"].append(h)
    check_numpy(model, f, [o.astype(np.float32) for o in res["X"] + res["V"] + res["H"]])


def test_bernoulli_seeded_draws_are_binary_repeatable_and_follow_p():
    p = np.repeat(np.array([0.0, 0.2, 0.5, 0.9, 1.0], np.float32), 4000).reshape(5, 4000)
    model, feeds = model_of("Bernoulli", [("p", p)], attrs={"seed": 3.0}, opset=22)
    a = ours(model, feeds)[0]
    b = ours(model, feeds)[0]
    assert a.dtype == np.float32 and set(np.unique(a)) <= {0.0, 1.0}
    np.testing.assert_array_equal(a, b)  # same seed, freshly loaded model: same draws
    np.testing.assert_allclose(a.mean(axis=1), p[:, 0], atol=0.03)
    assert a[0].sum() == 0 and a[4].sum() == 4000


def test_random_uniform_and_normal_moments():
    model, feeds = model_of("RandomUniformLike", [("x", f32(200, 100))], attrs={"low": -2.0, "high": 4.0, "seed": 1.0})
    u = ours(model, feeds)[0]
    assert u.shape == (200, 100) and u.min() >= -2 and u.max() < 4 and abs(u.mean() - 1.0) < 0.05
    model, feeds = model_of("RandomNormalLike", [("x", f32(200, 100))], attrs={"mean": 1.5, "scale": 0.5, "seed": 2.0,
                                                                              "dtype": 11})
    z = ours(model, feeds)[0]
    assert z.dtype == np.float64 and abs(z.mean() - 1.5) < 0.02 and abs(z.std() - 0.5) < 0.02


def random_forest(n_trees, depth, n_features, n_targets, rng):
    """Complete binary trees with random comparisons (set membership included). Set members are
    non-zero integers: onnxruntime truncates features to int for membership tests, and the ONNX
    reference stops reading a set at a 0.0 member, so only such sets have one agreed meaning."""
    modes, feats, splits, tids, fids, tleaf, fleaf, missing, members = [], [], [], [], [], [], [], [], []
    leaf_w, leaf_t, roots = [], [], []

    def build(d):
        i = len(modes)
        mode = int(rng.integers(0, 7))
        modes.append(mode)
        feats.append(int(rng.integers(0, n_features)))
        splits.append(float(np.float32(rng.normal())) if mode != 6 else float("nan"))
        if mode == 6:
            members.extend([float(np.float32(v)) for v in rng.choice([-2, -1, 1, 2, 3], 2, replace=False)] + [np.nan])
        missing.append(int(rng.integers(0, 2)))
        tids.append(0), fids.append(0), tleaf.append(0), fleaf.append(0)
        for side, ids, leafs in ((0, tids, tleaf), (1, fids, fleaf)):
            if d == depth:
                ids[i] = len(leaf_w)
                leafs[i] = 1
                leaf_w.append(float(np.float32(rng.normal())))
                leaf_t.append(int(rng.integers(0, n_targets)))
            else:
                ids[i] = build(d + 1)
        return i

    for _ in range(n_trees):
        roots.append(build(1))
    t = lambda name, v, dt: helper.make_tensor(name, dt, [len(v)], v)
    attrs = {
        "nodes_modes": t("nodes_modes", modes, onnx.TensorProto.UINT8),
        "nodes_featureids": feats, "nodes_splits": t("nodes_splits", splits, onnx.TensorProto.FLOAT),
        "nodes_truenodeids": tids, "nodes_falsenodeids": fids, "nodes_trueleafs": tleaf, "nodes_falseleafs": fleaf,
        "nodes_missing_value_tracks_true": missing, "leaf_targetids": leaf_t,
        "leaf_weights": t("leaf_weights", leaf_w, onnx.TensorProto.FLOAT), "tree_roots": roots, "n_targets": n_targets,
    }
    if members:
        attrs["membership_values"] = t("membership_values", members, onnx.TensorProto.FLOAT)
    return attrs


def tree_model(aggregate, post, seed):
    rng = np.random.default_rng(seed)
    attrs = random_forest(n_trees=6, depth=4, n_features=5, n_targets=3, rng=rng)
    attrs.update(aggregate_function=aggregate, post_transform=post)
    x = rng.integers(-3, 4, (40, 5)).astype(np.float32)  # integral: see random_forest
    x[rng.random(x.shape) < 0.1] = np.nan
    return model_of("TreeEnsemble", [("x", x)], attrs=attrs, domain="ai.onnx.ml", extra_opsets=[("ai.onnx.ml", 5)])


@pytest.mark.parametrize("aggregate,post", [(1, 0), (0, 0), (1, 3)])
def test_tree_ensemble_matches_onnxruntime(aggregate, post):
    model, feeds = tree_model(aggregate, post, 100 + 10 * aggregate + post)
    compile_and_compare(model, feeds, rtol=1e-5, atol=1e-6)


# onnxruntime 1.32 differs from the ONNX text in two places, so these use the ONNX reference
# evaluator (which skips post_transform) plus numpy: it reads post_transform 1 as LOGISTIC and 2
# as SOFTMAX (the spec: 1 SOFTMAX, 2 LOGISTIC), and leaves MIN/MAX targets no leaf reached at 0
# where the reference leaves the dtype's max/lowest.
@pytest.mark.parametrize("aggregate,post", [(2, 0), (3, 0), (1, 1), (0, 2)])
def test_tree_ensemble_matches_onnx_reference(aggregate, post):
    from onnx.reference import ReferenceEvaluator
    model, feeds = tree_model(aggregate, post, 200 + 10 * aggregate + post)
    raw = ReferenceEvaluator(model).run(None, feeds)[0].astype(np.float64)
    if post == 1:
        e = np.exp(raw - raw.max(axis=1, keepdims=True))
        raw = e / e.sum(axis=1, keepdims=True)
    elif post == 2:
        raw = 1 / (1 + np.exp(-raw))
    check_numpy(model, feeds, [raw.astype(np.float32)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,fn", [("Tan", np.tan), ("Asinh", np.arcsinh), ("Hardmax", None),
                                   ("MeanVarianceNormalization", None)])
def test_float16_runs_in_float32_between_casts(op, fn):
    x = f32(2, 3, 4, 3, lo=-1, hi=1).astype(np.float16)
    model, feeds = model_of(op, [("x", x)], opset=17)
    xf = x.astype(np.float32)
    if op == "Hardmax":
        y = (xf == xf.max(axis=-1, keepdims=True)).astype(np.float32)  # no ties in random data
    elif op == "MeanVarianceNormalization":
        m = xf.mean(axis=(0, 2, 3), keepdims=True)
        y = (xf - m) / (np.sqrt(((xf - m) ** 2).mean(axis=(0, 2, 3), keepdims=True)) + 1e-9)
    else:
        y = fn(xf)
    check_numpy(model, feeds, [y.astype(np.float16)], rtol=2e-3, atol=2e-3)


def test_softmax_cross_entropy_float16_with_log_prob():
    x = f32(4, 5, 3, lo=-2, hi=2).astype(np.float16)
    t = R.integers(0, 5, (4, 3)).astype(np.int64)
    model, feeds = model_of("SoftmaxCrossEntropyLoss", [("x", x), ("t", t)], attrs={"reduction": "sum"}, n_out=2,
                            opset=13)
    xf = x.astype(np.float64)
    lp = xf - xf.max(axis=1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(axis=1, keepdims=True))
    loss = -np.take_along_axis(lp, t[:, None, :], axis=1).sum()
    check_numpy(model, feeds, [np.array(loss, np.float16), lp.astype(np.float16)], rtol=2e-3, atol=2e-3)


def test_reverse_sequence_moves_bfloat16_bits_unchanged():
    # bfloat16 as raw uint16 bits would need ml_dtypes; float16 exercises the same byte-moving path.
    x = f32(5, 3, 2).astype(np.float16)
    model, feeds = model_of("ReverseSequence", [("x", x), ("l", np.array([5, 2, 1], np.int64))],
                            attrs={"batch_axis": 1, "time_axis": 0})
    y = x.copy()
    for b, n in enumerate([5, 2, 1]):
        y[:n, b] = x[:n, b][::-1]
    check_numpy(model, feeds, [y], rtol=0, atol=0)


def test_random_uniform_from_shape_attribute():
    node = helper.make_node("RandomUniform", [], ["u"], shape=[50, 40], low=1.0, high=2.0, seed=7.0)
    add = helper.make_node("Add", ["u", "x"], ["y0"])
    graph = helper.make_graph([node, add], "g", [helper.make_tensor_value_info("x", 1, [1])],
                              [helper.make_empty_tensor_value_info("y0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    y = ours(model, {"x": np.zeros(1, np.float32)})[0]
    assert y.shape == (50, 40) and y.min() >= 1 and y.max() < 2 and abs(y.mean() - 1.5) < 0.03
    assert len(np.unique(y)) > 1900  # distinct draws, not one value repeated


def test_tree_ensemble_probit_matches_onnxruntime():
    model, feeds = tree_model(0, 4, 321)  # AVERAGE of weights in (0, 1) stays in (0, 1)
    attrs = {a.name: a for a in model.graph.node[0].attribute}
    n_leaves = len(attrs["leaf_targetids"].ints)
    w = np.random.default_rng(5).uniform(0.05, 0.95, n_leaves).astype(np.float32)
    attrs["leaf_weights"].t.CopyFrom(numpy_helper.from_array(w, "leaf_weights"))
    del attrs["leaf_targetids"].ints[:]
    attrs["leaf_targetids"].ints.extend([0] * n_leaves)  # one target, so every row reaches it
    attrs["n_targets"].i = 1
    feeds = {"x": feeds["x"]}
    model.graph.output[0].CopyFrom(helper.make_empty_tensor_value_info("y0"))
    compile_and_compare(model, feeds, rtol=1e-3, atol=1e-3)


def test_shrink_int32_matches_onnxruntime():
    x = R.integers(-20, 20, (5, 9)).astype(np.int32)
    model, feeds = model_of("Shrink", [("x", x)], attrs={"lambd": 3.0, "bias": 2.0})
    compile_and_compare(model, feeds)


# ---- TfIdfVectorizer (integer token ids) against onnxruntime ------------------------------------

def tfidf_model(x, mode, min_gram, max_gram, max_skip, rng, weights=True):
    """A pool of 6 unigrams, 8 bigrams and 5 trigrams over a small vocabulary (so that
    the rows hit many of them), output coordinates a permutation of the n-grams."""
    vocab = 7
    uni = rng.choice(vocab, 6, replace=False)
    bi = {tuple(rng.integers(0, vocab, 2)) for _ in range(40)}
    tri = {tuple(rng.integers(0, vocab, 3)) for _ in range(40)}
    bi, tri = sorted(bi)[:8], sorted(tri)[:5]
    pool = [int(u) for u in uni] + [int(t) for g in bi for t in g] + [int(t) for g in tri for t in g]
    n = len(uni) + len(bi) + len(tri)
    attrs = dict(mode=mode, min_gram_length=min_gram, max_gram_length=max_gram, max_skip_count=max_skip,
                 ngram_counts=[0, len(uni), len(uni) + 2 * len(bi)], ngram_indexes=[int(i) for i in rng.permutation(n)],
                 pool_int64s=pool)
    if weights:
        attrs["weights"] = [float(w) for w in rng.random(n).astype(np.float32) + 0.5]
    return model_of("TfIdfVectorizer", [("x", x)], attrs=attrs, opset=17)


@pytest.mark.parametrize("mode,min_gram,max_gram,max_skip,dtype,shape,weights", [
    ("TF", 1, 3, 0, np.int64, (64,), False),
    ("TF", 2, 3, 3, np.int32, (4, 40), False),
    ("IDF", 1, 2, 2, np.int64, (3, 50), True),
    ("IDF", 1, 3, 1, np.int32, (50,), False),
    ("TFIDF", 1, 3, 4, np.int64, (5, 33), True),
    ("TFIDF", 3, 3, 2, np.int32, (2, 60), True),
    ("TF", 1, 1, 5, np.int64, (2, 30), False),   # unigrams are counted once, whatever the skip
    ("TF", 1, 3, 2, np.int64, (2, 0), False),    # empty rows: all zeros
])
def test_tfidf_vectorizer_matches_onnxruntime(mode, min_gram, max_gram, max_skip, dtype, shape, weights):
    rng = np.random.default_rng(sum(shape) + max_skip * 7 + min_gram)
    x = rng.integers(0, 7, shape).astype(dtype)
    model, feeds = tfidf_model(x, mode, min_gram, max_gram, max_skip, rng, weights)
    compile_and_compare(model, feeds, rtol=1e-6, atol=0)


def test_tfidf_vectorizer_string_pool_is_not_supported():
    model, feeds = model_of("TfIdfVectorizer", [("x", np.zeros(4, np.int64))],
                            attrs=dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                                       ngram_counts=[0], ngram_indexes=[0, 1], pool_strings=["a", "b"]), opset=17)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        _, proc = atc_compile(path, os.path.join(d, "model"), {"x": [4]}, check=False)
    assert proc.returncode != 0 and "not supported" in proc.stdout + proc.stderr
    assert "TfIdfVectorizer" in proc.stdout + proc.stderr


@pytest.mark.parametrize("bad,expect", [
    (dict(mode="BM25"), "mode must be TF, IDF or TFIDF"),
    (dict(ngram_indexes=[0, 1]), "ngram_indexes has 2 entries"),
    (dict(ngram_counts=[0, 3]), "not a whole number of 2-grams"),
    (dict(ngram_counts=[0, 9]), "offsets within pool_int64s"),
    (dict(min_gram_length=3), "min_gram_length <= max_gram_length"),
    (dict(weights=[1.0]), "weights has 1 entries"),
    (dict(ngram_indexes=[0, 1, 1], weights=[1.0, 2.0, 3.0]), "different weights are not supported"),
    (dict(ngram_indexes=[0, 2 ** 62, 1]), "too wide an output"),
])
def test_tfidf_vectorizer_rejects_bad_attributes(bad, expect):
    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
                 ngram_indexes=[0, 1, 2], pool_int64s=[5, 6, 5, 6])
    attrs.update(bad)
    model, _ = model_of("TfIdfVectorizer", [("x", np.zeros(4, np.int64))], attrs=attrs, opset=17)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        _, proc = atc_compile(path, os.path.join(d, "model"), {"x": [4]}, check=False)
    assert proc.returncode != 0 and expect in proc.stdout + proc.stderr, proc.stdout + proc.stderr


# ---- MaxRoiPool against onnxruntime -------------------------------------------------------------

def roi_case(n, c, h, w, rois, pooled, scale, dtype=np.float32):
    x = f32(n, c, h, w, lo=-3, hi=3).astype(dtype)
    attrs = {"pooled_shape": list(pooled)}
    if scale is not None:
        attrs["spatial_scale"] = scale
    return model_of("MaxRoiPool", [("x", x), ("rois", np.asarray(rois, dtype))], attrs=attrs, opset=17)


ROIS = [[0, 0, 0, 14, 11], [1, 2.4, 3.5, 9.6, 8.5], [0, 5, 5, 5, 5], [1, -4, -3, 30, 25],
        [0, 13, 10, 2, 1], [1, 7.5, 0.5, 12.49, 6.51], [0, 20, 20, 40, 40]]


@pytest.mark.parametrize("pooled,scale", [((3, 4), None), ((2, 2), 0.5), ((7, 5), 1.0), ((1, 1), 2.0),
                                          ((6, 6), 0.25)])
def test_max_roi_pool_matches_onnxruntime(pooled, scale):
    model, feeds = roi_case(2, 3, 12, 15, ROIS, pooled, scale)
    compile_and_compare(model, feeds, rtol=0, atol=0)


def test_max_roi_pool_float64_matches_float32_reference():
    # onnxruntime has MaxRoiPool for float32 only: the float64 model must give the
    # float32 model's result on values that are exact in both.
    m32, f = roi_case(1, 2, 9, 11, [[0] + r[1:] for r in ROIS], (3, 3), 1.0)
    x64 = {k: v.astype(np.float64) for k, v in f.items()}
    m64, _ = model_of("MaxRoiPool", [("x", x64["x"]), ("rois", x64["rois"])], attrs={"pooled_shape": [3, 3]},
                      opset=17)
    from oc_harness import ort_run
    expected = ort_run(m32, f)[0].astype(np.float64)
    check_numpy(m64, x64, [expected], rtol=0, atol=0)


@pytest.mark.parametrize("rois,expect", [([[2, 0, 0, 3, 3]], "batch index 2"), ([[0.5, 0, 0, 3, 3]], "batch index 0.5"),
                                         ([[0, np.nan, 0, 3, 3]], "non-finite")])
def test_max_roi_pool_rejects_bad_regions(rois, expect):
    model, feeds = roi_case(2, 1, 5, 5, rois, (2, 2), None)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        om, _ = atc_compile(path, os.path.join(d, "model"), {k: list(v.shape) for k, v in feeds.items()})
        _, proc = msame_run(om, list(feeds.values()), d, check=False)
    assert proc.returncode != 0 and expect in proc.stdout + proc.stderr, proc.stdout + proc.stderr


# ---- Multinomial: draws follow softmax(x); seeded runs repeat ------------------------------------

def multinomial_model(x, samples, seed=None, dtype=None):
    attrs = {"sample_size": samples}
    if seed is not None:
        attrs["seed"] = seed
    if dtype is not None:
        attrs["dtype"] = dtype
    return model_of("Multinomial", [("x", x)], attrs=attrs, opset=17)


@pytest.mark.parametrize("in_dtype,out_dtype", [(np.float32, None), (np.float64, 7)])
def test_multinomial_frequencies_follow_softmax(in_dtype, out_dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 6)) * 1.5).astype(in_dtype)
    x[2, 4] = -np.inf  # a class that must never be drawn
    n = 20000
    model, feeds = multinomial_model(x, n, seed=3.0, dtype=out_dtype)
    y = ours(model, feeds)[0]
    assert y.shape == (3, n) and y.dtype == (np.int64 if out_dtype == 7 else np.int32)
    assert y.min() >= 0 and y.max() < 6
    p = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    assert not np.any(y[2] == 4)
    for r in range(3):
        counts = np.bincount(y[r], minlength=6)
        live = p[r] > 0
        expected = p[r][live] * n
        chi2 = float(((counts[live] - expected) ** 2 / expected).sum())
        # 40.5 is the chi-square distribution's 1 - 1e-6 quantile for 7 degrees of
        # freedom (scipy.stats.chi2.ppf), above the 5 (or 4) a row has here.
        assert chi2 < 40.5, f"row {r}: counts {counts} vs expected {expected.round(1)} (chi2 {chi2:.1f})"


def test_multinomial_seed_repeats_and_differs():
    x = np.log(np.full((2, 10), 0.1, np.float32))
    a = ours(*multinomial_model(x, 500, seed=1.0))[0]
    b = ours(*multinomial_model(x, 500, seed=1.0))[0]
    c = ours(*multinomial_model(x, 500, seed=2.0))[0]
    np.testing.assert_array_equal(a, b)
    assert np.mean(a != c) > 0.5


def test_multinomial_rejects_nan_rows():
    x = np.array([[0.0, np.nan, 1.0]], np.float32)
    model, feeds = multinomial_model(x, 4)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        om, _ = atc_compile(path, os.path.join(d, "model"), {"x": [1, 3]})
        _, proc = msame_run(om, [x], d, check=False)
    assert proc.returncode != 0 and "NaN or +inf" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_tfidf_vectorizer_huge_skip_equals_the_longest_useful_skip():
    # A skip of cols - 1 or more leaves no room for a second token, so 10^12
    # must give what cols - 1 gives (onnxruntime computes that one), at once.
    rng = np.random.default_rng(9)
    x = rng.integers(0, 7, (3, 12)).astype(np.int64)
    model, feeds = tfidf_model(x, "TF", 1, 3, 11, np.random.default_rng(1), weights=False)
    from oc_harness import ort_run
    expected = ort_run(model, feeds)[0]
    huge, _ = tfidf_model(x, "TF", 1, 3, 10 ** 12, np.random.default_rng(1), weights=False)
    check_numpy(huge, feeds, [expected], rtol=0, atol=0)


# ---- SiLU (x * Sigmoid(x)) fused into Conv / MatMul as the Swish activation ---------------------

def one_input_model(nodes, x, inits, name):
    """A model of `nodes` reading input "x" and writing output "z"."""
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", 1, x.shape)],
                          [helper.make_empty_tensor_value_info("z")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, {"x": x}


def compiled_graph(model, feeds):
    """The graph atc compiled (its --log=debug dump after the last pass)."""
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        _, proc = atc_compile(path, os.path.join(d, "model"), {"x": list(feeds["x"].shape)}, ["--log=debug"])
    return (proc.stdout + proc.stderr).split("pass memory-planning")[-1]


def silu_model(kind):
    """Conv + SiLU (EfficientNet) or MatMul + SiLU (a LLaMA-style MLP gate)."""
    if kind == "conv":
        x = f32(1, 8, 12, 12)
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
                 helper.make_node("Sigmoid", ["y"], ["s"]), helper.make_node("Mul", ["s", "y"], ["z"])]
        inits = [numpy_helper.from_array(f32(16, 8, 3, 3), "w"), numpy_helper.from_array(f32(16), "b")]
    else:
        x = f32(2, 5, 24)
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
                 helper.make_node("Sigmoid", ["y"], ["s"]), helper.make_node("Mul", ["y", "s"], ["z"])]
        inits = [numpy_helper.from_array(f32(24, 40), "w")]
    return one_input_model(nodes, x, inits, "silu")


@pytest.mark.parametrize("kind", ["conv", "matmul"])
def test_silu_fuses_and_matches_onnxruntime(kind):
    model, feeds = silu_model(kind)
    compile_and_compare(model, feeds, rtol=1e-5, atol=1e-6)
    # The compiled graph has one fused node and no Sigmoid/Mul left.
    compiled = compiled_graph(model, feeds)
    assert 'activation="Swish"' in compiled and "Sigmoid(" not in compiled and " Mul(" not in compiled, compiled


# ---- hard-swish / hard-sigmoid spelled with relu6(y + 3) / 6 (PaddlePaddle exports) ------------

def relu6_model(kind):
    """Conv + hard-swish; MatMul + hard-sigmoid (after a Conv, fold-conv-batchnorm
    takes the + 3 into the bias first and the Clip fuses alone)."""
    x = f32(1, 8, 10, 10, lo=-2, hi=2)
    three, zero, six = (numpy_helper.from_array(np.array(v, np.float32), n)
                        for v, n in ((3.0, "three"), (0.0, "zero"), (6.0, "six")))
    producer = (helper.make_node("MatMul", ["x", "wm"], ["y"]) if kind == "sigmoid"
                else helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]))
    nodes = [producer,
             helper.make_node("Add", ["y", "three"], ["p3"]),
             helper.make_node("Clip", ["p3", "zero", "six"], ["c"])]
    if kind == "swish_mul_first":
        nodes += [helper.make_node("Mul", ["y", "c"], ["t"]), helper.make_node("Div", ["t", "six"], ["z"])]
    elif kind == "swish_div_first":
        nodes += [helper.make_node("Div", ["c", "six"], ["t"]), helper.make_node("Mul", ["t", "y"], ["z"])]
    else:
        nodes += [helper.make_node("Div", ["c", "six"], ["z"])]
    inits = [numpy_helper.from_array(f32(16, 8, 3, 3), "w"), numpy_helper.from_array(f32(16), "b"),
             numpy_helper.from_array(f32(10, 12, lo=-3, hi=3), "wm"), three, zero, six]
    return one_input_model(nodes, x, inits, "relu6")


@pytest.mark.parametrize("kind", ["swish_mul_first", "swish_div_first", "sigmoid"])
def test_relu6_spellings_fuse_and_match_onnxruntime(kind):
    model, feeds = relu6_model(kind)
    compile_and_compare(model, feeds, rtol=1e-5, atol=1e-6)
    compiled = compiled_graph(model, feeds)
    want = "HardSigmoid" if kind == "sigmoid" else "HardSwish"
    assert f'activation="{want}"' in compiled and "Clip(" not in compiled and "Div(" not in compiled, compiled
