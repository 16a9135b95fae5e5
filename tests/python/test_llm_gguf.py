"""GGUF files (src/llm/model/gguf.cc, gguf_checkpoint.cc, src/llm/tokenizer/
gguf_vocab.cc) against independent references.

Models: tiny random-weight transformers llama (GQA), qwen2 and gpt2 models are
written as GGUF with the PyPI `gguf` package, converted as llama.cpp's
converter does (its tensor names; llama's q/k rows interleaved per head for
GGML's rotary layout; 2-D weights in the file type, 1-D ones in F32). The
reference is transformers run on the same values: for F16 / BF16 / Q8_0 /
Q4_0 the weights are what gguf.quants.dequantize gives back from the stored
bytes. Greedy tokens must be identical over 40 tokens through
build/oc-llm-generate --model FILE.gguf, logits within 1e-4 of their scale.

Tokenizer: byte-level BPE tokenizers trained with Hugging Face `tokenizers` on
stdlib docstrings, exported into GGUF metadata (tokenizer.ggml.*), must encode
a few hundred docstrings to the ids `tokenizers` gives (and decode back); a
SentencePiece BPE trained with `sentencepiece` must give sentencepiece's ids.
End to end, oc-llm-server serves one .gguf file (weights, tokenizer, chat
template) and answers as transformers + jinja2 + tokenizers do.

Corrupt files (truncated, bad magic, tensor past the end, bad alignment,
unknown type, unsupported type) are refused with messages naming the field.
"""
import json
import os
import struct
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from gguf import GGMLQuantizationType as QT  # noqa: E402
from gguf import quants  # noqa: E402

from oc_harness import BUILD_DIR  # noqa: E402

GENERATE = os.path.join(BUILD_DIR, "oc-llm-generate")
TOKENIZE = os.path.join(BUILD_DIR, "oc-tokenize")
NEW_TOKENS = 40
PROMPT = [3, 17, 29, 101, 7, 64, 250, 11]
VOCAB = 512


@pytest.fixture(autouse=True, scope="module")
def _tools_built():
    for tool in (GENERATE, TOKENIZE):
        if not os.path.exists(tool):
            pytest.fail(f"{tool} is missing: build the project (make build)")


def build(kind):
    t = transformers
    torch.manual_seed(4321)
    base = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=256)
    if kind == "llama":  # GQA 4/2, linear RoPE scaling, rope_theta 500, separate lm_head
        m = t.LlamaForCausalLM(t.LlamaConfig(**base, rope_theta=500.0,
                                             rope_scaling={"rope_type": "linear", "factor": 2.0}))
    elif kind == "qwen2":  # q/k/v biases, tied embeddings (no output.weight in the file)
        m = t.Qwen2ForCausalLM(t.Qwen2Config(**base, tie_word_embeddings=True))
    else:
        raise ValueError(kind)
    with torch.no_grad():  # well separated greedy choices (see test_llm_model.py)
        for p in m.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
            elif kind == "qwen2" and p.dim() == 1 and p.abs().sum() == 0:
                p.normal_(0, 0.5)  # biases start at zero
    return m.eval()


# Hugging Face name -> GGUF name, as llama.cpp's converter writes them.
LAYER_NAMES = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
               "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
               "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}


def gguf_name(hf):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    if hf == "lm_head.weight":
        return "output.weight"
    parts = hf.split(".")
    assert parts[:2] == ["model", "layers"], hf
    return f"blk.{parts[2]}.{LAYER_NAMES['.'.join(parts[3:-1])]}.{parts[-1]}"


