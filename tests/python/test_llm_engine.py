"""The LLM engine of src/llm/engine/ (through build/oc-llm-batch): continuous
batching, chunked prefill, preemption, prefix caching, n > 1 and sampling,
against independent references: transformers' greedy generate for the tokens
and log probabilities, each request's solo run for batching invariance, the
same requests with prefix caching off, a Python model of the prefix cache for
the hit counts, separate n = 1 requests for the choices of n > 1, and a numpy
implementation of the documented sampling rules (docs/llm.md, "Engine") for
the distributions.
"""
import json
import os
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from oc_harness import BUILD_DIR  # noqa: E402
from test_llm_model import VOCAB, build, reference  # noqa: E402

TOOL = os.path.join(BUILD_DIR, "oc-llm-batch")

@pytest.fixture(autouse=True, scope="module")
def _tool_built():
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build the project (make build)")

# Eight prompts of 1..23 tokens arriving at steps 0..9.
PROMPTS = [[(i * 37 + 11 * r + 5) % VOCAB for i in range(n)] for r, n in enumerate([5, 23, 1, 12, 8, 17, 3, 20])]
ARRIVALS = [0, 0, 1, 2, 2, 5, 7, 9]
NEW = 12


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    m = build("llama")
    d = tmp_path_factory.mktemp("llama")
    m.save_pretrained(d, safe_serialization=True)
    return m, d


