"""The offline LLM API: liboc_llm.so (include/opencann/oc_llm.h) and the
vLLM-shaped Python package python/oc_llm/ over it.

References: the server (build/oc-llm-server, started as test_llm_server
starts it) answering the same requests, transformers' float32 greedy
continuation and apply_chat_template, and the tokenizers package. The tiny
llama and its tokenizer are test_llm_server's fixture (imported).
"""
import concurrent.futures
import ctypes
import json
import os
import subprocess
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from oc_harness import BUILD_DIR  # noqa: E402
from test_llm_server import NAME, PROMPTS, TOOL, Server, docstrings, greedy, hf, model_dir  # noqa: E402,F401

LIB = os.path.join(BUILD_DIR, "liboc_llm.so")
EXAMPLE = os.path.join(BUILD_DIR, "tests", "oc_llm_complete")
MISUSE = os.path.join(BUILD_DIR, "tests", "oc_llm_misuse")


@pytest.fixture(autouse=True, scope="module")
def _built():
    for path in (LIB, TOOL, EXAMPLE, MISUSE):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: build the project (make build)")


@pytest.fixture(scope="module")
def oc_llm():
    import oc_llm as m
    return m


@pytest.fixture(scope="module")
def llm(oc_llm, model_dir):
    with oc_llm.LLM(model_dir, served_model_name=NAME, max_model_len=512, kv_cache_memory_bytes="8MiB", threads=2,
                    max_num_seqs=16) as engine:
        yield engine


@pytest.fixture(scope="module")
def server(model_dir):
    s = Server(model_dir, "--max-model-len", 512, "--kv-cache-memory-bytes", "8MiB")
    yield s
    s.stop()


def greedy_params(oc_llm, n_tokens, **kw):
    return oc_llm.SamplingParams(temperature=0, max_tokens=n_tokens, ignore_eos=True, **kw)


def same_reply(a, b):
    """Two replies equal but for their id and creation time."""
    strip = lambda r: {k: v for k, v in r.items() if k not in ("id", "created")}
    assert strip(a) == strip(b)


def gauge(llm, name):
    for line in llm.metrics().splitlines():
        if line.startswith(f'{name}{{model_name="{NAME}"}}'):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in the metrics")


def test_generate_greedy_equals_server_and_transformers(oc_llm, llm, server, hf):
    model, tok = hf
    outs = llm.generate(PROMPTS, greedy_params(oc_llm, 24))
    assert [o.prompt for o in outs] == PROMPTS
    for prompt, out in zip(PROMPTS, outs):
        ids = tok(prompt)["input_ids"]
        ref, _ = greedy(model, ids, 24)
        assert out.prompt_token_ids == ids
        (c,) = out.outputs
        assert c.index == 0 and c.token_ids == ref
        assert c.text == tok.decode(ref, skip_special_tokens=True)
        assert (c.finish_reason, c.stop_reason, c.cumulative_logprob, c.logprobs) == ("length", None, None, None)
        body = {"prompt": prompt, "max_tokens": 24, "temperature": 0, "ignore_eos": True}
        status, r = server.post("/v1/completions", body)
        assert status == 200, r
        assert r["choices"][0]["text"] == c.text
        same_reply(llm.completions(body), r)  # the raw C API gives the server's reply, field for field
    assert len({o.request_id for o in outs}) == len(outs)


def test_many_prompts_run_batched_in_order(oc_llm, llm, hf):
    model, tok = hf
    texts = [d[: 8 + (i * 7) % 50] for i, d in enumerate(docstrings()[:300])]
    # More than the 256 prompts of one request; the running batch, sampled meanwhile, holds many
    # of them at once and never more than max_num_seqs (16).
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        job = ex.submit(llm.generate, texts, greedy_params(oc_llm, 3))
        running = []
        while not job.done():
            running.append(gauge(llm, "vllm:num_requests_running"))
            time.sleep(0.002)
        outs = job.result()
    assert 8 <= max(running) <= 16, sorted(set(running))
    assert len(outs) == 300
    for text, out in zip(texts, outs):
        ids = tok(text)["input_ids"]
        assert out.prompt == text and out.prompt_token_ids == ids
        assert out.outputs[0].token_ids == greedy(model, ids, 3)[0]
    # Kinds of prompts mixed in one call keep their order.
    ids = tok(PROMPTS[1])["input_ids"]
    mixed = [PROMPTS[0], {"prompt_token_ids": ids}, {"prompt": PROMPTS[2]}]
    outs = llm.generate(mixed, greedy_params(oc_llm, 6))
    assert [o.prompt for o in outs] == [PROMPTS[0], None, PROMPTS[2]]
    assert outs[1].prompt_token_ids == ids
    for p, o in zip([PROMPTS[0], PROMPTS[1], PROMPTS[2]], outs):
        assert o.outputs[0].token_ids == greedy(model, tok(p)["input_ids"], 6)[0]
    # Several Python threads on one LLM share it.
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda p: llm.generate(p, greedy_params(oc_llm, 8))[0].outputs[0].token_ids, PROMPTS))
    assert got == [greedy(model, tok(p)["input_ids"], 8)[0] for p in PROMPTS]
    assert llm.generate([], greedy_params(oc_llm, 2)) == []


