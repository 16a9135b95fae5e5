"""Real models that ship inside the onnx pip package (backend/test/data/light),
through atc + msame, compared with onnxruntime at rtol 1e-3.

The light models compute their weights with ConstantOfShape(0.02), so every
channel is alike; each model is also run with those constants replaced by
random initializers (scripts/model_zoo.py's randomise_light), which makes
channel order (Concat, the ShuffleNet Transpose, grouped convs) visible.
The CI subset keeps to the models that compile and run in a few seconds;
scripts/model_zoo.py runs all of them (and the torch-exported ones)."""
import importlib.util
import os

import numpy as np
import onnx
import pytest

from oc_harness import SOURCE_DIR, compile_and_compare, ort_run

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")

_spec = importlib.util.spec_from_file_location("zoo_script", os.path.join(SOURCE_DIR, "scripts", "model_zoo.py"))
zoo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo)

# (model, random weights)
CASES = [("squeezenet", False), ("squeezenet", True), ("shufflenet", False), ("shufflenet", True),
         ("inception_v1", False), ("inception_v1", True)]


def load_light(stem):
    path = os.path.join(LIGHT_DIR, f"light_{stem}.onnx")
    if not os.path.exists(path):
        pytest.skip(f"the onnx package has no {path}")
    return onnx.load(path)


def image_feeds(model, seed=0):
    feeds = zoo.default_feeds(model, np.random.default_rng(seed))
    assert len(feeds) == 1 and next(iter(feeds.values())).shape == (1, 3, 224, 224)
    return feeds


@pytest.mark.parametrize("stem,random_weights", CASES, ids=[f"{s}{'_randw' if r else ''}" for s, r in CASES])
def test_light_model_matches_onnxruntime(stem, random_weights):
    # The probabilities saturate (uniform or one-hot): the logits are compared too.
    model = zoo.expose_logits(load_light(stem))
    assert len(model.graph.output) == 2
    if random_weights:
        model = zoo.randomise_light(model)
        assert not any(n.op_type == "ConstantOfShape" for n in model.graph.node)
    feeds = image_feeds(model)
    # Elements near zero in large-valued logits: an absolute floor tied to their scale.
    scale = float(np.abs(ort_run(model, feeds)[1]).max())
    probs, logits = compile_and_compare(model, feeds, rtol=1e-3, atol=1e-6 + 1e-4 * scale)
    # Every light model ends in Softmax over 1000 classes.
    assert probs.size == 1000 and logits.size == 1000
    np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-4)


def test_randomised_weights_differ_per_channel():
    """The point of the random variant: channels must not be interchangeable."""
    model = zoo.randomise_light(load_light("squeezenet"))
    w = next(onnx.numpy_helper.to_array(i) for i in model.graph.initializer if i.dims and len(i.dims) == 4)
    assert w.std() > 0 and not np.allclose(w[0], w[1])


# ---- real trained weights from a PyPI wheel: magika's file-type classifier

MAGIKA_FILES = ["scripts/model_zoo.py", "src/graph/graph.h", "docs/models.md", "CMakeLists.txt", "Makefile"]


def test_magika_real_weights_match_onnxruntime_and_classify_like_magika():
    """magika (scripts/install_deps.sh installs it; 3 MB ONNX model with
    trained weights inside the wheel) classifies files from their first and
    last KiB. Ours must match onnxruntime on the scores and give the label
    magika's own pipeline gives for real files of this repository."""
    magika = pytest.importorskip("magika", reason="pip package magika (installed by scripts/install_deps.sh)")
    import glob
    import json
    # 1.0.3 ships standard_v3_3; a later version may ship a newer model next to it.
    found = sorted(glob.glob(os.path.join(os.path.dirname(magika.__file__), "models", "standard_v*", "model.onnx")))
    if not found:
        pytest.skip("this magika version ships no models/standard_v*/model.onnx")
    root = os.path.dirname(found[-1])
    model = onnx.load(found[-1])
    cfg = json.load(open(os.path.join(root, "config.min.json")))
    if cfg.get("mid_size") or cfg.get("use_inputs_at_offsets"):
        pytest.skip(f"{root}: features other than the first/last bytes")
    labels = cfg["target_labels_space"]
    paths = [os.path.join(SOURCE_DIR, f) for f in MAGIKA_FILES]
    # Files over magika's read block: its features are then exactly the
    # stripped first and last bytes that zoo.magika_features builds.
    assert all(os.path.getsize(p) > cfg["block_size"] for p in paths)
    feats = np.stack([zoo.magika_features(open(p, "rb").read(), cfg["beg_size"], cfg["end_size"],
                                          cfg["padding_token"]) for p in paths])
    (scores,) = compile_and_compare(model, {"bytes": feats}, rtol=1e-3, atol=1e-6)
    ours = [labels[i] for i in scores.argmax(axis=1)]
    reference = magika.Magika()
    theirs = [reference.identify_path(p).dl.label for p in paths]
    assert ours == theirs
    assert ours[0] == "python" and ours[2] == "markdown"
