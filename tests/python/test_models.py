"""Whole architectures through atc + msame, compared with onnxruntime at rtol 1e-3."""
import os

import numpy as np
import onnx
import pytest

import model_zoo
from oc_harness import SOURCE_DIR, compile_and_compare

RNG = np.random.default_rng(1234)


def image(batch, size):
    return RNG.random((batch, 3, size, size), dtype=np.float32)


@pytest.mark.parametrize("batch", [1, 2])
def test_resnet_matches_onnxruntime(batch):
    compile_and_compare(model_zoo.resnet(batch=batch), {"input": image(batch, 64)}, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 3])
def test_mobilenet_v2_matches_onnxruntime(batch):
    compile_and_compare(model_zoo.mobilenet_v2(batch=batch), {"input": image(batch, 64)}, atol=1e-5)


@pytest.mark.parametrize("batch,seq", [(1, 16), (2, 24)])
def test_transformer_encoder_matches_onnxruntime(batch, seq):
    ids = RNG.integers(0, 100, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), np.int64)
    mask[:, seq - 3:] = 0
    compile_and_compare(model_zoo.transformer_encoder(batch=batch, seq=seq),
                        {"input_ids": ids, "attention_mask": mask}, atol=1e-4)


def test_lstm_gru_matches_onnxruntime():
    x = RNG.standard_normal((12, 2, 8), dtype=np.float32)
    compile_and_compare(model_zoo.lstm_classifier(), {"input": x}, atol=1e-5)


def test_bundled_digits_model_matches_onnxruntime_and_classifies():
    model_dir = os.path.join(SOURCE_DIR, "models", "digits")
    model = onnx.load(os.path.join(model_dir, "digits_mlp.onnx"))
    samples = np.load(os.path.join(model_dir, "samples.npy"))
    labels = np.load(os.path.join(model_dir, "labels.npy"))
    (probs,) = compile_and_compare(model, {"image": samples}, atol=1e-6)
    assert np.mean(probs.argmax(axis=1) == labels) >= 0.9
