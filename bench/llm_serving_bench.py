#!/usr/bin/env python3
"""Serving benchmark for OpenAI-compatible LLM servers (oc-llm-server, vLLM,
llama.cpp's server, ...), with the flags and metrics of vLLM's
benchmark_serving.

    python3 bench/llm_serving_bench.py --base-url http://127.0.0.1:8000 --model demo \\
        --num-prompts 64 --random-input-len 128 --random-output-len 32 \\
        [--request-rate 4 | --max-concurrency 8] [--tokenizer models/llm-demo] [--result-file out.json]

Prompts are random token ids turned into text, either by the server
(POST /detokenize {"tokens": [...]} -> {"prompt": ...}, lengths checked with
POST /tokenize) or by a local tokenizer (--tokenizer DIR with tokenizer.json,
read with Hugging Face `tokenizers`); the text is re-tokenized and trimmed or
extended until it is --random-input-len tokens (not counting special tokens
the server may add, such as a BOS). Each request streams (SSE) with
max_tokens and ignore_eos=true, so that output lengths are exact. Requests
are sent open-loop: all at once (--request-rate inf, the default) or as a
Poisson process of the given rate (gamma intervals with --burstiness != 1),
at most --max-concurrency in flight when given.

Measured per request, from the moment it is sent: TTFT (first streamed
token), ITL (the gaps between streamed chunks), TPOT ((latency - TTFT) /
(output tokens - 1)), E2E latency (until data: [DONE]). Output tokens are the
server's usage.completion_tokens when it reports them (stream_options
include_usage), else the count of chunks that carried text. A request that
gets an HTTP error, a dropped connection, an error event, a stream without
[DONE] or a timeout is counted as failed with its reason; the metrics are
over the successful ones. Exit status 1 when every request failed.
"""
import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

try:
    import aiohttp
except ImportError:  # pragma: no cover - a clear message instead of a traceback
    sys.exit("llm_serving_bench: needs the aiohttp package (pip install aiohttp)")


@dataclass
class Result:
    prompt_len: int
    expected_output_len: int
    success: bool = False
    output_tokens: int = 0
    ttft: float = 0.0
    latency: float = 0.0
    itl: list = field(default_factory=list)
    start: float = 0.0  # seconds from the benchmark's start to this request's send
    generated_text: str = ""
    error: str = ""


# --- prompts -----------------------------------------------------------------

class LocalTokenizer:
    """Token ids <-> text with a tokenizer.json (Hugging Face tokenizers)."""

    def __init__(self, path):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            sys.exit("llm_serving_bench: --tokenizer needs the tokenizers package (pip install tokenizers)")
        file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        if not os.path.isfile(file):
            sys.exit(f"llm_serving_bench: --tokenizer {path}: no tokenizer.json there")
        self.tok = Tokenizer.from_file(file)
        special = {i for i, t in self.tok.get_added_tokens_decoder().items() if t.special}
        self.ids = np.array([i for i in range(self.tok.get_vocab_size()) if i not in special])

    async def vocab(self):
        return self.ids

    async def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    async def decode(self, ids):
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=False)


class ServerTokenizer:
    """Token ids <-> text through the server's /tokenize and /detokenize."""

    def __init__(self, session, base_url, model, vocab_size):
        self.session, self.base, self.model, self.vocab_size = session, base_url.rstrip("/"), model, vocab_size
        self.special = 0

    async def _post(self, path, body):
        body = dict(body, model=self.model) if self.model else body
        async with self.session.post(self.base + path, json=body) as r:
            text = await r.text()
            if r.status != 200:
                raise RuntimeError(f"POST {path} answered HTTP {r.status}: {text[:200]}")
            return json.loads(text)

    async def _valid(self, i):
        try:
            await self._post("/detokenize", {"tokens": [int(i)]})
            return True
        except RuntimeError:
            return False

    async def vocab(self):
        # Tokens the server adds to any text (a BOS) when it ignores add_special_tokens=false.
        self.special = len(await self._raw_encode(""))
        n = self.vocab_size
        if n is None:  # the largest id /detokenize accepts, by bisection
            if not await self._valid(0):
                raise RuntimeError("/detokenize refuses token 0: give --vocab-size or --tokenizer")
            lo, hi = 0, 1
            while await self._valid(hi):
                lo, hi = hi, hi * 2
                if hi > 1 << 24:
                    raise RuntimeError("/detokenize accepts every id up to 2^24: give --vocab-size")
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if await self._valid(mid) else (lo, mid)
            n = lo + 1
        return np.arange(n)

    async def _raw_encode(self, text):
        return (await self._post("/tokenize", {"prompt": text, "add_special_tokens": False}))["tokens"]

    async def encode(self, text):
        return (await self._raw_encode(text))[self.special:]

    async def decode(self, ids):
        return (await self._post("/detokenize", {"tokens": [int(i) for i in ids]}))["prompt"]


