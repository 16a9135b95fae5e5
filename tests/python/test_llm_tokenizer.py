"""oc-tokenize (src/llm/tokenizer) against Hugging Face `tokenizers`, id for id.

Tokenizers shaped like GPT-2, Llama 3, Qwen2, Llama 2 / TinyLlama and Mistral
are trained here on the Python standard library's sources (nothing is
downloaded, see llm_tokenizer_cases.py); thousands of real texts are encoded
by both, with and without special tokens, and the ids decoded by both, with
and without skip_special_tokens. Also: the added-token flags and the errors.
"""
import json
import os
import subprocess

import pytest

tokenizers = pytest.importorskip("tokenizers")
import llm_tokenizer_cases as cases  # noqa: E402

BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
TOOL = os.path.join(BUILD, "oc-tokenize")


def oc_tokenize(path, command, lines, *flags, check=True):
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    r = subprocess.run([TOOL, "--tokenizer", str(path), command, *flags], input=stdin.encode(),
                       capture_output=True, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr.decode()
        return [json.loads(line) for line in r.stdout.decode().split("\n")[:-1]]  # not splitlines: U+2028 is text
    return r


@pytest.fixture(scope="module")
def corpus():
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build the project (make build)")
    return cases.corpus_texts()


def write(tmp_path, name, spec, config=None):
    d = tmp_path / name
    d.mkdir()
    (d / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    if config is not None:
        (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return d


def first_difference(texts, got, want):
    for t, g, w in zip(texts, got, want):
        if g != w:
            return f"text {t!r}:\n  oc: {g}\n  hf: {w}"
    return None


def compare(path, texts):
    """Encodes and decodes texts with both; returns how many texts were compared."""
    hf = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    all_ids = []
    for special in (True, False):
        want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=special)]
        got = oc_tokenize(path, "encode", texts, *([] if special else ["--no-special"]))
        assert len(got) == len(texts)
        diff = first_difference(texts, got, want)
        assert diff is None, f"encode (add_special_tokens={special}) differs from Hugging Face, {diff}"
        all_ids += want
    for skip in (False, True):
        want = hf.decode_batch(all_ids, skip_special_tokens=skip)
        got = oc_tokenize(path, "decode", all_ids, *(["--skip-special"] if skip else []))
        diff = first_difference(all_ids, got, want)
        assert diff is None, f"decode (skip_special_tokens={skip}) differs from Hugging Face, {diff}"
    return len(texts)


CONFIGS = {
    "gpt2": lambda files: cases.gpt2(files),
    "llama3": lambda files: cases.llama3(files),
    "qwen2": lambda files: cases.qwen2(files),
    "llama2": lambda files: cases.llama2(files),
    "mistral_first": lambda files: cases.mistral(files),
    "mistral_always_split": lambda files: cases.mistral(files, "always", True, metaspace_decoder=True),
    "mistral_legacy": lambda files: cases.mistral_legacy(files),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_encode_and_decode_match_hugging_face(name, corpus, tmp_path):
    files, texts = corpus
    path = write(tmp_path, name, CONFIGS[name](files))
    assert compare(path, texts) > 3000


def test_added_token_flags_match_hugging_face(corpus, tmp_path):
    files, texts = corpus
    path = write(tmp_path, "flags", cases.with_flag_tokens(cases.gpt2(files)))
    compare(path, cases.FLAG_TEXTS + texts[:300])


def test_normalized_added_tokens_match_hugging_face(corpus, tmp_path):
    files, texts = corpus
    path = write(tmp_path, "normalized", cases.with_normalized_tokens(cases.llama2(files)))
    compare(path, cases.FLAG_TEXTS + texts[:300])


def test_broken_files_are_refused_or_work_never_crash(corpus, tmp_path):
    files, _ = corpus
    for base in (cases.gpt2(files[:3]), cases.llama2(files[:3])):
        for i, spec in enumerate(cases.mutations(base, 40)):
            path = tmp_path / f"m{i}.json"
            path.write_text(json.dumps(spec))
            for command, lines in (("encode", ["hello world", "", "<s> \u4f60 <|endoftext|>"]),
                                   ("decode", [[0, 1, 2], []])):
                r = oc_tokenize(path, command, lines, check=False)
                assert r.returncode in (0, 1), f"{command} exit {r.returncode} on {json.dumps(spec)[:300]}"
                assert r.returncode == 0 or r.stderr.startswith(b"oc-tokenize: "), r.stderr


def test_config_gives_bos_and_eos(corpus, tmp_path):
    files, _ = corpus
    spec = cases.llama2(files)
    path = write(tmp_path, "cfg", spec, {"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": True})
    info = oc_tokenize(path, "info", [])
    r = subprocess.run([TOOL, "--tokenizer", str(path), "info"], capture_output=True, timeout=60)
    info = json.loads(r.stdout)
    assert info == {"vocab_size": len(spec["model"]["vocab"]), "bos_id": 1, "eos_id": 2, "add_bos_token": True,
                    "add_eos_token": False}
    bad = write(tmp_path, "badcfg", spec, {"eos_token": "<nope>"})
    r = oc_tokenize(bad, "info", [], check=False)
    assert r.returncode == 1 and "eos_token" in r.stderr.decode() and "<nope>" in r.stderr.decode()


def expect_error(path, *needles, command="encode", lines=("x",)):
    r = oc_tokenize(path, command, list(lines), check=False)
    err = r.stderr.decode()
    assert r.returncode == 1, f"exit {r.returncode}, stderr {err!r}"
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"


def test_errors_name_the_file_and_the_field(corpus, tmp_path):
    files, _ = corpus
    spec = cases.gpt2(files[:3])
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text(json.dumps(spec)[:5000])
    expect_error(corrupt, "corrupt.json", "not valid JSON")
    expect_error(tmp_path / "absent", "absent", "no such file")
    for model_type in ("WordPiece", "Unigram", "WordLevel"):
        p = write(tmp_path, model_type, dict(spec, model={"type": model_type, "vocab": {}}))
        expect_error(p, "not supported", model_type, "model.type")
    p = write(tmp_path, "pre", dict(spec, pre_tokenizer={"type": "UnicodeScripts"}))
    expect_error(p, "not supported", "UnicodeScripts", "pre_tokenizer")
    p = write(tmp_path, "norm", dict(spec, normalizer={"type": "Precompiled", "precompiled_charsmap": ""}))
    expect_error(p, "not supported", "Precompiled")
    bad_merge = json.loads(json.dumps(spec))
    bad_merge["model"]["merges"][5] = ["nope", "zzz"]
    expect_error(write(tmp_path, "merge", bad_merge), "model.merges[5]", "nope")
    no_vocab = json.loads(json.dumps(spec))
    del no_vocab["model"]["vocab"]
    expect_error(write(tmp_path, "novocab", no_vocab), "model.vocab", "missing")
    bad_regex = dict(spec, pre_tokenizer={"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated"})
    expect_error(write(tmp_path, "regex", bad_regex), "pre_tokenizer.pattern", "does not compile")
    good = write(tmp_path, "good", spec)
    expect_error(good, "id 999999", "position 1", command="decode", lines=([1, 999999],))
    expect_error(good, "line 2", "JSON string", lines=("ok", 5))


def test_other_components_match_hugging_face(corpus, tmp_path):
    # Each normalizer, pre-tokenizer and decoder on its own, on a sample of the texts.
    files, texts = corpus
    sample = texts[::8] + cases.unicode_texts()[:80]
    failures = []
    for name, spec in cases.variants(cases.gpt2(files[:20])).items():
        try:
            compare(write(tmp_path, name, spec), sample)
        except AssertionError as e:
            failures.append(f"{name}: {str(e)[:600]}")
    assert not failures, "\n".join(failures)
