"""The OpenAI-compatible server of src/llm/server/ (build/oc-llm-server),
through real HTTP: the `openai` Python package and plain HTTP (urllib) as the
clients, transformers (float32 greedy, apply_chat_template) and tokenizers
as the references, schemathesis against /openapi.json, and 64 concurrent
clients with disconnects.

The model is a tiny random-weight llama (GQA) with a byte-level BPE
tokenizer trained here on the standard library's docstrings, and a chat
template in tokenizer_config.json.
"""
import concurrent.futures
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from oc_harness import BUILD_DIR  # noqa: E402

TOOL = os.path.join(BUILD_DIR, "oc-llm-server")
NAME = "tiny-llama"
CHAT_TEMPLATE = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


@pytest.fixture(autouse=True, scope="module")
def _tool_built():
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build the project (make build)")


def docstrings():
    import collections, email, http as h, inspect, json as j, os as o, pathlib, re as r, string, textwrap
    out = []
    for mod in (collections, email, h, inspect, j, o, pathlib, r, string, textwrap):
        for name, obj in sorted(vars(mod).items()):
            doc = getattr(obj, "__doc__", None)
            if isinstance(doc, str) and len(doc) > 40:
                out.append(doc)
    return out


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_llama")
    t = tokenizers
    tok = t.Tokenizer(t.models.BPE())
    tok.pre_tokenizer = t.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = t.decoders.ByteLevel()
    trainer = t.trainers.BpeTrainer(vocab_size=700, special_tokens=["<s>", "</s>"],
                                    initial_alphabet=t.pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(docstrings(), trainer)
    tok.post_processor = t.processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 0)])
    tok.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<s>", "eos_token": "</s>", "chat_template": CHAT_TEMPLATE,
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 512}))
    torch.manual_seed(1234)
    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=tok.get_vocab_size(), max_position_embeddings=512,
                                   bos_token_id=0, eos_token_id=1)
    m = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():  # well-separated greedy choices (see test_llm_model.build)
        for p in m.parameters():
            if p.dim() == 2:
                p.mul_(4.0)
    m.eval().save_pretrained(d, safe_serialization=True)
    return d


@pytest.fixture(scope="module")
def hf(model_dir):
    """(transformers model, transformers tokenizer) of the test model."""
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    return model, tok