async def make_prompt(tok, vocab, rng, n, rounds=10):
    """Text of n tokens from random ids: decode, re-encode, trim or extend, until it holds.

    Byte tokens that do not make a whole character decode to U+FFFD, which
    encodes as three tokens and keeps coming back: those are dropped. A cut
    can decode to text that encodes longer (a merge across the cut), so a
    too-long text is also tried cut a few tokens shorter. After `rounds` the
    closest text is returned with its true length."""
    ids = list(rng.choice(vocab, size=n))
    best = None
    for _ in range(rounds):
        text = (await tok.decode(ids)).replace("\ufffd", "")
        got = await tok.encode(text)
        if best is None or abs(len(got) - n) < abs(best[1] - n):
            best = (text, len(got))
        if len(got) == n:
            return best
        if len(got) > n:
            for m in range(n - 1, max(0, n - 4), -1):
                cut = (await tok.decode(got[:m])).replace("\ufffd", "")
                if len(await tok.encode(cut)) == n:
                    return cut, n
            ids = got[:n]
        else:
            ids = got + list(rng.choice(vocab, size=n - len(got)))
    return best


async def make_prompts(tok, args, rng):
    """(text, its length in tokens, output length) per request. Each prompt has its own random
    stream (seeded by --seed and its index), so they are made concurrently and still repeat."""
    vocab = await tok.vocab()
    r = args.random_range_ratio
    in_lens = rng.integers(int(args.random_input_len * (1 - r)), int(args.random_input_len * (1 + r)) + 1,
                           size=args.num_prompts)
    out_lens = rng.integers(int(args.random_output_len * (1 - r)), int(args.random_output_len * (1 + r)) + 1,
                            size=args.num_prompts)
    sem = asyncio.Semaphore(16)  # requests to the server's tokenizer in flight

    async def one(i):
        async with sem:
            text, got = await make_prompt(tok, vocab, np.random.default_rng([args.seed, i]), max(1, int(in_lens[i])))
        return text, got, max(1, int(out_lens[i]))
    return await asyncio.gather(*(one(i) for i in range(args.num_prompts)))


# --- requests ----------------------------------------------------------------

def payload(args, prompt, max_tokens):
    body = {"model": args.model, "max_tokens": max_tokens, "temperature": 0.0, "stream": True,
            "stream_options": {"include_usage": True}, "ignore_eos": True}
    if args.endpoint.endswith("chat/completions"):
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


async def send(session, url, body, chat, res, t_start):
    """One streamed request; fills res (timings, output, or the reason it failed)."""
    st = time.perf_counter()
    res.start = st - t_start
    last, chunks, usage, done = st, 0, None, None  # done: when [DONE] came
    text = []
    try:
        async with session.post(url, json=body) as resp:
            if resp.status != 200:
                res.error = f"HTTP {resp.status}: {(await resp.text())[:200]}"
                return res
            async for raw in resp.content:
                line = raw.strip()
                if not line.startswith(b"data:"):
                    continue  # blank separators, comments, event:/id: fields
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = time.perf_counter()
                    break
                event = json.loads(data)
                if not isinstance(event, dict):
                    raise ValueError(f"event is not a JSON object: {data[:100]!r}")
                if event.get("error"):
                    res.error = f"error event: {json.dumps(event['error'])[:200]}"
                    return res
                if event.get("usage"):
                    usage = event["usage"].get("completion_tokens")
                for choice in event.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
                    if piece:
                        now = time.perf_counter()
                        if chunks == 0:
                            res.ttft = now - st
                        else:
                            res.itl.append(now - last)
                        last, chunks = now, chunks + 1
                        text.append(piece)
        if done is None:
            res.error = "the stream ended before data: [DONE]"
            return res
        if chunks == 0:
            res.error = "the stream carried no tokens"
            return res
        res.latency = done - st
        res.output_tokens = int(usage) if usage is not None else chunks
        res.generated_text = "".join(text)
        res.success = True
    except asyncio.TimeoutError:
        res.error = "timed out"
    except (aiohttp.ClientError, OSError) as e:
        res.error = f"{type(e).__name__}: {e}"
    except (ValueError, UnicodeDecodeError) as e:  # json.JSONDecodeError is a ValueError
        res.error = f"bad stream event: {e}"
    return res


