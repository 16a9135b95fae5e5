"""Texts and tokenizer.json files for tests/python/test_llm_tokenizer.py.

Everything is generated here, nothing is downloaded: the texts are the Python
standard library's own sources (lines, paragraphs, whole files) and Unicode
strings built from unicodedata; the tokenizers are trained on them with the
Hugging Face `tokenizers` library, configured the way GPT-2, Llama 3, Qwen2,
Llama 2 / TinyLlama and Mistral ship theirs.
"""
import json
import os
import random
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPIECE = "\u2581"


def stdlib_files(limit_bytes=1_500_000):
    """Sorted .py files next to the os module, up to about limit_bytes of text."""
    root = os.path.dirname(os.__file__)
    out, total = [], 0
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not name.endswith(".py") or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if len(text) > 120_000:
            continue
        out.append(text)
        total += len(text)
        if total > limit_bytes:
            break
    return out


def unicode_texts(seed=19):
    """Strings heavy in what tokenizers get wrong: scripts, marks, emoji, odd spaces."""
    rng = random.Random(seed)
    named = []
    for start, stop in [(0xA0, 0x250), (0x370, 0x400), (0x400, 0x460), (0x590, 0x5FF), (0x600, 0x6FF),
                        (0x900, 0x97F), (0xE00, 0xE5B), (0x1E00, 0x1F00), (0x2000, 0x206F), (0x2100, 0x2200),
                        (0x3040, 0x30FF), (0x4E00, 0x4F00), (0xAC00, 0xAD00), (0xFB00, 0xFB4F), (0xFF00, 0xFFEF),
                        (0x1F300, 0x1F64F), (0x1D400, 0x1D500)]:
        named.extend(chr(c) for c in range(start, stop) if unicodedata.name(chr(c), None))
    fixed = [
        "", " ", "  ", "\t", "\n", "\r\n", "\r\n\r\n", "   \t  x", "x   ", "a\u0085b", "a\u00a0b", "a\u3000b",
        "a\u2028b", "\u200bzero\u200bwidth", "e\u0301 \u00e9 n\u0303 \u00f1", "\u1100\u1161\u11a8 \uac01",
        "\ufb01 \ufb02 \u2460 \u00bd \u2167 \u0661\u0662\u0663 \u0966\u0967", "\uff28\uff45\uff4c\uff4c\uff4f",
        "\u0130stanbul \u03a3\u039f\u03a6\u039f\u03a3 stra\u00dfe", "I'M HE'S WE'LL 'S 'Ll", "don't you'd they've",
        "\u4f60\u597d\uff0c\u4e16\u754c\u3002\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3067\u3059\u3002",
        "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 \u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
        "\U0001f600\U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f \U0001f1ef\U0001f1f5",
        "1234567890 12 345 6789 3.14159 1e-9 0x1F", "x" * 300, "ab" * 200, " " * 50 + "end", "\n" * 7,
        "tabs\t\tand\t\t\tspaces   mixed \t \n lines\r\nwith CRLF\r\n", "\u00e9" * 40, "\U0001f600" * 20,
        "<|endoftext|>", "hello<|endoftext|>world", "<s>", "a<s>b</s>c", " <s> ", "<|begin_of_text|>hi",
        "<0x41><0xE2>", "\u2581\u2581x\u2581", "end of text\u2581", "MiXeD CaSe WORDS", "__init__ self._x",
        "a\x00b", "\x00", "\x01\x02\x1f\x7f", "\ufeffBOM", "\U0010ffff\ue000", "x\u0085\u0085 y", "\u3000 \u3000",
    ]
    out = list(fixed)
    for _ in range(300):
        n = rng.randint(1, 40)
        pieces = []
        for _ in range(n):
            r = rng.random()
            if r < 0.6:
                pieces.append(rng.choice(named))
            elif r < 0.75:
                pieces.append(rng.choice([" ", "  ", "\t", "\n", "\r\n", " \n ", "\u00a0"]))
            elif r < 0.85:
                pieces.append(rng.choice(["the", "The", "word", "'s", "'T", "123", "4567", "_", "-", "..."]))
            elif r < 0.92:
                pieces.append(rng.choice(named) + rng.choice(["\u0301", "\u0308", "\u0327", "\u20dd"]))
            else:
                pieces.append(rng.choice(["<|endoftext|>", "<s>", "</s>", "<|begin_of_text|>", "<|eot_id|>"]))
        out.append("".join(pieces))
    names = [unicodedata.name(c) for c in named[:2000:7]]
    out.extend(" ".join(names[i:i + 12]).lower() for i in range(0, len(names), 12))
    return out