def greedy(model, ids, n):
    """transformers' greedy continuation of `ids` (eos does not stop it) and each step's raw logits.
    (A loop of forward calls rather than generate(): generate would mask the bos id 0 as padding.)"""
    seq, logits = list(ids), []
    with torch.no_grad():
        out = model(torch.tensor([seq]), use_cache=True)
        for _ in range(n):
            row = out.logits[0, -1].float()
            logits.append(row)
            seq.append(int(row.argmax()))
            out = model(torch.tensor([[seq[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return seq[len(ids):], torch.stack(logits)


class Server:
    """oc-llm-server on a free port; stopped with SIGTERM (it must exit 0)."""

    def __init__(self, model_dir, *args):
        self.proc = subprocess.Popen([TOOL, "--model", str(model_dir), "--served-model-name", NAME, "--port", "0",
                                      "--threads", "2", *map(str, args)], stderr=subprocess.PIPE, text=True)
        self.log = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"serving .* on http://([\d.]+):(\d+)", line)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                break
        else:
            self.proc.kill()
            raise AssertionError("the server did not start: " + "".join(self.log))
        if not hasattr(self, "port"):
            self.proc.wait(10)
            raise AssertionError("the server exited: " + "".join(self.log) + self.proc.stderr.read())
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()
        self.url = f"http://{self.host}:{self.port}"

    def request(self, method, path, body=None, headers=None, raw=None):
        """(status, parsed JSON or text) of one request."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                status, text, ctype = r.status, r.read().decode(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            status, text, ctype = e.code, e.read().decode(), e.headers.get("Content-Type", "")
        return status, (json.loads(text) if "json" in ctype and text.strip() else text)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def stream(self, path, body):
        """The SSE events of a streaming request, parsed (the final [DONE] as the string)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200, r.read()
        assert r.getheader("Content-Type").startswith("text/event-stream")
        events = []
        for block in r.read().decode().split("\n\n"):
            block = block.strip()
            if not block or block.startswith(":"):
                continue
            assert block.startswith("data: "), block
            payload = block[len("data: "):]
            events.append(payload if payload == "[DONE]" else json.loads(payload))
        conn.close()
        return events

    def metrics(self):
        status, text = self.request("GET", "/metrics")
        assert status == 200
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                values[key] = float(value)
        return values

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("the server did not stop on SIGTERM")
        assert rc == 0, "".join(self.log)


@pytest.fixture(scope="module")
def server(model_dir):
    s = Server(model_dir, "--max-model-len", 512, "--kv-cache-memory-bytes", "8MiB")
    yield s
    s.stop()


def metric(values, name, **labels):
    lab = ",".join([f'model_name="{NAME}"'] + [f'{k}="{v}"' for k, v in labels.items()])
    return values[f"{name}{{{lab}}}"]


PROMPTS = ["Return the number of items", "The path is", "Split the string at", "def f(x):\n    return"]


def test_completion_greedy_matches_transformers(server, hf):
    model, tok = hf
    for prompt in PROMPTS:
        ids = tok(prompt)["input_ids"]
        ref_ids, _ = greedy(model, ids, 64)
        status, r = server.post("/v1/completions", {"model": NAME, "prompt": prompt, "max_tokens": 64,
                                                    "temperature": 0, "ignore_eos": True})
        assert status == 200, r
        assert r["object"] == "text_completion" and r["model"] == NAME and r["id"].startswith("cmpl-")
        c = r["choices"][0]
        assert c["text"] == tok.decode(ref_ids, skip_special_tokens=True)
        assert c["finish_reason"] == "length"
        assert r["usage"] == {"prompt_tokens": len(ids), "completion_tokens": 64, "total_tokens": len(ids) + 64}
        # Streaming gives the same text in pieces, then [DONE].
        ev = server.stream("/v1/completions", {"prompt": prompt, "max_tokens": 64, "temperature": 0,
                                               "ignore_eos": True, "stream": True,
                                               "stream_options": {"include_usage": True}})
        assert ev[-1] == "[DONE]"
        assert ev[-2]["choices"] == [] and ev[-2]["usage"] == r["usage"]
        chunks = ev[:-2]
        assert len(chunks) > 8
        assert "".join(e["choices"][0]["text"] for e in chunks) == c["text"]
        assert [e["choices"][0]["finish_reason"] for e in chunks][-1] == "length"
        assert all(e["choices"][0]["finish_reason"] is None for e in chunks[:-1])


def test_token_id_prompts_and_batches(server, hf):
    model, tok = hf
    prompts = [tok(p)["input_ids"] for p in PROMPTS[:3]]
    status, r = server.post("/v1/completions", {"prompt": prompts, "max_tokens": 20, "temperature": 0, "ignore_eos": True})
    assert status == 200, r
    assert [c["index"] for c in r["choices"]] == [0, 1, 2]
    for ids, c in zip(prompts, r["choices"]):
        assert c["text"] == tok.decode(greedy(model, ids, 20)[0], skip_special_tokens=True)
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 5, "temperature": 0,
                                                "ignore_eos": True, "echo": True})
    assert r["choices"][0]["text"].startswith(PROMPTS[0])


def test_chat_completion_through_the_openai_client(server, hf):
    openai = pytest.importorskip("openai")
    model, tok = hf
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    messages = [{"role": "system", "content": "You write docstrings."},
                {"role": "user", "content": "Describe os.path.join"}]
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):
        ids = ids["input_ids"]
    ref = tok.decode(greedy(model, list(ids), 40)[0], skip_special_tokens=True)
    r = client.chat.completions.create(model=NAME, messages=messages, max_tokens=40, temperature=0,
                                       extra_body={"ignore_eos": True})
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == ref
    assert r.choices[0].finish_reason == "length"
    assert r.usage.prompt_tokens == len(ids) and r.usage.completion_tokens == 40
    stream = client.chat.completions.create(model=NAME, messages=messages, max_tokens=40, temperature=0, stream=True,
                                            stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    parts, usage, reasons = [], None, []
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for ch in chunk.choices:
            parts.append(ch.delta.content or "")
            reasons.append(ch.finish_reason)
    assert "".join(parts) == ref
    assert reasons[-1] == "length" and usage.completion_tokens == 40
    # Completions through the client too.
    c = client.completions.create(model=NAME, prompt=PROMPTS[1], max_tokens=16, temperature=0,
                                  extra_body={"ignore_eos": True})
    assert c.choices[0].text == tok.decode(greedy(model, tok(PROMPTS[1])["input_ids"], 16)[0], skip_special_tokens=True)
    assert [m.id for m in client.models.list().data] == [NAME]


def test_stop_strings(server, hf):
    model, tok = hf
    ids = tok(PROMPTS[0])["input_ids"]
    full = tok.decode(greedy(model, ids, 64)[0], skip_special_tokens=True)
    stop = full[20:23]  # three characters from the middle of the greedy text
    assert stop and len(stop) == 3
    cut = full.index(stop)
    body = {"prompt": PROMPTS[0], "max_tokens": 64, "temperature": 0, "ignore_eos": True, "stop": [stop, "\x00never"]}
    status, r = server.post("/v1/completions", body)
    c = r["choices"][0]
    assert (c["text"], c["finish_reason"], c["stop_reason"]) == (full[:cut], "stop", stop)
    assert r["usage"]["completion_tokens"] < 64
    status, r = server.post("/v1/completions", {**body, "include_stop_str_in_output": True})
    assert r["choices"][0]["text"] == full[:cut + 3]
    ev = server.stream("/v1/completions", {**body, "stream": True})
    assert "".join(e["choices"][0]["text"] for e in ev[:-1]) == full[:cut]
    assert ev[-2]["choices"][0]["finish_reason"] == "stop"


def test_logprobs_match_transformers(server, hf):
    model, tok = hf
    ids = tok(PROMPTS[2])["input_ids"]
    ref_ids, logits = greedy(model, ids, 12)
    lsm = torch.log_softmax(logits, -1)
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[2], "max_tokens": 12, "temperature": 0,
                                                "ignore_eos": True, "logprobs": 3})
    lp = r["choices"][0]["logprobs"]
    assert lp["tokens"] == [tok.decode([t]) for t in ref_ids]
    for i, t in enumerate(ref_ids):
        assert abs(lp["token_logprobs"][i] - lsm[i, t].item()) < 1e-4
        top = torch.topk(lsm[i], 3)
        strs = [tok.decode([int(k)]) for k in top.indices] + [tok.decode([t])]
        for k, v in zip(strs, top.values):
            if strs.count(k) == 1:  # (byte tokens of one character all read "\ufffd": one dict key)
                assert abs(lp["top_logprobs"][i][k] - v.item()) < 1e-4
    assert lp["text_offset"][0] == 0 and lp["text_offset"][1] == len(lp["tokens"][0])
    status, r = server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4,
                                                     "logprobs": True, "top_logprobs": 2, "temperature": 0})
    content = r["choices"][0]["logprobs"]["content"]
    assert len(content) == r["usage"]["completion_tokens"]
    assert all(len(c["top_logprobs"]) == 2 and c["bytes"] == list(c["token"].encode()) for c in content)