def test_chat_equals_server_and_apply_chat_template(oc_llm, llm, server, hf):
    model, tok = hf
    convs = [[{"role": "system", "content": "You write docstrings."}, {"role": "user", "content": "Describe os.path.join"}],
             [{"role": "user", "content": "hi"}]]
    outs = llm.chat(convs, greedy_params(oc_llm, 30))
    assert len(outs) == 2
    for conv, out in zip(convs, outs):
        ids = tok.apply_chat_template(conv, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        ref, _ = greedy(model, list(ids), 30)
        assert out.prompt_token_ids == list(ids)
        assert out.prompt == tok.decode(ids)
        assert out.outputs[0].token_ids == ref
        assert out.outputs[0].text == tok.decode(ref, skip_special_tokens=True)
        body = {"messages": conv, "max_tokens": 30, "temperature": 0, "ignore_eos": True}
        status, r = server.post("/v1/chat/completions", body)
        assert status == 200, r
        assert r["choices"][0]["message"]["content"] == out.outputs[0].text
        same_reply(llm.chat_completions(body), r)
    # One conversation (not a list of them) gives one output.
    (one,) = llm.chat(convs[1], greedy_params(oc_llm, 30))
    assert one.outputs[0].token_ids == outs[1].outputs[0].token_ids
    assert llm.get_tokenizer().apply_chat_template(convs[1]) == outs[1].prompt_token_ids


def test_n_above_one_gives_the_servers_choices(oc_llm, llm, server):
    sp = oc_llm.SamplingParams(n=3, temperature=1.0, seed=5, max_tokens=12, ignore_eos=True)
    outs = llm.generate(PROMPTS[:2], sp)
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[:2], "n": 3, "temperature": 1.0, "seed": 5,
                                                "max_tokens": 12, "ignore_eos": True})
    assert status == 200, r
    assert [[o.index for o in out.outputs] for out in outs] == [[0, 1, 2], [0, 1, 2]]
    assert [o.text for out in outs for o in out.outputs] == [c["text"] for c in r["choices"]]
    assert all(len(o.token_ids) == 12 for out in outs for o in out.outputs)
    greedy2 = llm.generate(PROMPTS[0], oc_llm.SamplingParams(n=2, temperature=0, max_tokens=8))[0].outputs
    assert greedy2[0].token_ids == greedy2[1].token_ids


def test_seeded_sampling_is_reproducible(oc_llm, llm, server):
    sp = oc_llm.SamplingParams(temperature=1.0, top_p=0.9, seed=7, max_tokens=32, ignore_eos=True)
    a = llm.generate(PROMPTS[3], sp)[0].outputs[0]
    b = llm.generate(PROMPTS[3], sp)[0].outputs[0]
    batched = llm.generate(PROMPTS, sp)[3].outputs[0]
    other = llm.generate(PROMPTS[3], oc_llm.SamplingParams(temperature=1.0, top_p=0.9, seed=8, max_tokens=32,
                                                           ignore_eos=True))[0].outputs[0]
    assert a.token_ids == b.token_ids == batched.token_ids
    assert a.token_ids != other.token_ids
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[3], "max_tokens": 32, "temperature": 1.0,
                                                "top_p": 0.9, "seed": 7, "ignore_eos": True})
    assert r["choices"][0]["text"] == a.text
    # One SamplingParams per prompt.
    per = llm.generate([PROMPTS[3], PROMPTS[3]], [sp, greedy_params(oc_llm, 32)])
    assert per[0].outputs[0].token_ids == a.token_ids
    assert per[1].outputs[0].token_ids == llm.generate(PROMPTS[3], greedy_params(oc_llm, 32))[0].outputs[0].token_ids


