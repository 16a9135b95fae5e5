"""Decoder-only models of src/llm/model/ (through build/oc-llm-generate)
against Hugging Face transformers, the independent reference.

Each case builds a tiny random-weight model with transformers (fixed seed),
saves it as safetensors, and checks that greedy generation of 64 tokens is
token-for-token what transformers' generate(do_sample=False) gives in
float32, with every step's logits within 1e-4 of the logits' scale; that
several prompts of different lengths run together (one batched forward per
step over the paged KV cache) give the same tokens as alone; and that broken
checkpoints are refused with messages naming what is wrong.
"""
import copy
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from oc_harness import BUILD_DIR  # noqa: E402

TOOL = os.path.join(BUILD_DIR, "oc-llm-generate")
NEW_TOKENS = 64
PROMPT = [3, 17, 29, 101, 7, 64, 250, 11]
BATCH = [[5, 9, 13], [3, 17, 29, 101, 7, 64, 250, 11, 40, 2, 77, 31, 8, 19, 60, 4, 23, 88, 6, 5], [42]]
VOCAB = 512


@pytest.fixture(autouse=True, scope="module")
def _tool_built():
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build the project (make build)")


def _llama_family(cls_cfg, cls_model, **kw):
    base = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=256)
    base.update(kw)
    return cls_model(cls_cfg(**base))


def build(kind):
    t = transformers
    torch.manual_seed(1234)
    if kind == "gpt2":
        m = t.GPT2LMHeadModel(t.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=128,
                                           bos_token_id=0, eos_token_id=0))
    elif kind == "llama":  # GQA 4/2, llama3 RoPE
        m = _llama_family(t.LlamaConfig, t.LlamaForCausalLM,
                          rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 32},
                          rope_theta=500.0)
    elif kind == "llama_variants":  # linear RoPE, biases, tied embeddings, head_dim != hidden / heads, MHA
        m = _llama_family(t.LlamaConfig, t.LlamaForCausalLM, num_key_value_heads=4, head_dim=24,
                          attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                          rope_scaling={"rope_type": "linear", "factor": 2.0}, num_hidden_layers=3)
    elif kind == "llama_dynamic":  # dynamic NTK RoPE: the default RoPE within max_position_embeddings
        m = _llama_family(t.LlamaConfig, t.LlamaForCausalLM, rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    elif kind == "qwen2":  # q/k/v biases; sliding window on the layers from max_window_layers on
        m = _llama_family(t.Qwen2Config, t.Qwen2ForCausalLM, use_sliding_window=True, sliding_window=12,
                          max_window_layers=1)
    elif kind == "mistral":  # sliding window shorter than the sequence, GQA 4/1
        m = _llama_family(t.MistralConfig, t.MistralForCausalLM, sliding_window=16, num_key_value_heads=1)
    else:
        raise ValueError(kind)
    # Random weights at init scale give near-uniform logits; scale them up so
    # that greedy choices are well separated.
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() >= 1:
                p.mul_(4.0 if p.dim() == 2 else 1.0)
    return m.eval()


def reference(model, prompt, n=NEW_TOKENS):
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                             output_logits=True, return_dict_in_generate=True)
    return out.sequences[0, len(prompt):].tolist(), torch.stack(out.logits, 1)[0].float().numpy()