def test_seeded_sampling_is_reproducible(server):
    body = {"prompt": PROMPTS[3], "max_tokens": 32, "temperature": 1.0, "top_p": 0.9, "seed": 7, "ignore_eos": True}
    a = server.post("/v1/completions", body)[1]["choices"][0]["text"]
    b = server.post("/v1/completions", body)[1]["choices"][0]["text"]
    c = server.post("/v1/completions", {**body, "seed": 8})[1]["choices"][0]["text"]
    assert a == b and a != c


def test_tokenize_and_detokenize_equal_tokenizers(server, model_dir):
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    for text in docstrings()[:40] + ["  spaces  and\ttabs\n\n", "Unicode: naïve café — 東京 🙂"]:
        status, r = server.post("/tokenize", {"prompt": text})
        assert status == 200
        want = ref.encode(text).ids
        assert r == {"count": len(want), "max_model_len": 512, "tokens": want}
        status, d = server.post("/detokenize", {"tokens": want})
        assert d["prompt"] == ref.decode(want, skip_special_tokens=False)
    status, r = server.post("/tokenize", {"messages": [{"role": "user", "content": "hi"}]})
    assert r["tokens"][0] == 0 and r["count"] == len(r["tokens"])


def error_of(status, body, code, param=None):
    assert status == code, body
    assert set(body["error"]) >= {"message", "type", "param", "code"}
    if param is not None:
        assert body["error"]["param"] == param, body
    return body["error"]