def test_stop_strings_and_stop_token_ids(oc_llm, llm, server, hf):
    model, tok = hf
    ids = tok(PROMPTS[0])["input_ids"]
    ref, _ = greedy(model, ids, 64)
    full = tok.decode(ref, skip_special_tokens=True)
    stop = full[20:23]
    cut = full.index(stop)
    (c,) = llm.generate(PROMPTS[0], greedy_params(oc_llm, 64, stop=[stop, "\x00never"]))[0].outputs
    assert (c.text, c.finish_reason, c.stop_reason) == (full[:cut], "stop", stop)
    # token_ids: the generated ids up to the one that completed the stop string.
    assert c.token_ids == ref[:len(c.token_ids)] and len(c.token_ids) < 64
    decoded = tok.decode(c.token_ids, skip_special_tokens=True)
    assert decoded.startswith(full[:cut + 3]) and not tok.decode(c.token_ids[:-1]).startswith(full[:cut + 3])
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 64, "temperature": 0,
                                                "ignore_eos": True, "stop": [stop, "\x00never"]})
    assert (r["choices"][0]["text"], r["choices"][0]["stop_reason"]) == (c.text, c.stop_reason)
    inc = llm.generate(PROMPTS[0], greedy_params(oc_llm, 64, stop=stop, include_stop_str_in_output=True))
    assert inc[0].outputs[0].text == full[:cut + 3]
    k = 5
    (s,) = llm.generate(PROMPTS[0], greedy_params(oc_llm, 64, stop_token_ids=[ref[k]]))[0].outputs
    first = ref.index(ref[k])
    assert s.token_ids == ref[:first + 1] and (s.finish_reason, s.stop_reason) == ("stop", ref[k])


def test_logprobs_match_transformers(oc_llm, llm, hf):
    model, tok = hf
    ids = tok(PROMPTS[2])["input_ids"]
    ref, logits = greedy(model, ids, 12)
    lsm = torch.log_softmax(logits, -1)
    (c,) = llm.generate(PROMPTS[2], greedy_params(oc_llm, 12, logprobs=3))[0].outputs
    assert c.token_ids == ref and len(c.logprobs) == 12
    total = 0.0
    for i, t in enumerate(ref):
        d = c.logprobs[i]
        assert abs(d[t].logprob - lsm[i, t].item()) < 1e-4
        total += lsm[i, t].item()
        top = torch.topk(lsm[i], 3)
        for rank, (tid, value) in enumerate(zip(top.indices.tolist(), top.values.tolist()), 1):
            assert d[tid].rank == rank and abs(d[tid].logprob - value) < 1e-4
            assert d[tid].decoded_token == tok.decode([tid])
        assert set(d) == set(top.indices.tolist()) | {t}
    assert abs(c.cumulative_logprob - total) < 1e-3
    (chat,) = llm.chat([{"role": "user", "content": "hi"}], greedy_params(oc_llm, 4, logprobs=2))[0].outputs
    assert len(chat.logprobs) == 4 and all(len(d) in (2, 3) for d in chat.logprobs)


def test_tokenizer_helpers_equal_tokenizers(llm, model_dir):
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    t = llm.get_tokenizer()
    for text in docstrings()[:20] + ["Unicode: naïve café — 東京 🙂"]:
        want = ref.encode(text).ids
        assert t.encode(text) == want
        assert t.encode(text, add_special_tokens=False) == ref.encode(text, add_special_tokens=False).ids
        assert t.decode(want) == ref.decode(want, skip_special_tokens=False)
    assert llm.tokenize({"prompt": "abc"})["max_model_len"] == 512 == llm.max_model_len
    assert llm.served_model_name == NAME


def test_metrics_count_the_generated_tokens(oc_llm, llm):
    before = gauge(llm, "vllm:generation_tokens_total")
    llm.generate(PROMPTS[:2], greedy_params(oc_llm, 5))
    assert gauge(llm, "vllm:generation_tokens_total") - before == 10
    assert gauge(llm, "vllm:num_requests_running") == 0 and gauge(llm, "oc:kv_cache_blocks_used") == 0


def test_bad_requests_raise_value_errors_naming_the_field(oc_llm, llm):
    cases = [(dict(temperature=-1.0), "temperature", "temperature"), (dict(top_p=2.0), "top_p", "top_p"),
             (dict(max_tokens=0), "max_tokens", "max_tokens"), (dict(top_k=-5), "top_k", "top_k"),
             (dict(stop=[""]), "stop", "stop strings must not be empty"),
             (dict(max_tokens=600), "max_tokens", "600 in the completion"),
             (dict(stop_token_ids=[10 ** 6]), "stop_token_ids", "stop_token_ids"),
             (dict(temperature="hot"), "temperature", 'temperature must be a number, got "hot"'),
             (dict(logprobs=50), "logprobs", "logprobs"), (dict(min_tokens=20, max_tokens=4), "min_tokens", "min_tokens")]
    for kw, field, message in cases:
        with pytest.raises(ValueError) as e:
            llm.generate(PROMPTS[0], oc_llm.SamplingParams(**kw))
        assert e.value.status == 400 and e.value.param == field and message in str(e.value), (kw, str(e.value))
    with pytest.raises(ValueError, match="expected token ids") as e:
        llm.generate({"prompt_token_ids": [0, 10 ** 6]})
    assert e.value.param == "prompt"
    with pytest.raises(ValueError, match="maximum context length is 512") as e:
        llm.generate({"prompt_token_ids": [5] * 520})
    with pytest.raises(ValueError, match="a prompt must be"):
        llm.generate([3, 4])
    with pytest.raises(ValueError, match="stream is not supported"):
        llm.completions({"prompt": "a", "stream": True})
    with pytest.raises(ValueError, match="return_token_ids must be true or false"):
        llm.completions({"prompt": "a", "return_token_ids": 1})
    with pytest.raises(ValueError, match="messages"):
        llm.chat([])
    with pytest.raises(ValueError, match="sampling_params must be one SamplingParams or a list of 2"):
        llm.generate(PROMPTS[:2], [oc_llm.SamplingParams()])
    # The reply without the extension has no ids (it is the server's, unchanged).
    assert "token_ids" not in llm.completions({"prompt": "a", "max_tokens": 2})["choices"][0]