def interleave_rotary(w, n_head):
    """llama.cpp's converter: each head's two rotary halves interleaved row by row."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def stored_values(w, qtype):
    """The float32 values the file holds for `w` stored as `qtype`."""
    if qtype == QT.F32:
        return w.astype(np.float32)
    if qtype == QT.F16:
        return w.astype(np.float16).astype(np.float32)
    return quants.dequantize(quants.quantize(w, qtype), qtype).astype(np.float32).reshape(w.shape)


def stored(w, qtype):
    """(the array to write, its raw dtype)."""
    if qtype == QT.F32:
        return w.astype(np.float32), None
    if qtype == QT.F16:
        return w.astype(np.float16), None
    return quants.quantize(w, qtype), qtype


def write_gguf(model, path, qtype, alignment=None, tokenizer=None, replace=None):
    """Writes `model` as llama.cpp would; returns the HF state dict of the values stored.
    `replace`: GGUF name -> (array, raw dtype) written instead."""
    cfg = model.config
    arch = cfg.model_type
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_theta if hasattr(cfg, "rope_theta") else cfg.rope_parameters["rope_theta"])
    scaling = getattr(cfg, "rope_scaling", None) or {}
    if scaling.get("rope_type") == "linear":
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(scaling["factor"])
    if alignment:
        w.add_custom_alignment(alignment)
    if tokenizer:
        tokenizer(w)
    ref = {}
    for name, p in model.state_dict().items():
        if name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        v = p.detach().float().numpy()
        q = qtype if v.ndim == 2 else QT.F32
        if arch == "llama" and (".q_proj." in name or ".k_proj." in name):
            heads = cfg.num_attention_heads if ".q_proj." in name else cfg.num_key_value_heads
            data, raw = stored(interleave_rotary(v, heads), q)
        else:
            data, raw = stored(v, q)
        data, raw = (replace or {}).get(gguf_name(name), (data, raw))
        w.add_tensor(gguf_name(name), data, raw_dtype=raw)
        # The reference: the stored values (rows are whole blocks, so quantizing the
        # interleaved rows and quantizing the original rows store the same values).
        ref[name] = torch.from_numpy(stored_values(v, q))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return ref


def reference(model, state, prompt=PROMPT, n=NEW_TOKENS):
    import copy
    m = copy.deepcopy(model)
    m.load_state_dict(state, strict=False)
    if m.config.tie_word_embeddings:
        m.tie_weights()
    m.generation_config.eos_token_id = None
    m.generation_config.pad_token_id = 0
    with torch.no_grad():
        # An explicit mask: generate() would take prompt ids equal to pad_token_id for padding.
        x = torch.tensor([prompt])
        out = m.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                         output_logits=True, return_dict_in_generate=True)
    return out.sequences[0, len(prompt):].tolist(), torch.stack(out.logits, 1)[0].float().numpy()


def generate(path, tmp, prompt=PROMPT, n=NEW_TOKENS, check=True):
    npy = os.path.join(tmp, "logits.npy")
    proc = subprocess.run([GENERATE, "--model", str(path), "--threads", "2", "--prompt-ids",
                           ",".join(map(str, prompt)), "--max-tokens", str(n), "--dump-logits", npy],
                          capture_output=True, text=True, timeout=120)
    if not check:
        return proc
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), np.load(npy)


@pytest.fixture(scope="module")
def models():
    cache = {}

    def get(kind):
        if kind not in cache:
            cache[kind] = build(kind)
        return cache[kind]
    return get


QTYPES = [QT.F32, QT.F16, QT.BF16, QT.Q8_0, QT.Q4_0]


@pytest.mark.parametrize("qtype", QTYPES, ids=[q.name for q in QTYPES])
@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_greedy_generation_matches_transformers(kind, qtype, models, tmp_path):
    model = models(kind)
    path = tmp_path / f"{kind}-{qtype.name}.gguf"
    state = write_gguf(model, path, qtype)
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(path)).tensors}
    assert types["blk.1.ffn_down.weight"] == qtype and types["blk.0.attn_norm.weight"] == QT.F32
    assert ("output.weight" in types) == (kind == "llama")
    ref_ids, ref_logits = reference(model, state)
    ids, logits = generate(path, tmp_path)
    assert ids == ref_ids
    assert logits.shape == ref_logits.shape
    err = np.abs(logits - ref_logits).max() / np.abs(ref_logits).max()
    assert err < 1e-4, f"logits differ by {err:.3g} of their scale"


def test_folder_with_one_gguf_and_custom_alignment(models, tmp_path):
    model = models("qwen2")
    d = tmp_path / "folder"
    d.mkdir()
    state = write_gguf(model, d / "m.gguf", QT.Q8_0, alignment=64)
    ref_ids, _ = reference(model, state, n=8)
    ids, _ = generate(d, tmp_path, n=8)
    assert ids == ref_ids


def test_unpermuted_llama_file_differs(models, tmp_path):
    """The q/k un-permutation matters: a llama file written without it generates other logits."""
    model = models("llama")
    path = tmp_path / "llama.gguf"
    state = write_gguf(model, path, QT.F32)
    _, ref_logits = reference(model, state, n=4)
    bad = tmp_path / "llama-unpermuted.gguf"
    import copy
    m = copy.deepcopy(model)
    m.config.model_type = "qwen2"  # written as qwen2: no interleaving
    write_gguf(m, bad, QT.F32)
    data = bytearray(bad.read_bytes())
    # Rename the architecture (same length strings: "qwen2" -> "llama" everywhere in the keys).
    data = bytearray(bytes(data).replace(b"qwen2", b"llama"))
    bad.write_bytes(bytes(data))
    _, logits = generate(bad, tmp_path, n=4)
    assert np.abs(logits - ref_logits).max() / np.abs(ref_logits).max() > 1e-2


GPT2_NAMES = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output", "ln_2": "ffn_norm",
              "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}


def write_gpt2_gguf(model, path, qtype):
    """gpt2 as llama.cpp's converter writes it: Conv1D weights transposed to [out, in],
    output.weight a copy of token_embd. Returns the state dict of the stored values."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_context_length(cfg.n_positions)
    w.add_embedding_length(cfg.n_embd)
    w.add_feed_forward_length(4 * cfg.n_embd)
    w.add_block_count(cfg.n_layer)
    w.add_head_count(cfg.n_head)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    ref = {}
    for name, p in model.state_dict().items():
        if name == "lm_head.weight" or name.endswith((".attn.bias", ".attn.masked_bias")):
            continue
        v = p.detach().float().numpy()
        conv = name.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight"))
        if conv:
            v = np.ascontiguousarray(v.T)
        q = qtype if v.ndim == 2 else QT.F32
        data, raw = stored(v, q)
        parts = name.split(".")
        if parts[1] in ("wte", "wpe", "ln_f"):
            g = {"wte": "token_embd", "wpe": "position_embd", "ln_f": "output_norm"}[parts[1]] + "." + parts[-1]
        else:
            g = f"blk.{parts[2]}.{GPT2_NAMES['.'.join(parts[3:-1])]}.{parts[-1]}"
        w.add_tensor(g, data, raw_dtype=raw)
        if g == "token_embd.weight":
            w.add_tensor("output.weight", data, raw_dtype=raw)
        vals = stored_values(v, q)
        ref[name] = torch.from_numpy(np.ascontiguousarray(vals.T) if conv else vals)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return ref


