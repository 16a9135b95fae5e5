"""The demo model (models/llm-demo, trained by its train.py) through the
project's tools, against Hugging Face as the reference: greedy tokens of
build/oc-llm-generate against transformers' generate in float32, the
tokenizer (build/oc-tokenize) against the tokenizers library on the text the
model was trained on (the standard library's docstrings), the chat template
(build/oc-chat-template) against apply_chat_template, and the losses the
README reports against a fresh evaluation.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import transformers
from tokenizers import Tokenizer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(ROOT, "models", "llm-demo")
BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, DEMO)
import corpus  # noqa: E402  (models/llm-demo/corpus.py: the training text)

NEW_TOKENS = 32
CHAT = [{"role": "user", "content": "What does json.dumps do?"}]


def tool(name):
    path = os.path.join(BUILD, name)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: build the project (make build)")
    return path


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_file(os.path.join(DEMO, "tokenizer.json"))


@pytest.fixture(scope="module")
def hf_model():
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM.from_pretrained(DEMO, dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def prompts(tok):
    hf_tok = transformers.AutoTokenizer.from_pretrained(DEMO)
    chat = hf_tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    return [tok.encode("Return the").ids, tok.encode("This module provides").ids,
            tok.encode(chat, add_special_tokens=False).ids]


def test_the_files_are_what_the_readme_says(tok):
    from safetensors import safe_open
    cfg = json.load(open(os.path.join(DEMO, "config.json")))
    assert cfg["model_type"] == "llama" and cfg["num_key_value_heads"] < cfg["num_attention_heads"]
    assert cfg["vocab_size"] == tok.get_vocab_size()
    path = os.path.join(DEMO, "model.safetensors")
    assert os.path.getsize(path) < 8 << 20
    n = 0
    with safe_open(path, "pt") as f:
        for k in f.keys():
            t = f.get_tensor(k)
            assert t.dtype == torch.float16, k
            n += t.numel()
    assert 3_000_000 <= n <= 4_000_000
    tcfg = json.load(open(os.path.join(DEMO, "tokenizer_config.json")))
    gen = json.load(open(os.path.join(DEMO, "generation_config.json")))
    assert tok.token_to_id(tcfg["bos_token"]) == cfg["bos_token_id"] == gen["bos_token_id"]
    assert tok.token_to_id(tcfg["eos_token"]) == cfg["eos_token_id"] == gen["eos_token_id"]


def reference(model, ids):
    model.generation_config.eos_token_id = None  # oc-llm-generate does not stop at eos either
    # An explicit mask: the chat prompt holds </s>, which is also the pad token, and
    # generate would otherwise mask it out as padding.
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                             do_sample=False, output_logits=True, return_dict_in_generate=True,
                             pad_token_id=model.config.eos_token_id)
    return out.sequences[0, len(ids):].tolist(), torch.stack(out.logits, 1)[0].float().numpy()


def test_greedy_tokens_match_transformers(hf_model, prompts, tok, tmp_path):
    gen = tool("oc-llm-generate")
    refs = []
    for i, ids in enumerate(prompts):
        want, want_logits = reference(hf_model, ids)
        npy = tmp_path / f"logits{i}.npy"
        r = subprocess.run([gen, "--model", DEMO, "--threads", "2", "--prompt-ids", ",".join(map(str, ids)),
                            "--max-tokens", str(NEW_TOKENS), "--dump-logits", str(npy)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert got == want, f"prompt {tok.decode(ids)!r}:\n  oc: {tok.decode(got)!r}\n  hf: {tok.decode(want)!r}"
        logits = np.load(npy)
        err = np.abs(logits - want_logits).max() / np.abs(want_logits).max()
        assert err < 1e-4, f"logits differ by {err:.3g} of their scale"
        refs.append(want)
    # The three together (one batched forward per step) give the same.
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(prompts))
    r = subprocess.run([gen, "--model", DEMO, "--threads", "2", "--batch", str(batch), "--max-tokens", str(NEW_TOKENS)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == refs
    # "Return the" goes on in words: mostly letters and spaces, as docstrings are.
    text = tok.decode(refs[0])
    assert sum(c.isalpha() or c.isspace() for c in text) >= 0.8 * len(text), text


def oc_tokenize(path, command, lines, *flags):
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    r = subprocess.run([tool("oc-tokenize"), "--tokenizer", path, command, *flags], input=stdin.encode(),
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return [json.loads(line) for line in r.stdout.decode().split("\n")[:-1]]  # not splitlines: U+2028 is text


def test_tokenizer_matches_tokenizers_on_the_docstrings(tok):
    texts = [d for _, d in corpus.load()]
    assert len(texts) > 4000
    for special in (True, False):
        want = [e.ids for e in tok.encode_batch(texts, add_special_tokens=special)]
        got = oc_tokenize(DEMO, "encode", texts, *([] if special else ["--no-special"]))
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert len(got) == len(texts) and not bad, f"{len(bad)} texts differ, first: {texts[bad[0]][:200]!r}"
    for skip in (False, True):
        got = oc_tokenize(DEMO, "decode", want[:500], *(["--skip-special"] if skip else []))
        assert got == tok.decode_batch(want[:500], skip_special_tokens=skip)


def chat_render(context):
    r = subprocess.run([tool("oc-chat-template"), "--tokenizer-config", os.path.join(DEMO, "tokenizer_config.json")],
                       input=json.dumps(context).encode(), capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_chat_template_renders_as_transformers():
    hf_tok = transformers.AutoTokenizer.from_pretrained(DEMO)
    conversations = [CHAT,
                     [{"role": "system", "content": "  Answer from the docs.\n"}, {"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": "Return the answer."}, {"role": "user", "content": "ü €"}]]
    for messages in conversations:
        for gen in (True, False):
            want = hf_tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen)
            rc, got, err = chat_render({"messages": messages, "add_generation_prompt": gen})
            assert rc == 0, err
            assert got == want
    with pytest.raises(Exception, match="roles are system, user and assistant, not tool"):
        hf_tok.apply_chat_template([{"role": "tool", "content": "x"}], tokenize=False)
    rc, _, err = chat_render({"messages": [{"role": "tool", "content": "x"}]})
    assert rc == 1 and "roles are system, user and assistant, not tool" in err


def test_the_reported_validation_loss(hf_model, tok):
    """README.md's validation loss, recomputed on the float16 checkpoint (in float32)."""
    log = json.load(open(os.path.join(DEMO, "train_log.json")))
    eos = tok.token_to_id("</s>")
    ids = []
    for _, d in corpus.load():
        if corpus.is_validation(d):
            ids += tok.encode(d).ids + [eos]
    ctx = log["context"]
    n = (len(ids) - 1) // ctx
    data = torch.tensor([ids[i * ctx:i * ctx + ctx + 1] for i in range(n)])
    with torch.no_grad():
        logits = hf_model(input_ids=data[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), data[:, 1:].reshape(-1)).item()
    assert abs(loss - log["val_loss"]) < 0.05, f"val loss {loss:.4f}, train_log.json says {log['val_loss']}"
    assert log["train_seconds"] < 12 * 60