def intervals(n, rate, burstiness, rng):
    """Gaps before each request after the first: 0 for rate inf, else gamma (Poisson for burstiness 1)."""
    if rate == float("inf"):
        return np.zeros(n)
    return rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)


async def benchmark(session, args, prompts, rng):
    url = args.base_url.rstrip("/") + args.endpoint
    chat = args.endpoint.endswith("chat/completions")
    sem = asyncio.Semaphore(args.max_concurrency) if args.max_concurrency else None
    gaps = intervals(len(prompts), args.request_rate, args.burstiness, rng)
    results = [Result(prompt_len=n, expected_output_len=m) for _, n, m in prompts]

    async def one(i):
        body = payload(args, prompts[i][0], prompts[i][2])
        if sem is None:
            return await send(session, url, body, chat, results[i], t_start)
        async with sem:
            return await send(session, url, body, chat, results[i], t_start)

    t_start = time.perf_counter()
    tasks = []
    for i in range(len(prompts)):
        if i > 0 and gaps[i] > 0:
            await asyncio.sleep(gaps[i])
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    return results, time.perf_counter() - t_start


# --- metrics -----------------------------------------------------------------

def stats(values_s, percentiles):
    v = np.asarray(values_s, dtype=np.float64) * 1000.0
    if v.size == 0:
        return {"mean": 0.0, "median": 0.0, "std": 0.0, **{f"p{p:g}": 0.0 for p in percentiles}}
    return {"mean": float(v.mean()), "median": float(np.median(v)), "std": float(v.std()),
            **{f"p{p:g}": float(np.percentile(v, p)) for p in percentiles}}


def metrics(results, duration, percentiles):
    ok = [r for r in results if r.success]
    out_tokens = sum(r.output_tokens for r in ok)
    in_tokens = sum(r.prompt_len for r in ok)
    m = {"duration": duration, "completed": len(ok), "failed": len(results) - len(ok),
         "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
         "request_throughput": len(ok) / duration if duration > 0 else 0.0,
         "output_throughput": out_tokens / duration if duration > 0 else 0.0,
         "total_token_throughput": (in_tokens + out_tokens) / duration if duration > 0 else 0.0}
    series = {"ttft": [r.ttft for r in ok],
              "tpot": [(r.latency - r.ttft) / (r.output_tokens - 1) for r in ok if r.output_tokens > 1],
              "itl": [g for r in ok for g in r.itl],
              "e2el": [r.latency for r in ok]}
    for name, values in series.items():
        for k, v in stats(values, percentiles).items():
            m[f"{k}_{name}_ms"] = v
    return m


