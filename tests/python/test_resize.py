"""Resize against onnxruntime, for the plane path (the last two axes enlarged,
input rows interpolated once and blended into several output rows) and the
general path next to it (an outer axis interpolated, shrinking), at 1 and 2
threads."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from oc_harness import compile_and_compare

R = np.random.default_rng(31)

# input shape, scales (or None), sizes (or None), attributes
CASES = {
    "deeplab_bilinear_8x": ((1, 21, 28, 28), None, [1, 21, 224, 224], {"mode": "linear"}),
    "yolo_nearest_2x": ((1, 64, 20, 20), [1, 1, 2, 2], None,
                        {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}),
    "cubic_align_corners_one_plane": ((1, 1, 9, 11), [1, 1, 3, 3], None,
                                      {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}),
    "linear_pytorch_odd_sizes": ((2, 3, 17, 13), None, [2, 3, 40, 31],
                                 {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}),
    "rank3_last_two": ((2, 10, 15), None, [2, 25, 24], {"mode": "linear"}),
    "rows_only": ((1, 4, 10, 16), None, [1, 4, 30, 16], {"mode": "linear"}),
    "cubic_exclude_outside": ((1, 3, 8, 8), [1, 1, 2.5, 1.5], None,
                              {"mode": "cubic", "exclude_outside": 1}),
    "channels_nearest": ((1, 4, 6, 6), [1, 2, 2, 2], None, {"mode": "nearest"}),  # outer axis single-tap
    # general path (src/ops/cpu/fast_paths_test.cc checks which kernel each shape gets)
    "trilinear_depth_too": ((1, 2, 4, 6, 6), [1, 1, 2, 2, 2], None, {"mode": "linear"}),
    "shrink": ((1, 3, 40, 30), None, [1, 3, 17, 12], {"mode": "linear"}),
    "outer_axis_linear": ((4, 6, 6), [2, 2, 2], None, {"mode": "linear"}),
}


def model(shape, scales, sizes, attrs):
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi")]
    names = ["x", "roi"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        names.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.array([], np.float32), "scales"))
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        names += ["scales", "sizes"]
    node = helper.make_node("Resize", names, ["y"], **attrs)
    g = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_empty_tensor_value_info("y")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, {"x": R.standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_resize_matches_onnxruntime(case, threads, monkeypatch):
    monkeypatch.setenv("OPENCANN_NUM_THREADS", threads)
    m, feeds = model(*CASES[case])
    compile_and_compare(m, feeds, rtol=1e-5, atol=1e-5)