def test_bad_requests_name_the_field(server):
    post = server.post
    e = error_of(*server.request("POST", "/v1/completions", raw=b'{"prompt": "x",'), 400)
    assert "not valid JSON" in e["message"]
    e = error_of(*post("/v1/completions", {"model": "gpt-9", "prompt": "x"}), 404, "model")
    assert e["code"] == "model_not_found" and "gpt-9" in e["message"]
    e = error_of(*post("/v1/completions", {"prompt": "x" * 3000, "max_tokens": 10}), 400, "prompt")
    assert "maximum context length is 512" in e["message"]
    error_of(*post("/v1/completions", {"prompt": "x", "max_tokens": 600}), 400, "max_tokens")
    error_of(*post("/v1/completions", {"prompt": "x", "temperature": "hot"}), 400, "temperature")
    error_of(*post("/v1/completions", {"prompt": "x", "top_p": 1.5}), 400, "top_p")
    error_of(*post("/v1/completions", {"prompt": "x", "max_tokens": 0}), 400, "max_tokens")
    error_of(*post("/v1/completions", {"prompt": [[1, 2], [99999]]}), 400, "prompt")
    error_of(*post("/v1/completions", {"prompt": []}), 400, "prompt")
    error_of(*post("/v1/completions", {}), 400, "prompt")
    error_of(*post("/v1/completions", {"prompt": "x", "logit_bias": {"abc": 1}}), 400, "logit_bias")
    error_of(*post("/v1/completions", {"prompt": "x", "stop": ""}), 400, "stop")
    error_of(*post("/v1/completions", {"prompt": "x", "stream_options": {"include_usage": True}}), 400, "stream_options")
    e = error_of(*post("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}],
                                                "tools": [{"type": "function", "function": {"name": "f"}}]}), 400, "tools")
    assert "not supported" in e["message"]
    error_of(*post("/v1/chat/completions", {"messages": []}), 400, "messages")
    error_of(*post("/v1/chat/completions", {"messages": [{"content": "no role"}]}), 400, "messages")
    error_of(*post("/v1/chat/completions", {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
             400, "messages")
    error_of(*post("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}],
                                            "response_format": {"type": "json_object"}}), 400, "response_format")
    error_of(*post("/detokenize", {"tokens": [-1]}), 400, "tokens")
    error_of(*server.request("GET", "/v1/nothing"), 404)
    assert server.request("GET", "/health")[0] == 200  # still serving


def test_api_key(model_dir):
    s = Server(model_dir, "--api-key", "sekret", "--max-model-len", 128, "--kv-cache-memory-bytes", "4MiB")
    try:
        e = error_of(*s.post("/v1/completions", {"prompt": "x", "max_tokens": 2}), 401)
        assert "API key" in e["message"]
        error_of(*s.post("/v1/completions", {"prompt": "x"}, headers={"Authorization": "Bearer wrong"}), 401)
        status, r = s.post("/v1/completions", {"prompt": "x", "max_tokens": 2},
                           headers={"Authorization": "Bearer sekret"})
        assert status == 200, r
        assert s.request("GET", "/health")[0] == 200  # outside /v1: open
    finally:
        s.stop()


def open_stream(s, body):
    """A streaming request on a raw socket; returns it once the reply's headers arrived (the request was accepted)."""
    sock = socket.create_connection((s.host, s.port), timeout=60)
    data = json.dumps({**body, "stream": True}).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(4096)
        assert chunk, got
        got += chunk
    assert got.startswith(b"HTTP/1.1 200"), got
    return sock, got


def test_full_queue_answers_429(model_dir):
    """One request running (--max-num-seqs 1), one waiting (--max-waiting-requests 1): the next is refused with
    429 at once, and served again once the queue has room."""
    s = Server(model_dir, "--max-num-seqs", 1, "--max-waiting-requests", 1, "--max-model-len", 512,
               "--kv-cache-memory-bytes", "8MiB")
    try:
        body = {"prompt": "x", "max_tokens": 480, "ignore_eos": True, "temperature": 0}
        running, got = open_stream(s, body)
        while b"data: " not in got:  # its first token: it is running
            got += running.recv(4096)
        waiting, _ = open_stream(s, body)
        status, r = s.post("/v1/completions", {**body, "max_tokens": 2})
        assert status == 429, r
        assert "waiting" in r["error"]["message"] and "--max-waiting-requests 1" in r["error"]["message"]
        for sock in (running, waiting):
            sock.close()  # both cancelled
        deadline = time.time() + 30
        while (status := s.post("/v1/completions", {**body, "max_tokens": 2})[0]) == 429:
            assert time.time() < deadline, "still refused 30 s after the queue emptied"
            time.sleep(0.1)
        assert status == 200
    finally:
        s.stop()


def test_metrics_and_discovery(server):
    before = server.metrics()
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[0], "max_tokens": 9, "ignore_eos": True})
    after = server.metrics()
    gen = metric(after, "vllm:generation_tokens_total") - metric(before, "vllm:generation_tokens_total")
    assert gen == 9
    assert metric(after, "vllm:prompt_tokens_total") - metric(before, "vllm:prompt_tokens_total") == r["usage"]["prompt_tokens"]
    assert metric(after, "vllm:request_success_total", finished_reason="length") == \
        metric(before, "vllm:request_success_total", finished_reason="length") + 1
    assert metric(after, "vllm:time_to_first_token_seconds_count") == metric(before, "vllm:time_to_first_token_seconds_count") + 1
    assert metric(after, "vllm:inter_token_latency_seconds_count") == metric(before, "vllm:inter_token_latency_seconds_count") + 8
    assert metric(after, "vllm:e2e_request_latency_seconds_bucket", le="+Inf") == metric(after, "vllm:e2e_request_latency_seconds_count")
    assert metric(after, "vllm:num_requests_running") == 0 and metric(after, "vllm:kv_cache_usage_perc") == 0
    status, models = server.request("GET", "/v1/models")
    assert models["data"][0]["id"] == NAME and models["data"][0]["max_model_len"] == 512
    status, doc = server.request("GET", "/openapi.json")
    assert doc["openapi"].startswith("3.") and "/v1/chat/completions" in doc["paths"]


