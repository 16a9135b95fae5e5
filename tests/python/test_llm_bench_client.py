"""bench/llm_serving_bench.py against a scripted OpenAI-like server.

The server (aiohttp, in a thread of the test process, real HTTP and real
server-sent events) answers /v1/completions and /v1/chat/completions with
chunks written at fixed times after each request arrives (the first after
TTFT, then one every ITL), and implements /tokenize, /detokenize and
/v1/models over a word tokenizer of its own (id i is the text " w<i>", id 0
is "<s>", which /tokenize always prepends). It records when each request
arrived, the prompt it carried and how many requests were in flight, and can
fail requests on purpose (HTTP 500, a connection dropped mid-stream, a stream
without [DONE], an error event). The client runs as a subprocess, as a user
runs it; its figures are checked against the script's timings and the
server's records.
"""
import asyncio
import json
import math
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from aiohttp import web

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "bench", "llm_serving_bench.py")
DEMO = os.path.join(ROOT, "models", "llm-demo")
VOCAB = 500


def word_tokenize(text):
    return [0] + [0 if m == "<s>" else int(m[2:]) for m in re.findall(r"<s>| w\d+", text)]


class Scripted:
    """The scripted server's behaviour and records."""

    def __init__(self, ttft=0.2, itl=0.05, modes=("ok",), tokens_per_chunk=1, usage=True):
        self.ttft, self.itl, self.modes, self.per_chunk, self.usage = ttft, itl, modes, tokens_per_chunk, usage
        self.arrivals, self.bodies, self.writes, self.active, self.peak = [], [], [], 0, 0

    async def generate(self, request):
        arrived = time.perf_counter()
        body = await request.json()
        index = len(self.arrivals)
        self.arrivals.append(arrived)
        self.bodies.append(body)
        writes = []  # when each chunk with tokens was written
        self.writes.append(writes)
        mode = self.modes[index % len(self.modes)]
        chat = request.path.endswith("chat/completions")
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            if mode == "500":
                return web.json_response({"error": {"message": "scripted failure", "code": 500}}, status=500)
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await resp.prepare(request)

            async def event(obj):
                await resp.write(b"data: " + json.dumps(obj).encode() + b"\n\n")

            if chat:  # the role comes first, without content (as vLLM sends it)
                await event({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
            n = int(body["max_tokens"])
            chunks = math.ceil(n / self.per_chunk)
            for j in range(chunks):
                delay = arrived + self.ttft + j * self.itl - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                if mode == "drop" and j == 2:
                    request.transport.abort()  # the connection goes away mid-stream
                    return resp
                if mode == "error_event" and j == 1:
                    await event({"error": {"message": "scripted error event", "code": 500}})
                    break
                text = "".join(f" w{(7 * (j * self.per_chunk + k)) % (VOCAB - 1) + 1}"
                               for k in range(min(self.per_chunk, n - j * self.per_chunk)))
                last = j == chunks - 1
                choice = ({"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text})
                choice["finish_reason"] = "length" if last else None
                await event({"object": "chat.completion.chunk" if chat else "text_completion", "choices": [choice]})
                writes.append(time.perf_counter())
            if mode == "ok" and self.usage:
                prompt = body["messages"][0]["content"] if chat else body["prompt"]
                await event({"choices": [], "usage": {"prompt_tokens": len(word_tokenize(prompt)),
                                                      "completion_tokens": n}})
            if mode != "no_done":
                await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            return resp
        finally:
            self.active -= 1

    async def tokenize(self, request):
        ids = word_tokenize((await request.json())["prompt"])
        return web.json_response({"tokens": ids, "count": len(ids), "max_model_len": 4096})

    async def detokenize(self, request):
        ids = (await request.json())["tokens"]
        if any(not 0 <= i < VOCAB for i in ids):
            return web.json_response({"error": {"message": "token id out of range"}}, status=400)
        return web.json_response({"prompt": "".join("<s>" if i == 0 else f" w{i}" for i in ids)})

    async def models(self, request):
        return web.json_response({"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})


class Server:
    """Runs a Scripted server on a free port in a thread with its own event loop."""

    def __init__(self, script):
        self.script = script

    def __enter__(self):
        app = web.Application()
        s = self.script
        app.router.add_post("/v1/completions", s.generate)
        app.router.add_post("/v1/chat/completions", s.generate)
        app.router.add_post("/tokenize", s.tokenize)
        app.router.add_post("/detokenize", s.detokenize)
        app.router.add_get("/v1/models", s.models)
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve():
            asyncio.set_event_loop(self.loop)
            self.runner = web.AppRunner(app, access_log=None)
            self.loop.run_until_complete(self.runner.setup())
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.port = self.runner.addresses[0][1]
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(self.runner.cleanup())
            self.loop.close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        assert ready.wait(30), "the scripted server did not start"
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


def bench(tmp_path, url, *args, expect_rc=0):
    out = tmp_path / "result.json"
    if out.exists():
        out.unlink()
    proc = subprocess.run([sys.executable, BENCH, "--base-url", url, "--result-file", str(out), *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == expect_rc, f"rc {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return (json.loads(out.read_text()) if out.exists() else None), proc


def near(got, want, tol, what):
    assert abs(got - want) <= tol, f"{what}: {got:.4f} s, expected {want:.4f} s (tolerance {tol} s)"


def server_side(script):
    """What the server did, per request: first chunk - arrival, the gaps between chunks, last chunk - arrival,
    (last - first) / (tokens - 1)."""
    ttft = [w[0] - a for a, w in zip(script.arrivals, script.writes)]
    gaps = np.concatenate([np.diff(w) for w in script.writes])
    e2e = [w[-1] - a for a, w in zip(script.arrivals, script.writes)]
    tpot = [(w[-1] - w[0]) / (b["max_tokens"] - 1) for w, b in zip(script.writes, script.bodies)]
    return np.median(ttft), np.median(gaps), np.median(e2e), np.mean(tpot)


def check_timings(r, script, ttft, itl, n_out):
    """The client's figures against the script (lower bounds: nothing comes earlier) and against what the
    server did (the host's scheduling delays are in both)."""
    s_ttft, s_gap, s_e2e, s_tpot = server_side(script)
    near(s_ttft, ttft + 0.02, 0.1, "the server's own TTFT")  # the script ran about as written
    e2e = ttft + (n_out - 1) * itl
    for t, lat in zip(r["ttfts"], r["latencies"]):
        assert t >= ttft - 0.002 and lat >= e2e - 0.002, (t, lat)
    assert -0.002 <= r["median_ttft_ms"] / 1000 - s_ttft <= 0.03, (r["median_ttft_ms"], s_ttft)
    near(r["median_itl_ms"] / 1000, s_gap, 0.01, "median ITL")
    near(r["mean_tpot_ms"] / 1000, s_tpot, 0.01, "mean TPOT")
    assert -0.002 <= r["median_e2el_ms"] / 1000 - s_e2e <= 0.04, (r["median_e2el_ms"], s_e2e)


TTFT, ITL = 0.25, 0.05


@pytest.mark.parametrize("endpoint", ["/v1/completions", "/v1/chat/completions"])
def test_timings_match_the_script(tmp_path, endpoint):
    n_out, n_prompts = 8, 6
    with Server(Scripted(TTFT, ITL)) as srv:
        r, proc = bench(tmp_path, srv.url, "--endpoint", endpoint, "--num-prompts", n_prompts,
                        "--random-input-len", 16, "--random-output-len", n_out, "--metric-percentiles", "50,99")
        script = srv.script
        bodies = script.bodies
    assert r["completed"] == n_prompts and r["failed"] == 0, r["errors"]
    # What the client sent: the model from /v1/models, exact lengths, streaming, ignore_eos.
    for b in bodies:
        assert b["model"] == "scripted-model" and b["stream"] is True and b["ignore_eos"] is True
        assert b["max_tokens"] == n_out
        prompt = b["messages"][0]["content"] if endpoint.endswith("chat/completions") else b["prompt"]
        assert len(word_tokenize(prompt)) - 1 == 16  # the server's own count, less its BOS
    assert r["input_lens"] == [16] * n_prompts and r["output_lens"] == [n_out] * n_prompts
    assert r["total_output_tokens"] == n_prompts * n_out and r["total_input_tokens"] == n_prompts * 16
    e2e = TTFT + (n_out - 1) * ITL
    assert all(len(itl) == n_out - 1 for itl in r["itls"])
    check_timings(r, script, TTFT, ITL, n_out)
    # The reported statistics are those of the per-request figures.
    assert r["mean_ttft_ms"] == pytest.approx(1000 * np.mean(r["ttfts"]))
    assert r["p99_itl_ms"] == pytest.approx(1000 * np.percentile(np.concatenate(r["itls"]), 99))
    tpots = [(lat - t) / (n_out - 1) for lat, t in zip(r["latencies"], r["ttfts"])]
    assert r["median_tpot_ms"] == pytest.approx(1000 * np.median(tpots))
    # All sent at once: the run lasts about one request (not six), and the throughputs follow.
    assert e2e - 0.002 <= r["duration"] <= e2e + 0.5, r["duration"]
    assert r["request_throughput"] == pytest.approx(n_prompts / r["duration"])
    assert r["output_throughput"] == pytest.approx(n_prompts * n_out / r["duration"])
    assert n_prompts / (e2e + 0.5) <= r["request_throughput"] <= n_prompts / (e2e - 0.002)
    assert re.search(rf"Successful requests:\s+{n_prompts}\s", proc.stdout), proc.stdout
    assert "Mean TTFT (ms):" in proc.stdout and "P99 ITL (ms):" in proc.stdout


def test_chunks_of_several_tokens_and_no_usage(tmp_path):
    # usage.completion_tokens counts the tokens when chunks carry several; without it, chunks are counted.
    n_out = 8
    with Server(Scripted(0.1, 0.04, tokens_per_chunk=2)) as srv:
        r, _ = bench(tmp_path, srv.url, "--num-prompts", 3, "--random-input-len", 8, "--random-output-len", n_out)
        script = srv.script
    assert r["output_lens"] == [n_out] * 3 and all(len(i) == n_out // 2 - 1 for i in r["itls"])
    # TPOT spreads the 3 gaps over 7 tokens; ITL is per chunk.
    check_timings(r, script, 0.1, 0.04 * 3 / 7, n_out)
    near(r["mean_tpot_ms"] / 1000, 3 * 0.04 / (n_out - 1), 0.02, "TPOT over 8 tokens in 4 chunks")
    near(r["median_itl_ms"] / 1000, 0.04, 0.02, "ITL between chunks")
    with Server(Scripted(0.1, 0.04, usage=False)) as srv:
        r, _ = bench(tmp_path, srv.url, "--num-prompts", 3, "--random-input-len", 8, "--random-output-len", n_out)
    assert r["output_lens"] == [n_out] * 3


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_max_concurrency_is_obeyed(tmp_path, limit):
    n, n_out, ttft, itl = 7, 4, 0.08, 0.03
    with Server(Scripted(ttft, itl)) as srv:
        r, _ = bench(tmp_path, srv.url, "--num-prompts", n, "--random-input-len", 8, "--random-output-len", n_out,
                     "--max-concurrency", limit)
        peak, script = srv.script.peak, srv.script
    assert r["completed"] == n
    assert peak == limit, f"{peak} requests in flight at once, limit {limit}"
    one = ttft + (n_out - 1) * itl
    assert r["duration"] >= math.ceil(n / limit) * one - 0.01
    # TTFT is counted from the send, not from the wait for a slot (which
    # would add at least one request's time to most of them).
    assert all(t >= ttft - 0.002 for t in r["ttfts"])
    assert r["median_ttft_ms"] / 1000 - server_side(script)[0] <= 0.03


def test_request_rate_is_a_poisson_process(tmp_path):
    n, rate = 30, 20.0
    with Server(Scripted(0.3, 0.01)) as srv:  # each lasts 0.32 s, the gaps 0.05 s on average
        r, _ = bench(tmp_path, srv.url, "--num-prompts", n, "--random-input-len", 8, "--random-output-len", 3,
                     "--request-rate", rate, "--seed", 3)
        arrivals = np.array(srv.script.arrivals)
        peak = srv.script.peak
    assert r["completed"] == n
    # The server saw the requests when the client says it sent them (same gaps, within scheduling noise).
    sent = np.sort(np.array(r["starts"]))
    got = np.sort(arrivals - arrivals.min())
    lag = np.abs((sent - sent[0]) - got)
    assert np.median(lag) < 0.02 and lag.max() < 0.1, lag
    gaps = np.diff(got)
    measured = (n - 1) / got[-1]
    assert rate / 2 < measured < rate * 2, f"arrival rate {measured:.1f}/s for {rate}/s"
    cv = gaps.std() / gaps.mean()  # 1 for exponential gaps, 0 for a fixed interval
    assert 0.5 < cv < 1.6, f"coefficient of variation of the gaps {cv:.2f}"
    # Open loop: the next request does not wait for the previous one.
    assert peak >= 3, f"at most {peak} in flight"
    # With the default (inf) all arrive together.
    with Server(Scripted(0.05, 0.01)) as srv:
        bench(tmp_path, srv.url, "--num-prompts", n, "--random-input-len", 8, "--random-output-len", 3)
        arrivals = np.array(srv.script.arrivals)
    assert arrivals.max() - arrivals.min() < 0.5  # at 20/s they spanned about 1.5 s


def test_failures_are_counted_not_fatal(tmp_path):
    modes = ("ok", "500", "drop", "no_done", "error_event")
    n = 10
    with Server(Scripted(0.05, 0.02, modes=modes)) as srv:
        r, proc = bench(tmp_path, srv.url, "--num-prompts", n, "--random-input-len", 8, "--random-output-len", 5,
                        "--max-concurrency", 1)  # one at a time: arrival order is request order
    assert r["completed"] == 2 and r["failed"] == 8
    errors = r["errors"]
    for i, mode in enumerate(modes * 2):
        e = errors[i]
        if mode == "ok":
            assert r["successes"][i] and e == "" and r["output_lens"][i] == 5
        else:
            assert not r["successes"][i]
            want = {"500": "HTTP 500", "drop": "ClientPayloadError|ServerDisconnected|Connection",
                    "no_done": "ended before data: \\[DONE\\]", "error_event": "error event"}[mode]
            assert re.search(want, e), f"request {i} ({mode}): {e!r}"
    # The metrics cover the two that completed.
    assert r["total_output_tokens"] == 10 and len([t for t in r["ttfts"] if t > 0]) >= 2
    assert "failed: HTTP 500" in proc.stdout


def test_unreachable_server(tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    url = f"http://127.0.0.1:{port}"
    # Prompts made locally: every request fails, exit status 1, no traceback.
    r, _ = bench(tmp_path, url, "--model", "m", "--tokenizer", DEMO, "--num-prompts", 3, "--random-input-len", 8,
                 "--random-output-len", 2, expect_rc=1)
    assert r["completed"] == 0 and r["failed"] == 3 and all("Connect" in e for e in r["errors"])
    # Prompts from the server: it fails while preparing them (exit 2, a message).
    _, proc = bench(tmp_path, url, "--model", "m", "--num-prompts", 3, expect_rc=2)
    assert "preparing prompts failed" in proc.stderr


def test_local_tokenizer_gives_exact_prompt_lengths(tmp_path):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(DEMO, "tokenizer.json"))
    n, length = 12, 40
    with Server(Scripted(0.02, 0.01)) as srv:
        r, _ = bench(tmp_path, srv.url, "--tokenizer", DEMO, "--num-prompts", n, "--random-input-len", length,
                     "--random-output-len", 2, "--random-range-ratio", 0.5, "--seed", 7)
        bodies = srv.script.bodies
    assert r["completed"] == n
    by_prompt = {b["prompt"]: b for b in bodies}
    # The client's figures are what Hugging Face tokenizers counts in the prompts the server got.
    counts = sorted(len(tok.encode(p, add_special_tokens=False).ids) for p in by_prompt)
    assert counts == sorted(r["input_lens"])
    assert all(length * 0.5 <= c <= length * 1.5 for c in counts)
    assert len(set(counts)) > 1  # the range ratio varies them
    assert sorted(b["max_tokens"] for b in bodies) == sorted(r["expected_output_lens"])
    # Without a range every prompt is exactly the length asked (random byte tokens that make no
    # whole character, U+FFFD, must not make them longer).
    with Server(Scripted(0.02, 0.01)) as srv:
        r, _ = bench(tmp_path, srv.url, "--tokenizer", DEMO, "--num-prompts", 40, "--random-input-len", 64,
                     "--random-output-len", 2, "--seed", 1)
        bodies = srv.script.bodies
    assert [len(tok.encode(b["prompt"], add_special_tokens=False).ids) for b in bodies] == [64] * 40
    assert r["input_lens"] == [64] * 40


def test_server_tokenizer_finds_the_vocabulary(tmp_path):
    with Server(Scripted(0.02, 0.01)) as srv:
        r, _ = bench(tmp_path, srv.url, "--num-prompts", 20, "--random-input-len", 30, "--random-output-len", 2)
        bodies = srv.script.bodies
    ids = np.concatenate([word_tokenize(b["prompt"])[1:] for b in bodies])
    # Drawn over the whole vocabulary the bisection found (500), none past it.
    assert ids.max() < VOCAB and ids.max() > 0.8 * VOCAB
    assert r["input_lens"] == [30] * 20


def test_bad_flags_are_refused(tmp_path):
    for args, needle in ((["--num-prompts", "0"], "--num-prompts must be at least 1"),
                         (["--request-rate", "0"], "--request-rate must be positive"),
                         (["--max-concurrency", "0"], "--max-concurrency must be at least 1"),
                         (["--metric-percentiles", "50,abc"], "--metric-percentiles"),
                         (["--endpoint", "/v1/embeddings"], "invalid choice")):
        proc = subprocess.run([sys.executable, BENCH, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