def corpus_texts():
    """Lines, paragraphs and whole files of the standard library, plus the Unicode strings."""
    files = stdlib_files()
    lines, paragraphs = [], []
    for text in files:
        lines.extend(line for line in text.splitlines(keepends=True)[:200])
        paragraphs.extend(p for p in text.split("\n\n")[:60] if p.strip())
    rng = random.Random(7)
    texts = rng.sample(lines, min(2500, len(lines))) + rng.sample(paragraphs, min(900, len(paragraphs)))
    texts += files[:40] + unicode_texts()
    return files, texts


def _train(tok, files, vocab_size, special, **kw):
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False, **kw)
    tok.train_from_iterator(files + unicode_texts(seed=3), trainer)
    return json.loads(tok.to_str())


def gpt2(files):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return _train(tok, files, 3000, ["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def _split_bytelevel(files, regex, nfc, ignore_merges, bos_template, specials):
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    spec = _train(tok, files, 4000, specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer.from_str(json.dumps(spec))
    bl = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    if bos_template:
        bos = specials[0]
        tok.post_processor = processors.Sequence([
            bl, processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                              special_tokens=[(bos, tok.token_to_id(bos))])])
    else:
        tok.post_processor = bl
    return json.loads(tok.to_str())


def llama3(files):
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    return _split_bytelevel(files, LLAMA3_REGEX, False, True, True, specials)


def qwen2(files):
    return _split_bytelevel(files, QWEN2_REGEX, True, False, False, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])


def _sentencepiece_style(files, vocab_size):
    """A BPE with <unk>, <s>, </s>, then <0x00>..<0xFF> in the model's vocabulary (as Llama 2 ships)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPIECE, prepend_scheme="always", split=True)
    spec = _train(tok, files, vocab_size, ["<unk>", "<s>", "</s>"], limit_alphabet=300)
    trained = spec["model"]["vocab"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token, _ in sorted(trained.items(), key=lambda kv: kv[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    spec["model"]["vocab"] = vocab
    for t in spec["added_tokens"]:
        t["id"] = vocab[t["content"]]
    return spec


def llama2(files):
    spec = _sentencepiece_style(files, 3000)
    spec["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": SPIECE}, {"type": "Replace", "pattern": {"String": " "}, "content": SPIECE}]}
    spec["pre_tokenizer"] = None
    spec["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": SPIECE}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    spec["post_processor"] = {
        "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                 {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return spec


def mistral(files, prepend_scheme="first", split=False, metaspace_decoder=False):
    spec = _sentencepiece_style(files, 3000)
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPIECE, "prepend_scheme": prepend_scheme,
                             "split": split}
    if metaspace_decoder:
        spec["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": SPIECE, "prepend_scheme": prepend_scheme, "split": split},
            {"type": "ByteFallback"}, {"type": "Fuse"}]}
    else:
        spec["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPIECE}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    spec["post_processor"] = None
    return spec


def mistral_legacy(files):
    """Metaspace as files written before prepend_scheme existed say it (add_prefix_space)."""
    spec = mistral(files)
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPIECE, "add_prefix_space": True}
    spec["decoder"] = {"type": "Metaspace", "replacement": SPIECE, "add_prefix_space": True}
    return spec


def with_flag_tokens(spec):
    """The GPT-2 tokenizer with added tokens that use every flag (and a Lowercase normalizer)."""
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.normalizer = normalizers.Lowercase()
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False)])
    tok.add_tokens([AddedToken("[R]", rstrip=True, normalized=False), AddedToken("foo", single_word=True),
                    AddedToken("BiG", normalized=True), AddedToken("<both>", lstrip=True, rstrip=True),
                    AddedToken("word_x", single_word=True, lstrip=True), AddedToken("\u00e9t\u00e9", normalized=True)])
    return json.loads(tok.to_str())


def with_normalized_tokens(spec):
    """The Llama 2 tokenizer (Prepend + Replace normalizer) with normalized and raw added tokens."""
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.add_tokens([AddedToken("hello world", normalized=True), AddedToken("raw one", normalized=False),
                    AddedToken("<x>", lstrip=True, rstrip=True, normalized=False)])
    return json.loads(tok.to_str())


FLAG_TEXTS = [
    "a <mask> b", "a   <mask>b", "<mask>", "  <mask>  ", "x[R]   y", "x [R]\n\ty", "foo", "foobar", "a foo b",
    "_foo", "foo_", "(foo)", "éfoo", "foo9", "BIG big BiG", "xBIGy", "a <both>  b", "a\t<both>\nb", "word_x",
    " word_x ", "aword_x", "été ÉTÉ", "<mask><mask> <mask>", "foo foo foo", "[R][R] [R]", "",
    "hello world", "say hello world twice hello world", "raw one", "a raw one b", "x <x> y", "<x>hello world<x>",
]


def mutations(spec, count, seed=5):
    """Broken copies of a tokenizer.json: fields deleted or given values of the wrong type."""
    rng = random.Random(seed)
    weird = [None, 0, -1, 2**40, "", "x", [], {}, [1, 2], {"type": "Sequence"}, True, 1.5, {"String": ""},
             {"Regex": "(?=a)"}]

    def paths(o, p=()):
        if p:
            yield p
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("vocab", "merges"):
                    yield p + (k,)
                else:
                    yield from paths(v, p + (k,))
        elif isinstance(o, list) and len(o) < 50:
            for i, v in enumerate(o):
                yield from paths(v, p + (i,))

    for _ in range(count):
        out = json.loads(json.dumps(spec))
        for _ in range(rng.randint(1, 3)):
            candidates = list(paths(out))
            p = rng.choice(candidates)
            o = out
            for k in p[:-1]:
                o = o[k]
            if isinstance(o, dict) and rng.random() < 0.25:
                del o[p[-1]]
            else:
                o[p[-1]] = json.loads(json.dumps(rng.choice(weird)))
        yield out


def _byte_level_tail():
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


def variants(gpt2_spec):
    """The GPT-2 model under other normalizers, pre-tokenizers and decoders, one per entry.

    Every pre-tokenizer ends in ByteLevel(use_regex=False) so each word is encodable.
    """
    def split(pattern, behavior, invert=False):
        return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}

    pre = {
        "digits": {"type": "Digits", "individual_digits": True},
        "digits_runs": {"type": "Digits", "individual_digits": False},
        "whitespace": {"type": "Whitespace"},
        "whitespace_split": {"type": "WhitespaceSplit"},
        "punctuation": {"type": "Punctuation", "behavior": "Isolated"},
        "punctuation_next": {"type": "Punctuation", "behavior": "MergedWithNext"},
        "bert": {"type": "BertPreTokenizer"},
        "char_delimiter": {"type": "CharDelimiterSplit", "delimiter": "e"},
        "bytelevel_prefix": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "metaspace_never": {"type": "Metaspace", "replacement": SPIECE, "prepend_scheme": "never", "split": True},
    }
    for behavior in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
        pre[f"split_regex_{behavior}"] = split({"Regex": r"\s+|\p{P}"}, behavior)
        pre[f"split_string_{behavior}"] = split({"String": " "}, behavior)
        pre[f"split_invert_{behavior}"] = split({"Regex": r"\p{L}+"}, behavior, invert=True)
    norm = {
        "nfkc": {"type": "NFKC"}, "nfd": {"type": "NFD"}, "nfkd": {"type": "NFKD"},
        "lowercase": {"type": "Lowercase"}, "strip": {"type": "Strip", "strip_left": True, "strip_right": True},
        "strip_accents": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
        "replace_regex": {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
        "prepend": {"type": "Prepend", "prepend": "<<"},
    }
    out = {}
    for name, p in pre.items():
        spec = json.loads(json.dumps(gpt2_spec))
        if p["type"] == "ByteLevel":
            spec["pre_tokenizer"] = p
        else:
            spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [p, _byte_level_tail()]}
        out["pre_" + name] = spec
    for name, n in norm.items():
        spec = json.loads(json.dumps(gpt2_spec))
        spec["normalizer"] = n
        out["norm_" + name] = spec
    spec = json.loads(json.dumps(gpt2_spec))
    spec["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "Replace", "pattern": {"String": "e"}, "content": "_"},
        {"type": "Strip", "content": "_", "start": 2, "stop": 0}]}
    out["decoder_replace_strip"] = spec
    spec = json.loads(json.dumps(gpt2_spec))
    spec["decoder"] = None
    out["decoder_none"] = spec
    for kind in ("BertProcessing", "RobertaProcessing"):
        spec = json.loads(json.dumps(gpt2_spec))
        spec["post_processor"] = {"type": kind, "sep": ["<|endoftext|>", 0], "cls": ["!", 1]}
        if kind == "RobertaProcessing":
            spec["post_processor"].update(trim_offsets=True, add_prefix_space=False)
        out["post_" + kind] = spec
    out["model_subword_affixes"] = subword_affixes()
    return out


def subword_affixes():
    """A BPE trained with continuing_subword_prefix and end_of_word_suffix (no decoder: tokens joined)."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    spec = _train(tok, stdlib_files(300_000), 2000, ["[UNK]"], continuing_subword_prefix="##",
                  end_of_word_suffix="</w>", limit_alphabet=200)
    spec["decoder"] = None
    return spec