def test_64_concurrent_clients_with_disconnects(server, hf):
    """Half the clients stream and hang up after a few events; the others
    finish. No crash, every block is freed, and each finished request's text
    equals its solo run (greedy)."""
    model, tok = hf

    def client(i):
        prompt = PROMPTS[i % len(PROMPTS)] + " " * (i % 3)
        body = {"prompt": prompt, "max_tokens": 24 + i % 16, "temperature": 0, "ignore_eos": True}
        if i % 2:
            sock = socket.create_connection((server.host, server.port), timeout=60)
            data = json.dumps({**body, "stream": True, "max_tokens": 400}).encode()
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
            got = b""
            while got.count(b"data: ") < 2 + i % 5:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                got += chunk
            sock.close()  # gone mid-stream
            return None
        status, r = server.post("/v1/completions", body)
        assert status == 200, r
        return prompt, body["max_tokens"], r["choices"][0]["text"]

    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        results = [r for r in pool.map(client, range(64)) if r]
    assert len(results) == 32
    for prompt, n, text in results[:8]:
        assert text == tok.decode(greedy(model, tok(prompt)["input_ids"], n)[0], skip_special_tokens=True)
    deadline = time.time() + 30
    while True:
        m = server.metrics()
        if metric(m, "vllm:num_requests_running") == 0 and metric(m, "vllm:kv_cache_usage_perc") == 0:
            break
        assert time.time() < deadline, "blocks still held 30 s after the clients left"
        time.sleep(0.2)
    assert metric(m, "vllm:num_requests_waiting") == 0
    assert metric(m, "vllm:request_success_total", finished_reason="abort") >= 32
    assert server.post("/v1/completions", {"prompt": "x", "max_tokens": 3})[0] == 200