def print_table(m, args, percentiles):
    w = 50
    print("{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=w, c="="))
    rows = [("Successful requests:", m["completed"]), ("Failed requests:", m["failed"]),
            ("Request rate (req/s):", args.request_rate),
            ("Maximum request concurrency:", args.max_concurrency or "none"),
            ("Benchmark duration (s):", f"{m['duration']:.2f}"),
            ("Total input tokens:", m["total_input_tokens"]),
            ("Total generated tokens:", m["total_output_tokens"]),
            ("Request throughput (req/s):", f"{m['request_throughput']:.2f}"),
            ("Output token throughput (tok/s):", f"{m['output_throughput']:.2f}"),
            ("Total token throughput (tok/s):", f"{m['total_token_throughput']:.2f}")]
    for k, v in rows:
        print(f"{k:<40}{v:<10}")
    titles = {"ttft": ("Time to First Token", "TTFT"), "tpot": ("Time per Output Token (excl. 1st token)", "TPOT"),
              "itl": ("Inter-token Latency", "ITL"), "e2el": ("End-to-end Latency", "E2EL")}
    for name, (title, short) in titles.items():
        print("{s:{c}^{n}}".format(s=title, n=w, c="-"))
        for k in ["mean", "median"] + [f"p{p:g}" for p in percentiles]:
            label = {"mean": "Mean", "median": "Median"}.get(k, k.upper())
            print(f"{label + ' ' + short + ' (ms):':<40}{m[f'{k}_{name}_ms']:<10.2f}")
    print("=" * w)


# --- main --------------------------------------------------------------------

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server, e.g. http://127.0.0.1:8000")
    ap.add_argument("--endpoint", default="/v1/completions", choices=["/v1/completions", "/v1/chat/completions"])
    ap.add_argument("--model", help="the model name sent in requests (default: the first of GET /v1/models)")
    ap.add_argument("--tokenizer", help="a folder with tokenizer.json to make prompts locally "
                                        "(default: the server's /detokenize and /tokenize)")
    ap.add_argument("--vocab-size", type=int, help="token ids drawn below this, with the server's tokenizer "
                                                   "(default: found by asking /detokenize)")
    ap.add_argument("--num-prompts", type=int, default=100)
    ap.add_argument("--random-input-len", type=int, default=128)
    ap.add_argument("--random-output-len", type=int, default=64)
    ap.add_argument("--random-range-ratio", type=float, default=0.0,
                    help="lengths drawn uniformly in [len*(1-r), len*(1+r)]")
    ap.add_argument("--request-rate", type=float, default=float("inf"),
                    help="requests per second, a Poisson process (inf: all at once)")
    ap.add_argument("--burstiness", type=float, default=1.0,
                    help="shape of the gamma intervals (1: Poisson; lower: burstier)")
    ap.add_argument("--max-concurrency", type=int, help="at most this many requests in flight")
    ap.add_argument("--metric-percentiles", default="99", help="comma-separated, e.g. 50,90,99")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per request")
    ap.add_argument("--result-file", help="write the metrics, the settings and per-request figures as JSON")
    ap.add_argument("--quiet", action="store_true", help="no table")
    args = ap.parse_args(argv)
    for name in ("num_prompts", "random_input_len", "random_output_len"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 <= args.random_range_ratio < 1:
        ap.error("--random-range-ratio must be in [0, 1)")
    if not args.request_rate > 0:
        ap.error("--request-rate must be positive (inf for all at once)")
    if not args.burstiness > 0:
        ap.error("--burstiness must be positive")
    if args.max_concurrency is not None and args.max_concurrency < 1:
        ap.error("--max-concurrency must be at least 1")
    try:
        args.percentiles = [float(p) for p in args.metric_percentiles.split(",")]
        assert all(0 <= p <= 100 for p in args.percentiles)
    except (ValueError, AssertionError):
        ap.error(f"--metric-percentiles: {args.metric_percentiles!r} is not a list of numbers in [0, 100]")
    return args


async def first_model(session, base_url):
    async with session.get(base_url.rstrip("/") + "/v1/models") as r:
        data = json.loads(await r.text())
        if r.status != 200 or not data.get("data"):
            raise RuntimeError(f"GET /v1/models answered HTTP {r.status} without models: give --model")
        return data["data"][0]["id"]


async def amain(args):
    rng = np.random.default_rng(args.seed)
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    connector = aiohttp.TCPConnector(limit=0)  # no client-side cap: --max-concurrency is the only one
    async with aiohttp.ClientSession(timeout=timeout, connector=connector, read_bufsize=1 << 20) as session:
        try:
            if args.model is None:
                args.model = await first_model(session, args.base_url)
            tok = LocalTokenizer(args.tokenizer) if args.tokenizer else \
                ServerTokenizer(session, args.base_url, args.model, args.vocab_size)
            prompts = await make_prompts(tok, args, rng)
        except (aiohttp.ClientError, asyncio.TimeoutError, RuntimeError, ValueError, KeyError) as e:
            print(f"llm_serving_bench: preparing prompts failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
        results, duration = await benchmark(session, args, prompts, rng)
    m = metrics(results, duration, args.percentiles)
    if not args.quiet:
        print_table(m, args, args.percentiles)
        errors = sorted({r.error for r in results if not r.success})
        for e in errors[:5]:
            print(f"failed: {e}")
    if args.result_file:
        settings = {k: v for k, v in vars(args).items() if k != "percentiles"}
        settings["request_rate"] = "inf" if args.request_rate == float("inf") else args.request_rate
        out = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "settings": settings, **m,
               "input_lens": [r.prompt_len for r in results],
               "expected_output_lens": [r.expected_output_len for r in results],
               "output_lens": [r.output_tokens for r in results], "ttfts": [r.ttft for r in results],
               "latencies": [r.latency for r in results], "itls": [r.itl for r in results],
               "starts": [r.start for r in results], "successes": [r.success for r in results],
               "errors": [r.error for r in results], "generated_texts": [r.generated_text for r in results]}
        with open(args.result_file, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if m["completed"] > 0 else 1


def main(argv=None):
    return asyncio.run(amain(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