@pytest.mark.parametrize("qtype", [QT.F32, QT.Q8_0], ids=["F32", "Q8_0"])
def test_gpt2_matches_transformers(qtype, tmp_path):
    torch.manual_seed(99)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=VOCAB,
                                                                 n_positions=128)).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
    path = tmp_path / "gpt2.gguf"
    state = write_gpt2_gguf(model, path, qtype)
    ref_ids, ref_logits = reference(model, state)
    ids, logits = generate(path, tmp_path)
    assert ids == ref_ids
    err = np.abs(logits - ref_logits).max() / np.abs(ref_logits).max()
    assert err < 1e-4, f"logits differ by {err:.3g} of their scale"


# ---- corrupt files -------------------------------------------------------------

@pytest.fixture(scope="module")
def good_file(models, tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "m.gguf"
    write_gguf(models("qwen2"), path, QT.Q4_0)
    return path.read_bytes()


def refused(tmp_path, data, *needles):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    proc = generate(path, tmp_path, n=2, check=False)
    assert proc.returncode != 0
    for n in needles:
        assert n in proc.stderr, proc.stderr
    assert "Sanitizer" not in proc.stderr and proc.returncode > 0, proc.stderr
    return proc.stderr


def find_tensor_info(data, name):
    """Offset just past the tensor info's name (its n_dims field)."""
    key = struct.pack("<Q", len(name)) + name.encode()
    i = data.index(key)
    return i + len(key)


def test_truncated_files_are_refused(good_file, tmp_path):
    for cut in (3, 10, 30, 200, len(good_file) // 2, len(good_file) - 1):
        refused(tmp_path, good_file[:cut], "bad.gguf")


def test_bad_magic_and_version(good_file, tmp_path):
    refused(tmp_path, b"GGUX" + good_file[4:], "not a GGUF file")
    refused(tmp_path, good_file[:4] + struct.pack("<I", 1) + good_file[8:], "GGUF version 1 is not supported")


def test_tensor_past_the_end_is_refused(good_file, tmp_path):
    at = find_tensor_info(good_file, "output_norm.weight")
    n_dims = struct.unpack_from("<I", good_file, at)[0]
    off_at = at + 4 + 8 * n_dims + 4
    data = bytearray(good_file)
    struct.pack_into("<Q", data, off_at, 1 << 20)
    refused(tmp_path, bytes(data), "tensor output_norm.weight", "past the end of the file")


def test_misaligned_offset_and_bad_alignment_are_refused(good_file, tmp_path):
    at = find_tensor_info(good_file, "output_norm.weight")
    n_dims = struct.unpack_from("<I", good_file, at)[0]
    data = bytearray(good_file)
    off = struct.unpack_from("<Q", data, at + 4 + 8 * n_dims + 4)[0]
    struct.pack_into("<Q", data, at + 4 + 8 * n_dims + 4, off + 4)
    refused(tmp_path, bytes(data), "not a multiple of the alignment")
    # general.alignment 48: not a power of two.
    d = tmp_path / "al"
    d.mkdir()
    key = b"general.alignment"
    raw = bytearray(good_file)
    if key not in raw:  # the fixture has the default alignment: write one with alignment 64, then patch it
        p = d / "a.gguf"
        write_gguf(build("qwen2"), p, QT.F32, alignment=64)
        raw = bytearray(p.read_bytes())
    i = raw.index(key) + len(key)
    assert struct.unpack_from("<I", raw, i)[0] == 4  # uint32
    struct.pack_into("<I", raw, i + 4, 48)
    refused(tmp_path, bytes(raw), "general.alignment 48 is not a power of two")


def test_unknown_and_unsupported_types_are_refused(good_file, tmp_path):
    at = find_tensor_info(good_file, "blk.0.attn_q.weight")
    n_dims = struct.unpack_from("<I", good_file, at)[0]
    type_at = at + 4 + 8 * n_dims
    assert struct.unpack_from("<I", good_file, type_at)[0] == int(QT.Q4_0)
    data = bytearray(good_file)
    struct.pack_into("<I", data, type_at, 77)
    refused(tmp_path, bytes(data), "tensor blk.0.attn_q.weight", "GGML type 77", "not supported")
    # A type the reader knows the size of but does not read (Q4_K: 256-element blocks of
    # 144 bytes), refused by name when the loader reads the tensor.
    path = tmp_path / "q4k.gguf"
    write_gguf(build("qwen2"), path, QT.F32,
               replace={"blk.0.attn_q.weight": (np.zeros((64, 144), np.uint8), QT.Q4_K)})
    refused(tmp_path, path.read_bytes(),
            "tensor blk.0.attn_q.weight has type Q4_K, which is not supported (F32, F16, BF16, Q8_0, Q4_0)")


def test_unsupported_architecture_is_refused(good_file, tmp_path):
    data = good_file.replace(b"qwen2", b"qwen9")
    refused(tmp_path, data, 'general.architecture "qwen9" is not supported (llama, qwen2, gpt2)')


# ---- tokenizer -------------------------------------------------------------------

def docstrings():
    import inspect
    import collections, functools, json as js, os as o, re, string, textwrap  # noqa: E401
    out = []
    for mod in (collections, functools, js, o, re, string, textwrap, inspect, struct, subprocess):
        for _, obj in vars(mod).items():
            d = getattr(obj, "__doc__", None)
            if isinstance(d, str) and d.strip() and d not in out:
                out.append(d)
    return out[:300]


LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


def train(pre, docs):
    from tokenizers import Regex, Tokenizer, decoders, models as tm, pre_tokenizers as pt, trainers
    tok = Tokenizer(tm.BPE())
    if pre == "gpt2":
        tok.pre_tokenizer = pt.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        regex = LLAMA3_REGEX if pre == "llama-bpe" else QWEN2_REGEX
        tok.pre_tokenizer = pt.Sequence([pt.Split(Regex(regex), behavior="isolated"),
                                         pt.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=["<|bos|>", "<|eos|>"],
                                  initial_alphabet=pt.ByteLevel.alphabet())
    tok.train_from_iterator(docs[::2], trainer)
    if pre == "llama-bpe":  # as Llama 3's tokenizer.json
        j = json.loads(tok.to_str())
        j["model"]["ignore_merges"] = True
        tok = Tokenizer.from_str(json.dumps(j))
    return tok


CHAT_TEMPLATE = "{% for m in messages %}<|bos|>{{ m['role'] }}: {{ m['content'] }}<|eos|>{% endfor %}"


def export_tokenizer(tok, pre, add_bos):
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    for a in j["added_tokens"]:
        vocab[a["content"]] = a["id"]
    tokens = [None] * (max(vocab.values()) + 1)
    for t, i in vocab.items():
        tokens[i] = t
    special = {a["id"] for a in j["added_tokens"] if a["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]

    def add(w):
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_types([3 if i in special else 1 for i in range(len(tokens))])
        w.add_token_merges(merges)
        w.add_bos_token_id(tok.token_to_id("<|bos|>"))
        w.add_eos_token_id(tok.token_to_id("<|eos|>"))
        w.add_add_bos_token(add_bos)
        w.add_chat_template(CHAT_TEMPLATE)
    return add


def write_tokenizer_gguf(path, add):
    w = gguf.GGUFWriter(str(path), "llama")
    add(w)
    w.add_tensor("dummy.weight", np.zeros(4, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def oc_tokenize(path, mode, lines, *flags):
    proc = subprocess.run([TOKENIZE, "--tokenizer", str(path), mode, *flags], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines()]


@pytest.mark.parametrize("pre", ["gpt2", "llama-bpe", "qwen2"])
def test_tokenizer_from_gguf_matches_tokenizers(pre, tmp_path):
    docs = docstrings()
    assert len(docs) >= 200
    tok = train(pre, docs)
    path = tmp_path / "tok.gguf"
    write_tokenizer_gguf(path, export_tokenizer(tok, pre, add_bos=False))
    texts = docs + ["<|bos|>hello<|eos|> world", "Ünïcödé 1234567 don't  \n\n x", ""]
    got = oc_tokenize(path, "encode", [json.dumps(t) for t in texts])
    want = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    assert len(got) == len(want)
    mism = [i for i in range(len(texts)) if got[i] != want[i]]
    assert not mism, f"{len(mism)} of {len(texts)} differ, first: {texts[mism[0]][:80]!r}"
    dec = oc_tokenize(path, "decode", [json.dumps(ids) for ids in want[:50]])
    assert dec == [tok.decode(ids, skip_special_tokens=False) for ids in want[:50]]


def test_tokenizer_add_bos_and_info(tmp_path):
    docs = docstrings()
    tok = train("gpt2", docs)
    path = tmp_path / "tok.gguf"
    write_tokenizer_gguf(path, export_tokenizer(tok, "gpt2", add_bos=True))
    got = oc_tokenize(path, "encode", [json.dumps("some text")])
    assert got == [[tok.token_to_id("<|bos|>")] + tok.encode("some text", add_special_tokens=False).ids]
    proc = subprocess.run([TOKENIZE, "--tokenizer", str(path), "info"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["bos_id"] == tok.token_to_id("<|bos|>") and info["eos_id"] == tok.token_to_id("<|eos|>"), info
    assert info["add_bos_token"] is True and info["vocab_size"] == tok.get_vocab_size()
    assert info["chat_template"] == CHAT_TEMPLATE


def test_sentencepiece_tokenizer_from_gguf_matches_sentencepiece(tmp_path):
    """tokenizer.ggml.model "llama": a SentencePiece BPE (byte fallback) trained with
    sentencepiece, exported as llama.cpp's converter exports it (pieces, scores, types)."""
    spm = pytest.importorskip("sentencepiece")
    docs = docstrings()
    model_prefix = str(tmp_path / "sp")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(docs[::2]), model_prefix=model_prefix, vocab_size=800,
                                   model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
                                   remove_extra_whitespaces=False, add_dummy_prefix=True, split_digits=True,
                                   max_sentence_length=100000, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=model_prefix + ".model")
    n = sp.get_piece_size()
    types = [2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 5 if sp.is_unused(i) else 6 if sp.is_byte(i)
             else 1 for i in range(n)]
    path = tmp_path / "spm.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list([sp.id_to_piece(i) for i in range(n)])
    w.add_token_scores([sp.get_score(i) for i in range(n)])
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_unk_token_id(sp.unk_id())
    w.add_add_bos_token(True)
    w.add_tensor("dummy.weight", np.zeros(4, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    texts = docs + ["Ünïcödé 1234567 don't  \n\n x \u2603\U0001F600", "  two leading spaces", ""]
    got = oc_tokenize(path, "encode", [json.dumps(t) for t in texts])
    want = [[sp.bos_id()] + sp.encode(t) for t in texts]
    mism = [i for i in range(len(texts)) if got[i] != want[i]]
    assert not mism, f"{len(mism)} of {len(texts)} differ, first: {texts[mism[0]][:80]!r}"
    dec = oc_tokenize(path, "decode", [json.dumps(sp.encode(t)) for t in texts[:50]])
    assert dec == [sp.decode(sp.encode(t)) for t in texts[:50]]


def test_unsupported_tokenizer_model_is_refused(tmp_path):
    path = tmp_path / "spm.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("bert")
    w.add_token_list(["a", "b"])
    w.add_tensor("dummy.weight", np.zeros(4, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    proc = subprocess.run([TOKENIZE, "--tokenizer", str(path), "info"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert 'tokenizer.ggml.model "bert" is not supported' in proc.stderr, proc.stderr


# ---- one .gguf file serves: model, tokenizer and chat template ---------------------

def test_server_runs_a_gguf_file_with_its_tokenizer_and_chat_template(tmp_path):
    """oc-llm-server --model FILE.gguf: the chat template, the tokenizer and the Q8_0
    weights all come from the one file; the reply is transformers' greedy continuation
    of the prompt that jinja2 renders and tokenizers encodes."""
    import re
    import urllib.request
    jinja2 = pytest.importorskip("jinja2")
    server_tool = os.path.join(BUILD_DIR, "oc-llm-server")
    if not os.path.exists(server_tool):
        pytest.fail(f"{server_tool} is missing: build the project (make build)")
    tok = train("llama-bpe", docstrings())
    vocab = tok.get_vocab_size()
    torch.manual_seed(77)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=vocab, max_position_embeddings=512)).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
    path = tmp_path / "chat.gguf"
    state = write_gguf(model, path, QT.Q8_0, tokenizer=export_tokenizer(tok, "llama-bpe", add_bos=False))
    messages = [{"role": "system", "content": "You write docstrings."},
                {"role": "user", "content": "Describe os.path.join"}]
    text = jinja2.Environment().from_string(CHAT_TEMPLATE).render(messages=messages)
    ids = tok.encode(text, add_special_tokens=False).ids
    ref_ids, _ = reference(model, state, prompt=ids, n=16)

    proc = subprocess.Popen([server_tool, "--model", str(path), "--port", "0", "--threads", "2",
                             "--max-model-len", "256", "--kv-cache-memory-bytes", "8MiB"],
                            stderr=subprocess.PIPE, text=True)
    try:
        url, log = None, []
        for _ in range(200):
            line = proc.stderr.readline()
            if not line:
                break
            log.append(line)
            m = re.search(r"serving .* on (http://[\d.]+:\d+)", line)
            if m:
                url = m.group(1)
                break
        assert url, "the server did not start: " + "".join(log)
        body = {"model": str(path), "messages": messages, "max_tokens": 16, "temperature": 0, "ignore_eos": True}
        req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            reply = json.loads(r.read())
    finally:
        proc.terminate()
        proc.wait(20)
    assert reply["usage"]["prompt_tokens"] == len(ids)
    assert reply["usage"]["completion_tokens"] == 16
    assert reply["choices"][0]["message"]["content"] == tok.decode(ref_ids, skip_special_tokens=True)