def run(model_dir, *args, check=True, env=None):
    proc = subprocess.run([TOOL, "--model", str(model_dir), "--threads", "2", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def generate(model_dir, prompt, tmp, n=NEW_TOKENS, *extra):
    npy = os.path.join(tmp, "logits.npy")
    proc = run(model_dir, "--prompt-ids", ",".join(map(str, prompt)), "--max-tokens", n, "--dump-logits", npy, *extra)
    return json.loads(proc.stdout), np.load(npy)


def assert_close_logits(got, ref):
    assert got.shape == ref.shape
    err = np.abs(got - ref).max() / np.abs(ref).max()
    assert err < 1e-4, f"logits differ by {err:.3g} of their scale"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """kind -> (model, folder with its float32 safetensors checkpoint)."""
    cache = {}

    def get(kind):
        if kind not in cache:
            m = build(kind)
            d = tmp_path_factory.mktemp(kind)
            m.save_pretrained(d, safe_serialization=True)
            cache[kind] = (m, d)
        return cache[kind]
    return get


@pytest.mark.parametrize("kind", ["gpt2", "llama", "llama_variants", "llama_dynamic", "qwen2", "mistral"])
def test_greedy_generation_matches_transformers(kind, saved, tmp_path):
    model, d = saved(kind)
    ref_ids, ref_logits = reference(model, PROMPT)
    ids, logits = generate(d, PROMPT, tmp_path)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_checkpoints_load_widened(dtype, saved, tmp_path):
    model, _ = saved("llama")
    d = tmp_path / dtype
    # A copy: rounding the shared fixture's weights would change the other tests' reference.
    copy.deepcopy(model).to(getattr(torch, dtype)).save_pretrained(d, safe_serialization=True)
    # The reference reads the same half-precision weights widened to float32.
    ref = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
    ref_ids, ref_logits = reference(ref, PROMPT)
    ids, logits = generate(d, PROMPT, tmp_path)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


def test_sharded_checkpoint(saved, tmp_path):
    model, _ = saved("qwen2")
    d = tmp_path / "sharded"
    model.save_pretrained(d, safe_serialization=True, max_shard_size="100KB")
    assert (d / "model.safetensors.index.json").exists() and not (d / "model.safetensors").exists()
    assert len(list(d.glob("model-*-of-*.safetensors"))) > 1
    ref_ids, ref_logits = reference(model, PROMPT, 16)
    ids, logits = generate(d, PROMPT, tmp_path, 16)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


@pytest.mark.parametrize("kind,block_size,stagger", [("llama", 16, False), ("mistral", 4, False), ("gpt2", 5, False),
                                                    ("qwen2", 4, True), ("mistral", 16, True)])
def test_batched_prompts_match_solo_runs(kind, block_size, stagger, saved, tmp_path):
    # --stagger: prompt s joins at step s, so steps mix a prefill with the others' decodes.
    model, d = saved(kind)
    n = 24
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(BATCH))
    npy = tmp_path / "batch.npy"
    proc = run(d, "--batch", batch, "--max-tokens", n, "--block-size", block_size, "--dump-logits", npy,
               *(["--stagger"] if stagger else []))
    lines = [json.loads(x) for x in proc.stdout.split()]
    batched_logits = np.load(npy)
    assert batched_logits.shape == (len(BATCH), n, VOCAB)
    assert len(lines) == len(BATCH)
    for i, prompt in enumerate(BATCH):
        solo, solo_logits = generate(d, prompt, tmp_path, n, "--block-size", block_size)
        assert lines[i] == solo, f"prompt {i}"
        assert_close_logits(batched_logits[i], solo_logits)
        ref_ids, _ = reference(model, prompt, n)
        assert solo == ref_ids, f"prompt {i}"


def copy_model(saved, kind, tmp_path):
    _, d = saved(kind)
    dst = tmp_path / "m"
    shutil.copytree(d, dst)
    return dst


def refusal(d, *extra):
    proc = run(d, "--prompt-ids", "1,2,3", "--max-tokens", 2, *extra, check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    return proc.stderr


def test_truncated_safetensors_is_refused(saved, tmp_path):
    d = copy_model(saved, "llama", tmp_path)
    f = d / "model.safetensors"
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    err = refusal(d)
    assert "truncated safetensors file" in err and "model.safetensors" in err and "tensor '" in err, err
    f.write_bytes(data[:5])
    assert "expected at least 8" in refusal(d)
    f.write_bytes((10**9).to_bytes(8, "little") + data[8:100])
    err = refusal(d)
    assert "truncated safetensors file: header length 1000000000" in err, err


def test_tensor_with_wrong_shape_is_refused(saved, tmp_path):
    from safetensors.torch import load_file, save_file
    d = copy_model(saved, "llama", tmp_path)
    tensors = load_file(d / "model.safetensors")
    name = "model.layers.1.self_attn.k_proj.weight"
    tensors[name] = torch.zeros(16, 64)
    save_file(tensors, d / "model.safetensors", metadata={"format": "pt"})
    err = refusal(d)
    assert f"tensor '{name}' has shape [16, 64], expected [32, 64]" in err, err


def test_missing_tensor_is_refused(saved, tmp_path):
    from safetensors.torch import load_file, save_file
    d = copy_model(saved, "gpt2", tmp_path)
    tensors = load_file(d / "model.safetensors")
    del tensors["transformer.h.1.mlp.c_fc.bias"]
    save_file(tensors, d / "model.safetensors", metadata={"format": "pt"})
    err = refusal(d)
    assert "tensor 'transformer.h.1.mlp.c_fc.bias' (shape [256]) is missing" in err, err


@pytest.mark.parametrize("edit,message", [
    ({"model_type": "falcon"}, 'model_type "falcon" is not supported (supported: gpt2, llama, qwen2, mistral)'),
    ({"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0}},
     'RoPE type "yarn" is not supported'),
    ({"hidden_act": "gelu_quick"}, 'hidden_act "gelu_quick" is not supported'),
    ({"num_key_value_heads": 3}, "num_attention_heads 4 is not a multiple of num_key_value_heads 3"),
])
def test_unsupported_or_bad_config_is_refused(edit, message, saved, tmp_path):
    d = copy_model(saved, "llama", tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(edit)
    (d / "config.json").write_text(json.dumps(cfg))
    err = refusal(d)
    assert message in err, err


def test_bad_prompt_is_refused(saved):
    _, d = saved("gpt2")
    assert "token 1 is 9999, expected 0..511" in refusal(d, "--prompt-ids", "1,9999")
    proc = run(d, "--prompt-ids", "1,x", check=False)
    assert proc.returncode != 0 and '"x" is not a token id' in proc.stderr
    # gpt2 has 128 learned positions.
    proc = run(d, "--prompt-ids", "1,2", "--max-tokens", 200, check=False)
    assert proc.returncode != 0 and "n_positions 128" in proc.stderr


def test_long_prompt_prefill(saved, tmp_path):
    # 100 prompt tokens: GEMMs past the first plan's rows, seven blocks per sequence.
    model, d = saved("llama")
    prompt = [(i * 37 + 5) % VOCAB for i in range(100)]
    ref_ids, ref_logits = reference(model, prompt, 8)
    ids, logits = generate(d, prompt, tmp_path, 8)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


def test_sliding_window_is_applied(saved, tmp_path):
    # The same weights without the window give other tokens: the window test above is not vacuous.
    model, _ = saved("mistral")
    d = copy_model(saved, "mistral", tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg["sliding_window"] = None
    (d / "config.json").write_text(json.dumps(cfg))
    ref_ids, _ = reference(model, PROMPT)
    ids, _ = generate(d, PROMPT, tmp_path)
    assert ids != ref_ids


def rewrite_header(path, edit):
    """Rewrites a safetensors file's JSON header through edit(header) -> header (data kept)."""
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    new = json.dumps(edit(header)).encode()
    path.write_bytes(len(new).to_bytes(8, "little") + new + raw[8 + n:])


@pytest.mark.parametrize("edit,message", [
    (lambda h: {**h, "model.norm.weight": {**h["model.norm.weight"], "dtype": "I8"}},
     "tensor 'model.norm.weight' has dtype I8, which is not supported (supported: F32, F16, BF16)"),
    (lambda h: {**h, "model.norm.weight": {**h["model.norm.weight"],
                                           "data_offsets": h["model.norm.weight"]["data_offsets"][::-1]}},
     "tensor 'model.norm.weight' in the safetensors header: data_offsets"),
    (lambda h: {**h, "model.norm.weight": {**h["model.norm.weight"], "shape": [65]}},
     "hold 256 bytes, expected 260 for F32 of 65 elements"),
    (lambda h: {**h, "model.norm.weight": {"dtype": "F32"}},
     "tensor 'model.norm.weight' in the safetensors header: expected an object with dtype, shape and data_offsets"),
])
def test_corrupt_safetensors_header_is_refused(edit, message, saved, tmp_path):
    d = copy_model(saved, "llama", tmp_path)
    rewrite_header(d / "model.safetensors", edit)
    err = refusal(d)
    assert message in err, err


def test_header_that_is_not_json_is_refused(saved, tmp_path):
    d = copy_model(saved, "llama", tmp_path)
    f = d / "model.safetensors"
    raw = bytearray(f.read_bytes())
    raw[8] = ord("!")
    f.write_bytes(bytes(raw))
    assert "the safetensors header (bytes 8.." in refusal(d)


def test_shard_index_naming_a_path_outside_the_folder_is_refused(saved, tmp_path):
    model, _ = saved("gpt2")
    d = tmp_path / "sharded"
    model.save_pretrained(d, safe_serialization=True, max_shard_size="100KB")
    idx = json.loads((d / "model.safetensors.index.json").read_text())
    name = next(iter(idx["weight_map"]))
    idx["weight_map"][name] = "../elsewhere.safetensors"
    (d / "model.safetensors.index.json").write_text(json.dumps(idx))
    assert "is not a file name inside the model folder" in refusal(d)


def test_transformers4_rope_fields(saved, tmp_path):
    # transformers 4.x wrote rope_theta and rope_scaling {"type": ...} instead of rope_parameters.
    model, _ = saved("llama")
    d = copy_model(saved, "llama", tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    rp = cfg.pop("rope_parameters")
    cfg["rope_theta"] = rp.pop("rope_theta")
    rp["type"] = rp.pop("rope_type")
    cfg["rope_scaling"] = rp
    (d / "config.json").write_text(json.dumps(cfg))
    ref_ids, ref_logits = reference(model, PROMPT, 16)
    ids, logits = generate(d, PROMPT, tmp_path, 16)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


def test_dynamic_rope_past_max_positions_is_refused(saved, tmp_path):
    d = copy_model(saved, "llama_dynamic", tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg["max_position_embeddings"] = 2
    (d / "config.json").write_text(json.dumps(cfg))
    err = refusal(d)
    assert "dynamic RoPE scaling past max_position_embeddings (2) is not supported" in err, err


def test_gpt2_base_model_checkpoint(saved, tmp_path):
    # GPT2Model's checkpoint (no "transformer." prefix, no head): the head is the tied embedding.
    model, _ = saved("gpt2")
    d = tmp_path / "base"
    model.transformer.save_pretrained(d, safe_serialization=True)
    ref_ids, ref_logits = reference(model, PROMPT, 16)
    ids, logits = generate(d, PROMPT, tmp_path, 16)
    assert ids == ref_ids
    assert_close_logits(logits, ref_logits)


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_other_isa_paths(isa, saved, tmp_path):
    # OPENCANN_ISA caps the kernels (GEMM micro-kernels and attention rows): the AVX2 and the plain-C++ paths.
    model, d = saved("mistral")
    ref_ids, ref_logits = reference(model, PROMPT, 32)
    npy = tmp_path / "l.npy"
    proc = run(d, "--prompt-ids", ",".join(map(str, PROMPT)), "--max-tokens", 32, "--dump-logits", npy,
               env=dict(os.environ, OPENCANN_ISA=isa))
    assert json.loads(proc.stdout) == ref_ids
    assert_close_logits(np.load(npy), ref_logits)
