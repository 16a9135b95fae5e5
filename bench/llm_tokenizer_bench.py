"""Encode throughput of oc-tokenize against Hugging Face tokenizers (docs/llm.md).

Trains GPT-2-, Llama 3- and Llama 2-style tokenizers on the standard library
(as tests/python/test_llm_tokenizer.py does), then encodes about 4 MB of the
standard library's paragraphs with each: oc-tokenize (one thread; its load and
an empty run subtracted), tokenizers' encode() in a loop and encode_batch()
(all cores). Checks the ids agree. Usage: python3 bench/llm_tokenizer_bench.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import llm_tokenizer_cases as cases  # noqa: E402
import tokenizers  # noqa: E402

TOOL = os.path.join(os.environ.get("OC_BUILD_DIR", os.path.join(ROOT, "build")), "oc-tokenize")


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    train = cases.stdlib_files(limit_bytes=1_500_000)
    texts = [p for f in cases.stdlib_files(limit_bytes=6_000_000) for p in f.split("\n\n") if p]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    stdin = "".join(json.dumps(t) + "\n" for t in texts).encode()
    print(f"{mb:.1f} MB in {len(texts)} paragraphs, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in [("gpt2", cases.gpt2), ("llama3", cases.llama3), ("llama2", cases.llama2)]:
            d = os.path.join(tmp, name)
            os.makedirs(d)
            with open(os.path.join(d, "tokenizer.json"), "w") as f:
                json.dump(make(train), f)
            hf = tokenizers.Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
            run = lambda data: subprocess.run([TOOL, "--tokenizer", d, "encode"], input=data, capture_output=True,
                                              check=True)
            t_oc, r = timed(lambda: run(stdin))
            t_empty, _ = timed(lambda: run(b""))
            t_loop, want = timed(lambda: [hf.encode(t).ids for t in texts])
            t_batch, _ = timed(lambda: hf.encode_batch(texts))
            got = [json.loads(line) for line in r.stdout.decode().split("\n")[:-1]]
            assert got == want, f"{name}: ids differ"
            print(f"{name:7s} oc-tokenize {mb / (t_oc - t_empty):6.2f} MB/s   tokenizers encode {mb / t_loop:6.2f} MB/s"
                  f"   encode_batch {mb / t_batch:6.2f} MB/s")


if __name__ == "__main__":
    main()