def test_bad_engine_arguments(oc_llm, model_dir, tmp_path):
    with pytest.raises(ValueError, match="nonexistent") as e:
        oc_llm.LLM(tmp_path / "nonexistent")
    assert e.value.status == 404
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty"):
        oc_llm.LLM(tmp_path / "empty")
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        oc_llm.LLM(model_dir, gpu_memory_utilization=0.9)
    with pytest.raises(ValueError, match="max_num_seqs must be an integer"):
        oc_llm.LLM(model_dir, max_num_seqs=0)
    with pytest.raises(ValueError, match="kv_cache_memory_bytes"):
        oc_llm.LLM(model_dir, kv_cache_memory_bytes="lots")
    with pytest.raises(ValueError, match="tensor_parallel_size 2 is not supported"):
        oc_llm.LLM(model_dir, tensor_parallel_size=2)
    with pytest.raises(ValueError, match="max_model_len"):  # a budget that cannot hold one sequence
        oc_llm.LLM(model_dir, kv_cache_memory_bytes=4096, max_model_len=512)
    closed = oc_llm.LLM(model_dir, threads=1)
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        closed.generate("a")
    closed.close()  # twice is fine


def test_c_api_refuses_null_and_garbage(oc_llm, llm, model_dir):
    from oc_llm import _lib
    lib = _lib.lib
    out = ctypes.c_void_p()
    assert lib.oc_llm_open(None, None) == 400 and "out is NULL" in _lib.last_error()
    assert lib.oc_llm_open(None, ctypes.byref(out)) == 400 and out.value is None
    assert lib.oc_llm_open(b"\xff\xfe", ctypes.byref(out)) == 400 and "not valid JSON" in _lib.last_error()
    assert lib.oc_llm_completions(None, None, None) == 400 and "reply_json is NULL" in _lib.last_error()
    assert lib.oc_llm_completions(None, b"{}", ctypes.byref(out)) == 400
    assert json.loads(_lib.take_string(out.value))["error"]["type"] == "BadRequestError"
    h = llm._handle
    for fn in (lib.oc_llm_completions, lib.oc_llm_chat_completions, lib.oc_llm_tokenize, lib.oc_llm_detokenize):
        for req in (None, b"", b"{\"prompt\": ", b"\x80\x81", b"null", b"[]", b"42"):
            assert fn(h, req, ctypes.byref(out)) == 400
            err = json.loads(_lib.take_string(out.value))["error"]
            assert err["message"] == _lib.last_error() and err["message"]
    lib.oc_llm_free(None)
    lib.oc_llm_close(None)
    assert lib.oc_llm_metrics(h, ctypes.byref(out)) == 0 and _lib.last_error() == ""
    assert "vllm:num_requests_running" in _lib.take_string(out.value)
    # The C misuse program: the same from C, with and without a model.
    r = subprocess.run([MISUSE, str(model_dir)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr


def test_c_example_program(oc_llm, llm, model_dir):
    body = {"prompt": PROMPTS[1], "max_tokens": 16, "temperature": 0, "ignore_eos": True}
    r = subprocess.run([EXAMPLE, str(model_dir), json.dumps(body)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    reply = json.loads(r.stdout)
    assert reply["object"] == "text_completion" and reply["model"] == str(model_dir)
    assert reply["choices"][0]["text"] == llm.generate(PROMPTS[1], greedy_params(oc_llm, 16))[0].outputs[0].text
    r = subprocess.run([EXAMPLE, str(model_dir), json.dumps({**body, "top_p": 0})], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["param"] == "top_p"
    r = subprocess.run([EXAMPLE, "/nonexistent/model", "{}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "/nonexistent/model" in r.stderr