def test_schemathesis_against_openapi(server, tmp_path):
    st = pytest.importorskip("schemathesis")
    proc = subprocess.run(["schemathesis", "run", server.url + "/openapi.json",
                           "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                                       "response_schema_conformance",
                           "--max-examples", "25", "--phases", "examples,coverage,fuzzing", "--seed", "1",
                           "--request-timeout", "60"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert server.request("GET", "/health")[0] == 200


def test_help_and_flag_errors(model_dir):
    out = subprocess.run([TOOL, "--help"], capture_output=True, text=True).stdout
    for flag in ["--model", "--host", "--port", "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens",
                 "--tensor-parallel-size", "--dtype", "--served-model-name", "--api-key", "--kv-cache-memory-bytes"]:
        assert flag in out
    for args, message in [(["--model", str(model_dir), "--bogus", "1"], "unknown argument --bogus"),
                          (["--model", str(model_dir), "--max-num-seqs", "x"], "--max-num-seqs"),
                          (["--model", str(model_dir), "--tensor-parallel-size", "2"], "not supported"),
                          (["--model", "/nonexistent"], "/nonexistent"),
                          (["--port", "1"], "--model DIR is required")]:
        p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and message in p.stderr, (args, p.stderr)
    s = Server(model_dir, "--max-model-len", 128, "--kv-cache-memory-bytes", "2MiB")
    try:
        p = subprocess.run([TOOL, "--model", str(model_dir), "--port", str(s.port)], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode != 0 and str(s.port) in p.stderr and "in use" in p.stderr
        assert "KV cache of" in "".join(s.log) and "at most" in "".join(s.log)
    finally:
        s.stop()


def test_parallel_sampling_n(server, hf):
    model, tok = hf
    ids = tok(PROMPTS[1])["input_ids"]
    ref = tok.decode(greedy(model, ids, 12)[0], skip_special_tokens=True)
    status, r = server.post("/v1/completions", {"prompt": PROMPTS[1], "n": 2, "max_tokens": 12, "temperature": 0,
                                                "ignore_eos": True})
    assert status == 200, r
    assert [c["index"] for c in r["choices"]] == [0, 1] and all(c["text"] == ref for c in r["choices"])
    assert r["usage"]["completion_tokens"] == 24
    body = {"prompt": [PROMPTS[0], PROMPTS[2]], "n": 3, "max_tokens": 16, "temperature": 1.0, "seed": 11,
            "ignore_eos": True}
    a = server.post("/v1/completions", body)[1]
    b = server.post("/v1/completions", body)[1]
    texts = [c["text"] for c in a["choices"]]
    assert [c["index"] for c in a["choices"]] == list(range(6)) and texts == [c["text"] for c in b["choices"]]
    assert len(set(texts[:3])) > 1  # choices of one prompt draw differently
    # Choice 0 of a seeded request is the n = 1 request with that seed.
    one = server.post("/v1/completions", {**body, "prompt": PROMPTS[0], "n": 1})[1]["choices"][0]["text"]
    assert one == texts[0]
    ev = server.stream("/v1/completions", {**body, "stream": True})
    joined = {}
    for e in ev[:-1]:
        for c in e["choices"]:
            joined[c["index"]] = joined.get(c["index"], "") + c["text"]
    assert [joined[i] for i in range(6)] == texts
    status, r = server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "n": 2,
                                                     "max_tokens": 5, "temperature": 0})
    assert [c["index"] for c in r["choices"]] == [0, 1]
    assert r["choices"][0]["message"]["content"] == r["choices"][1]["message"]["content"]


def test_prefix_cache_hits_in_metrics(server, hf):
    model, tok = hf
    prompt = " ".join(" ".join(docstrings()[3:6]).split()[:80])  # over two 16-token blocks
    ids = tok(prompt)["input_ids"]
    assert len(ids) > 40
    ref = tok.decode(greedy(model, ids, 8)[0], skip_special_tokens=True)
    before = server.metrics()
    texts = [server.post("/v1/completions", {"prompt": prompt, "max_tokens": 8, "temperature": 0,
                                             "ignore_eos": True})[1]["choices"][0]["text"] for _ in range(2)]
    after = server.metrics()
    assert texts == [ref, ref]
    hits = metric(after, "vllm:prefix_cache_hits_total") - metric(before, "vllm:prefix_cache_hits_total")
    queries = metric(after, "vllm:prefix_cache_queries_total") - metric(before, "vllm:prefix_cache_queries_total")
    assert queries == 2 * len(ids)
    assert hits >= (len(ids) - 1) // 16 * 16  # the second request reuses the first's full blocks


@pytest.mark.parametrize("dtype", ["bfloat16", "int8", "int4"])
def test_weight_dtypes_serve_what_the_model_layer_computes(dtype, model_dir, hf):
    """--dtype loads the weights in that precision: the server's greedy text
    is oc-llm-generate's with the same --dtype (the model layer, tested
    against transformers on the same quantized weights in test_llm_weights)."""
    _, tok = hf
    ids = tok(PROMPTS[0])["input_ids"]
    gen = subprocess.run([os.path.join(BUILD_DIR, "oc-llm-generate"), "--model", str(model_dir), "--dtype", dtype,
                          "--threads", "2", "--prompt-ids", ",".join(map(str, ids)), "--max-tokens", "24"],
                         capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stderr
    want = json.loads(gen.stdout)
    want = want[0] if want and isinstance(want[0], list) else want
    s = Server(model_dir, "--dtype", dtype, "--max-model-len", 128, "--kv-cache-memory-bytes", "4MiB")
    try:
        status, r = s.post("/v1/completions", {"prompt": ids, "max_tokens": 24, "temperature": 0, "ignore_eos": True})
        assert status == 200, r
        assert r["choices"][0]["text"] == tok.decode(want, skip_special_tokens=True)
    finally:
        s.stop()


def test_serving_benchmark_client_against_the_server(server, tmp_path):
    """bench/llm_serving_bench.py (vLLM's benchmark_serving's flags) against this
    server: every request succeeds, lengths are exact, the figures are sane."""
    from oc_harness import SOURCE_DIR
    out = tmp_path / "bench.json"
    for endpoint in ["/v1/completions", "/v1/chat/completions"]:
        p = subprocess.run(["python3", os.path.join(SOURCE_DIR, "bench", "llm_serving_bench.py"), "--base-url", server.url,
                            "--endpoint", endpoint, "--num-prompts", "12", "--random-input-len", "40",
                            "--random-output-len", "16", "--max-concurrency", "4", "--seed", "3",
                            "--result-file", str(out), "--quiet"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        r = json.loads(out.read_text())
        assert r["completed"] == 12 and r["failed"] == 0, r["errors"]
        assert r["output_lens"] == [16] * 12 and r["total_output_tokens"] == 12 * 16
        assert r["input_lens"] == [40] * 12
        assert r["output_throughput"] > 0 and all(t > 0 for t in r["ttfts"])