def run(d, requests, tmp, *args, check=True):
    f = tmp / "requests.json"
    f.write_text(json.dumps(requests))
    proc = subprocess.run([TOOL, "--model", str(d), "--requests", str(f), "--threads", "2", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    if not check:
        return proc
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines()], json.loads(proc.stderr.splitlines()[-1])


def greedy_requests(**extra):
    return [dict(prompt_ids=p, arrival_step=a, temperature=0, max_tokens=NEW, ignore_eos=True, **extra)
            for p, a in zip(PROMPTS, ARRIVALS)]


@pytest.fixture(scope="module")
def solo(llama, tmp_path_factory):
    """Each request alone (--max-num-seqs 1) and transformers' greedy reference."""
    model, d = llama
    out, _ = run(d, greedy_requests(logprobs=2), tmp_path_factory.mktemp("solo"), "--max-num-seqs", 1)
    refs = [reference(model, p, NEW) for p in PROMPTS]
    return out, refs


def test_greedy_batch_matches_solo_runs_and_transformers(llama, solo, tmp_path):
    _, d = llama
    solo_out, refs = solo
    out, stats = run(d, greedy_requests(logprobs=2), tmp_path)
    for i, (o, s, (ref_ids, ref_logits)) in enumerate(zip(out, solo_out, refs)):
        assert s["output_ids"] == ref_ids, f"request {i}"
        assert o["output_ids"] == ref_ids, f"request {i}"
        assert o["finish_reason"] == "length"
        # logprobs: log_softmax of the model's raw logits.
        ref_lp = torch.log_softmax(torch.tensor(ref_logits), -1).numpy()
        np.testing.assert_allclose(o["logprobs"], ref_lp[np.arange(NEW), ref_ids], atol=1e-4)
        top = [[t for t, _ in step] for step in o["top_logprobs"]]
        assert [t[0] for t in top] == ref_ids  # greedy: the chosen token is the most likely
        assert all(len(t) == 2 for t in top)
    assert stats["kv_blocks_used"] == 0  # every block back in the pool
    assert stats["running"] == 0 and stats["waiting"] == 0
    assert stats["max_concurrency"] == stats["kv_blocks_total"] // (stats["max_model_len"] // stats["block_size"])


def test_tiny_kv_budget_preempts_and_gives_the_same_tokens(llama, solo, tmp_path):
    _, d = llama
    solo_out, _ = solo
    # block 4 of a 2-layer, 2-KV-head, head_dim 16 cache: 2 * 2 * 2 * 4 * 16 * 4 = 2048 bytes; 17 blocks.
    out, stats = run(d, greedy_requests(logprobs=2), tmp_path, "--block-size", 4, "--max-model-len", 64,
                     "--kv-cache-bytes", 17 * 2048 + 100)
    assert stats["kv_blocks_total"] == 17 and stats["max_concurrency"] == 1
    assert stats["preemptions"] > 0, stats
    assert stats["kv_blocks_used"] == 0
    for i, (o, s) in enumerate(zip(out, solo_out)):
        assert o["output_ids"] == s["output_ids"], f"request {i}"
        np.testing.assert_allclose(o["logprobs"], s["logprobs"], atol=1e-5)


@pytest.mark.parametrize("budget", [1, 5])
def test_chunked_prefill_gives_the_same_tokens(budget, llama, solo, tmp_path):
    _, d = llama
    solo_out, _ = solo
    out, stats = run(d, greedy_requests(), tmp_path, "--max-num-batched-tokens", budget, "--block-size", 5)
    assert [o["output_ids"] for o in out] == [s["output_ids"] for s in solo_out]
    # 23 prompt tokens need at least 23 / budget steps before their first token.
    assert stats["steps"] >= 23 // budget + NEW - 1


def sampled_requests():
    kinds = [dict(temperature=0.9, top_p=0.9), dict(temperature=1.3, top_k=20), dict(temperature=0.7, min_p=0.05),
             dict(temperature=1.0, repetition_penalty=1.3, presence_penalty=0.5, frequency_penalty=0.4)]
    return [dict(prompt_ids=p, arrival_step=a, max_tokens=NEW, ignore_eos=True, seed=100 + i, **kinds[i % 4])
            for i, (p, a) in enumerate(zip(PROMPTS, ARRIVALS))]


def test_seeded_sampling_is_the_same_solo_batched_and_preempted(llama, tmp_path):
    _, d = llama
    reqs = sampled_requests()
    batched, _ = run(d, reqs, tmp_path)
    alone, _ = run(d, reqs, tmp_path, "--max-num-seqs", 1)
    squeezed, stats = run(d, reqs, tmp_path, "--block-size", 4, "--max-model-len", 64, "--kv-cache-bytes", 17 * 2048,
                          "--max-num-batched-tokens", 7)
    assert stats["preemptions"] > 0
    ids = [o["output_ids"] for o in batched]
    assert ids == [o["output_ids"] for o in alone] == [o["output_ids"] for o in squeezed]
    # Other seeds give other tokens (the seed is used).
    other, _ = run(d, [dict(r, seed=r["seed"] + 1000) for r in reqs], tmp_path)
    assert [o["output_ids"] for o in other] != ids


def test_top_k_1_is_greedy(llama, solo, tmp_path):
    _, d = llama
    solo_out, _ = solo
    reqs = [dict(r, temperature=1.5, top_k=1, seed=7) for r in greedy_requests()]
    out, _ = run(d, reqs, tmp_path)
    assert [o["output_ids"] for o in out] == [s["output_ids"] for s in solo_out]


# ---- Prefix caching -----------------------------------------------------------------

SYSTEM = [(i * 53 + 7) % VOCAB for i in range(37)]  # a 37-token prefix shared by most requests
SHARED = [SYSTEM + [(r * 29 + 3 * i + 1) % VOCAB for i in range(n)] for r, n in enumerate([0, 5, 9, 3, 5, 1, 7, 2])]
SHARED[4] = list(SHARED[1])           # the same prompt twice
SHARED[7] = SYSTEM[:20] + [9, 9, 9]   # diverges inside the prefix's sixth block
SHARED_ARRIVALS = [0, 0, 1, 3, 3, 6, 8, 12]


def shared_requests(prompts=SHARED, arrivals=SHARED_ARRIVALS):
    return [dict(prompt_ids=p, arrival_step=a, temperature=0, max_tokens=NEW, ignore_eos=True, logprobs=1)
            for p, a in zip(prompts, arrivals)]


@pytest.fixture(scope="module")
def shared_refs(llama):
    model, _ = llama
    return [reference(model, p, NEW)[0] for p in SHARED]


def test_prefix_caching_gives_the_tokens_of_no_caching_and_transformers(llama, shared_refs, tmp_path):
    _, d = llama
    off, st_off = run(d, shared_requests(), tmp_path, "--no-enable-prefix-caching", "--block-size", 4)
    on, st_on = run(d, shared_requests(), tmp_path, "--enable-prefix-caching", "--block-size", 4)
    default, st_default = run(d, shared_requests(), tmp_path, "--block-size", 4)
    # Under a 17-block budget with chunked prefill: preempts, and evicts cached blocks.
    tight, st_tight = run(d, shared_requests(), tmp_path, "--block-size", 4, "--max-model-len", 64,
                          "--kv-cache-bytes", 17 * 2048, "--max-num-batched-tokens", 9)
    for i, ref in enumerate(shared_refs):
        assert off[i]["output_ids"] == ref, f"request {i}"
        for got in (on, default, tight):
            assert got[i]["output_ids"] == ref, f"request {i}"
            np.testing.assert_allclose(got[i]["logprobs"], off[i]["logprobs"], atol=1e-5)
    assert st_off["prefix_cache_queries"] == 0 and st_off["prefix_cache_hits"] == 0
    assert st_off["kv_blocks_evictable"] == 0
    assert st_on == st_default and st_on["prefix_caching"] is True
    assert st_on["prefix_cache_hits"] > 0 and st_tight["prefix_cache_hits"] > 0
    assert st_tight["preemptions"] > 0 and st_tight["prefix_cache_evictions"] > 0, st_tight
    for st in (st_off, st_on, st_tight):
        assert st["kv_blocks_used"] == 0 and st["running"] == 0 and st["waiting"] == 0
    assert st_on["kv_blocks_evictable"] > 0  # the cached blocks outlive the requests, not counted as used


def expected_hits(prompts, outputs, bs):
    """The prefix cache's hits (in tokens) when each request runs after the previous one finished: the
    full blocks of every earlier request's computed tokens (prompt and output but the last token) are
    cached; a prompt reuses its longest run of leading full blocks among them, at most (len - 1) // bs."""
    cached, hits = set(), []
    for p, out in zip(prompts, outputs):
        k = 0
        while k < (len(p) - 1) // bs and tuple(p[:(k + 1) * bs]) in cached:
            k += 1
        hits.append(k * bs)
        seq = p + out[:-1]
        cached |= {tuple(seq[:j * bs]) for j in range(1, len(seq) // bs + 1)}
    return hits


@pytest.mark.parametrize("bs", [4, 16])
def test_prefix_cache_hits_count_the_reused_tokens(bs, llama, shared_refs, tmp_path):
    _, d = llama
    # A prompt that continues request 1 with its first 6 generated tokens: the
    # cached blocks holding generated tokens are found too.
    prompts = SHARED + [SHARED[1] + shared_refs[1][:6] + [5]]
    # Each request arrives after the previous one finished (NEW steps each).
    reqs = shared_requests(prompts, [k * (NEW + 1) for k in range(len(prompts))])
    out, st = run(d, reqs, tmp_path, "--block-size", bs)
    outputs = [o["output_ids"] for o in out]
    assert outputs[:len(SHARED)] == shared_refs
    hits = expected_hits(prompts, outputs, bs)
    assert st["prefix_cache_queries"] == sum(len(p) for p in prompts)
    assert st["prefix_cache_hits"] == sum(hits), hits
    assert hits[-1] > len(SHARED[1]) // bs * bs or bs == 16  # with blocks of 4: blocks of generated tokens
    assert hits[4] == (len(SHARED[4]) - 1) // bs * bs  # the repeated prompt: all but the last token's block
    assert st["kv_blocks_used"] == 0


# ---- n > 1 --------------------------------------------------------------------------

def test_n_choices_are_reproducible_and_equal_their_derived_seeds_run_alone(llama, tmp_path):
    _, d = llama
    kinds = [dict(temperature=1.0), dict(temperature=0.9, top_p=0.9), dict(temperature=1.3, top_k=20),
             dict(temperature=1.0, repetition_penalty=1.3, presence_penalty=0.5)]
    reqs = [dict(prompt_ids=p, arrival_step=a, max_tokens=NEW, ignore_eos=True, seed=300 + 10 * i, n=4,
                 logprobs=1, **kinds[i]) for i, (p, a) in enumerate(zip(PROMPTS[:4], ARRIVALS[:4]))]
    out, st = run(d, reqs, tmp_path)
    again, _ = run(d, reqs, tmp_path)
    assert [(o["id"], o["index"]) for o in out] == [(str(i), c) for i in range(4) for c in range(4)]
    assert [o["output_ids"] for o in out] == [o["output_ids"] for o in again]
    assert st["cow_copies"] > 0 and st["kv_blocks_used"] == 0
    # Choice c of a request seeded s is the n = 1 request seeded s + c.
    singles = [dict(r, n=1, seed=r["seed"] + c, id=f"{i}.{c}") for i, r in enumerate(reqs) for c in range(4)]
    alone, _ = run(d, singles, tmp_path, "--no-enable-prefix-caching")
    squeezed, st_sq = run(d, reqs, tmp_path, "--block-size", 4, "--max-model-len", 64, "--kv-cache-bytes", 17 * 2048,
                          "--max-num-batched-tokens", 7)
    assert st_sq["preemptions"] > 0
    for o, a, q in zip(out, alone, squeezed):
        assert o["output_ids"] == a["output_ids"] == q["output_ids"], (o["id"], o["index"])
        np.testing.assert_allclose(o["logprobs"], a["logprobs"], atol=1e-5)
        np.testing.assert_allclose(q["logprobs"], a["logprobs"], atol=1e-5)
    for i in range(4):  # the choices of one request differ
        assert len({tuple(o["output_ids"]) for o in out[4 * i:4 * i + 4]}) > 1
    # Choice 0 is the n = 1 request with the same seed.
    first = [dict(r, n=1) for r in reqs]
    one, _ = run(d, first, tmp_path)
    assert [o["output_ids"] for o in one] == [o["output_ids"] for o in out[::4]]


def test_greedy_n_2_gives_two_identical_choices(llama, solo, tmp_path):
    _, d = llama
    solo_out, refs = solo
    out, st = run(d, greedy_requests(n=2), tmp_path, "--block-size", 4)
    assert len(out) == 2 * len(PROMPTS)
    for i, (ref_ids, _) in enumerate(refs):
        assert out[2 * i]["output_ids"] == out[2 * i + 1]["output_ids"] == ref_ids, f"request {i}"
        assert [out[2 * i]["index"], out[2 * i + 1]["index"]] == [0, 1]
    assert st["cow_copies"] > 0 and st["kv_blocks_used"] == 0


# ---- The sampling rules against numpy ------------------------------------------------

def numpy_rules(logits, p, prompt, output, eos):
    """The rules of sampling.h, written from the documentation."""
    x = np.array(logits, dtype=np.float32)
    if len(output) < p.get("min_tokens", 0):
        x[list(eos) + p.get("stop_token_ids", [])] = -np.inf
    for t, b in p.get("logit_bias", {}).items():
        x[int(t)] += np.float32(b)
    r = p.get("repetition_penalty", 1.0)
    if r != 1.0:
        seen = sorted(set(prompt) | set(output))
        x[seen] = np.where(x[seen] > 0, x[seen] / np.float32(r), x[seen] * np.float32(r))
    counts = np.bincount(np.array(output, dtype=np.int64), minlength=len(x))
    x = x - (p.get("frequency_penalty", 0.0) * counts + p.get("presence_penalty", 0.0) * (counts > 0)).astype(np.float32)
    x = x.astype(np.float64)
    t = p.get("temperature", 1.0)
    if t == 0:
        q = np.zeros(len(x))
        q[np.argmax(x)] = 1
        return q
    q = np.exp((x - x.max()) / t)
    q /= q.sum()
    if p.get("min_p", 0) > 0:
        q[q < p["min_p"] * q.max()] = 0
        q /= q.sum()
    k = p.get("top_k", 0)
    if 0 < k < len(q):
        q[q < np.sort(q)[::-1][k - 1]] = 0
        q /= q.sum()
    if p.get("top_p", 1.0) < 1:
        order = np.argsort(-q, kind="stable")
        before = np.concatenate([[0], np.cumsum(q[order])[:-1]])
        q[order[before >= p["top_p"]]] = 0
        q /= q.sum()
    return q


def probe(tmp_path, logits, params, prompt=(), output=(), eos=(), draws=0):
    f = tmp_path / "probe.json"
    f.write_text(json.dumps(dict(logits=[float(v) for v in logits], params=params, prompt_ids=list(prompt),
                                 output_ids=list(output), eos=list(eos), draws=draws)))
    proc = subprocess.run([TOOL, "--sampling-probe", str(f)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    j = json.loads(proc.stdout)
    return np.array(j["probs"]), np.array(j["counts"])


RULES = [
    dict(temperature=1.0),
    dict(temperature=0.5),
    dict(temperature=2.0, top_k=5),
    dict(temperature=1.0, top_p=0.7),
    dict(temperature=0.8, min_p=0.1),
    dict(temperature=1.2, top_k=10, top_p=0.8, min_p=0.02),
    dict(temperature=1.0, repetition_penalty=1.5),
    dict(temperature=1.0, repetition_penalty=0.7, presence_penalty=1.0, frequency_penalty=0.5),
    dict(temperature=1.0, presence_penalty=-1.5, frequency_penalty=-0.5, logit_bias={"3": 4.0, "7": -100.0}),
    dict(temperature=1.0, min_tokens=5, stop_token_ids=[4]),
    dict(temperature=0),
    dict(temperature=0, logit_bias={"11": 50.0}),
]


@pytest.mark.parametrize("params", RULES, ids=[json.dumps(r) for r in RULES])
def test_filtered_probabilities_match_numpy(params, tmp_path):
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal(40) * 2).astype(np.float32)
    prompt, output, eos = [1, 3, 3, 9, 20], [9, 9, 4, 12, 3, 30], [2]
    for out in (output, output[:2]):  # past min_tokens and before it
        got, _ = probe(tmp_path, logits, params, prompt, out, eos)
        ref = numpy_rules(logits, params, prompt, out, eos)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("params", [dict(temperature=1.0), dict(temperature=0.7, top_p=0.85, top_k=12),
                                    dict(temperature=1.5, min_p=0.05)])
def test_empirical_frequencies_follow_the_distribution(params, tmp_path):
    rng = np.random.default_rng(9)
    logits = rng.standard_normal(30).astype(np.float32)
    n = 40000
    probs, counts = probe(tmp_path, logits, dict(params, seed=1), draws=n)
    assert counts.sum() == n
    assert np.all(counts[probs == 0] == 0)  # filtered tokens are never drawn
    # Each count within 5 standard deviations of n p (binomial).
    sd = np.sqrt(n * probs * (1 - probs))
    assert np.all(np.abs(counts - n * probs) <= 5 * sd + 1), (counts, n * probs)
    # and the chi-square statistic within a loose bound (df = kept tokens - 1).
    keep = probs > 0
    chi2 = ((counts[keep] - n * probs[keep]) ** 2 / (n * probs[keep])).sum()
    df = keep.sum() - 1
    assert chi2 < df + 6 * np.sqrt(2 * df) + 10, chi2


# ---- Stopping -----------------------------------------------------------------------

def test_max_tokens_min_tokens_eos_stop_ids_and_ignore_eos(llama, solo, tmp_path):
    _, d = llama
    solo_out, _ = solo
    eos = 2  # LlamaConfig's eos_token_id
    p = PROMPTS[0]
    reqs = [
        dict(prompt_ids=p, temperature=0, max_tokens=3, ignore_eos=True),
        dict(prompt_ids=p, temperature=0, max_tokens=8, logit_bias={str(eos): 100.0}),  # eos at once
        dict(prompt_ids=p, temperature=0, max_tokens=8, min_tokens=3, logit_bias={str(eos): 100.0}),
        dict(prompt_ids=p, temperature=0, max_tokens=5, ignore_eos=True, logit_bias={str(eos): 100.0}),
        dict(prompt_ids=p, temperature=0, max_tokens=NEW, ignore_eos=True, stop_token_ids=[solo_out[0]["output_ids"][4]]),
    ]
    out, stats = run(d, reqs, tmp_path)
    greedy = solo_out[0]["output_ids"]
    assert out[0]["output_ids"] == greedy[:3] and out[0]["finish_reason"] == "length"
    assert out[1]["output_ids"] == [eos] and out[1]["finish_reason"] == "stop"
    assert len(out[2]["output_ids"]) == 4 and out[2]["output_ids"][-1] == eos and eos not in out[2]["output_ids"][:3]
    assert out[2]["finish_reason"] == "stop"
    assert out[3]["output_ids"] == [eos] * 5 and out[3]["finish_reason"] == "length"
    first = greedy.index(greedy[4])
    assert out[4]["output_ids"] == greedy[:first + 1] and out[4]["finish_reason"] == "stop"
    assert stats["kv_blocks_used"] == 0


# ---- Refusals -----------------------------------------------------------------------

@pytest.mark.parametrize("edit,message", [
    (dict(prompt_ids=list(range(250)), max_tokens=10), "prompt of 250 tokens + max_tokens 10 is longer than max_model_len 256"),
    (dict(top_p=0.0), "top_p 0 is outside (0, 1]"),
    (dict(top_p=1.5), "top_p 1.5 is outside (0, 1]"),
    (dict(max_tokens=-1), "max_tokens -1 is invalid (expected at least 1)"),
    (dict(prompt_ids=[1, 600]), "prompt token 1 is 600, expected 0..511"),
    (dict(stop_token_ids=[512]), "stop_token_ids holds 512, expected 0..511"),
    (dict(logit_bias={"-3": 1.0}), "logit_bias names token -3, expected 0..511"),
    (dict(min_tokens=20, max_tokens=4), "min_tokens 20 is invalid (expected 0..max_tokens 4)"),
    (dict(temperature=-1), "temperature -1 is invalid"),
    (dict(n=0), "n 0 is invalid (expected 1..128)"),
    (dict(n=129), "n 129 is invalid (expected 1..128)"),
    (dict(top_k=-5), "top_k -5 is invalid"),
    (dict(prompt_ids=[]), "the prompt is empty"),
    (dict(best_of=2), 'unknown field "best_of"'),
    (dict(logit_bias={"abc": 1.0}), "logit_bias must map token ids to numbers"),
    (dict(seed=-4), "seed must be a non-negative integer"),
    (dict(id=5), "id must be a string"),
])
def test_bad_requests_are_refused(edit, message, llama, tmp_path):
    _, d = llama
    req = dict(prompt_ids=[1, 2, 3], max_tokens=4)
    req.update(edit)
    proc = run(d, [req], tmp_path, check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    assert message in proc.stderr, proc.stderr


def test_duplicate_ids_and_bad_probe_input_are_refused(llama, tmp_path):
    _, d = llama
    proc = run(d, [dict(prompt_ids=[1], id="x"), dict(prompt_ids=[2], id="x")], tmp_path, check=False)
    assert proc.returncode != 0 and 'id "x" is used twice' in proc.stderr, proc.stderr
    f = tmp_path / "p.json"
    f.write_text(json.dumps(dict(logits=[1.0, "a"])))
    proc = subprocess.run([TOOL, "--sampling-probe", str(f)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "logits must be numbers" in proc.stderr


def test_kv_budget_too_small_for_one_sequence_is_refused(llama, tmp_path):
    _, d = llama
    proc = run(d, [dict(prompt_ids=[1])], tmp_path, "--kv-cache-bytes", 10000, check=False)
    assert proc.returncode != 0
    assert "kv_cache_bytes 10000 holds 1 blocks of 8192 bytes, but one sequence of max_model_len 256 needs 16" in proc.stderr


@pytest.mark.parametrize("kind", ["gpt2", "mistral"])
def test_other_architectures_batched_preempted_and_chunked(kind, tmp_path):
    # gpt2 (learned positions) and mistral (a 16-token window, GQA 4/1) through the same paths.
    model = build(kind)
    d = tmp_path / kind
    model.save_pretrained(d, safe_serialization=True)
    cfg = model.config
    kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    block_bytes = 2 * cfg.num_hidden_layers * kv_heads * 4 * head_dim * 4
    reqs = greedy_requests()
    out, stats = run(d, reqs, tmp_path, "--block-size", 4, "--max-model-len", 64, "--kv-cache-bytes",
                     17 * block_bytes, "--max-num-batched-tokens", 6)
    assert stats["preemptions"] > 0 and stats["kv_blocks_used"] == 0
    for i, p in enumerate(PROMPTS):
        assert out[i]["output_ids"] == reference(model, p, NEW)[0], f"request {i}"
