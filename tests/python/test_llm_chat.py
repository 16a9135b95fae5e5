"""oc-chat-template (src/llm/chat) against jinja2 and transformers, byte for byte.

The reference is jinja2 configured exactly as transformers' chat template
utilities configure it (ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks and loopcontrols; its tojson, raise_exception, strftime_now and
namespace), and transformers' own apply_chat_template on a small tokenizer.
Templates in the style of each model family and one per construct
(llm_chat_cases.py) are rendered over many conversations; errors must match
too (a template that raises in jinja2 must fail here with the message).
"""
import json
import os
import subprocess
from datetime import datetime

import pytest

jinja2 = pytest.importorskip("jinja2")
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402
import jinja2.ext  # noqa: E402
import llm_chat_cases as cases  # noqa: E402

BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
TOOL = os.path.join(BUILD, "oc-chat-template")


def reference_env():
    # transformers' environment (utils/chat_template_utils.py), rebuilt here so
    # that the reference does not depend on transformers' private functions.
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    env.globals["namespace"] = jinja2.utils.Namespace
    env.globals["dict"] = dict
    return env


ENV = reference_env()


def transformers_messages(messages):
    # What apply_chat_template does to the messages before rendering (oc-chat-template does it too):
    # keys with None values dropped, reasoning copied to "thinking" and "reasoning_content".
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        r = next((m[k] for k in ("reasoning_content", "thinking", "reasoning") if m.get(k) is not None), None)
        if r is not None:
            m = {"thinking": r, **m, "reasoning_content": r}
        out.append(m)
    return out


def jinja_render(template, context):
    """(text, None) or (None, error message)."""
    if "messages" in context:
        context = dict(context, messages=transformers_messages(context["messages"]))
    try:
        return ENV.from_string(template).render(**context), None
    except Exception as e:  # noqa: BLE001 (TypeError and others count as errors too)
        # raise_exception's message must come through; other errors (undefined
        # attributes, type errors) need only be errors here too.
        return None, str(e) if type(e) is jinja2.exceptions.TemplateError else ""


@pytest.fixture(scope="module")
def tool():
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build the project (make build)")
    return TOOL


def oc_render(tmp_path, template, context, name=None, config_extra=None):
    cfg = dict(config_extra or {})
    cfg["chat_template"] = template
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(cfg, ensure_ascii=False), encoding="utf-8")
    args = [TOOL, "--tokenizer-config", str(path)] + (["--template", name] if name else [])
    r = subprocess.run(args, input=json.dumps(context, ensure_ascii=False).encode(), capture_output=True, timeout=60)
    assert r.returncode in (0, 1), f"exit {r.returncode}: {r.stderr[-2000:]!r}"
    return r


def check(tmp_path, template, context, label):
    want, err = jinja_render(template, context)
    r = oc_render(tmp_path, template, context)
    if err is not None:
        assert r.returncode == 1, f"{label}: jinja2 raised {err!r}, oc rendered {r.stdout[:300]!r}"
        assert err in r.stderr.decode(), f"{label}: jinja2 raised {err!r}, oc said {r.stderr!r}"
        return "error"
    assert r.returncode == 0, f"{label}: oc failed: {r.stderr.decode()}"
    got = r.stdout.decode()
    assert got == want, f"{label}:\n--- oc\n{got!r}\n--- jinja2\n{want!r}"
    return "text"


def family_contexts():
    conv = cases.conversations()
    for cname, messages in conv.items():
        for gen in (False, True):
            ctx = {"messages": messages, "add_generation_prompt": gen, "bos_token": "<s>", "eos_token": "</s>"}
            yield f"{cname}/gen={gen}", ctx
            if "tool" in cname:
                yield f"{cname}/gen={gen}/tools", dict(ctx, tools=[cases.WEATHER_TOOL, cases.TIME_TOOL])


@pytest.mark.parametrize("family", list(cases.FAMILIES))
def test_family_templates_match_jinja2(family, tool, tmp_path):
    template = cases.FAMILIES[family]
    kinds = [check(tmp_path, template, ctx, f"{family}/{label}") for label, ctx in family_contexts()]
    assert kinds.count("text") >= 10


def test_llama3_tool_variants_match_jinja2(tool, tmp_path):
    conv = cases.conversations()
    n = 0
    for extra in ({"tools_in_user_message": False}, {"tools_in_user_message": True}, {"date_string": "1 Jan 2030"},
                  {"custom_tools": [cases.TIME_TOOL]}):
        for cname in ("one_user", "system_user", "tool_call"):
            ctx = dict(extra, messages=conv[cname], add_generation_prompt=True, bos_token="<|bot|>",
                       tools=[cases.WEATHER_TOOL])
            check(tmp_path, cases.LLAMA3, ctx, f"llama3/{extra}/{cname}")
            n += 1
    assert n == 12


@pytest.mark.parametrize("index", range(len(cases.CONSTRUCTS)))
def test_constructs_match_jinja2(index, tool, tmp_path):
    template = cases.CONSTRUCTS[index]
    for k, ctx in enumerate(cases.construct_contexts()):
        check(tmp_path, template, ctx, f"construct {index} context {k}: {template[:80]!r}")


def test_transformers_apply_chat_template_agrees(tool, tmp_path):
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>")),
        bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    conv = cases.conversations()
    compared = 0
    for family, template in cases.FAMILIES.items():
        tok.chat_template = template
        for cname, messages in conv.items():
            for gen in (False, True):
                tools = [cases.WEATHER_TOOL] if "tool" in cname else None
                try:
                    want, err = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=gen,
                                                        tokenize=False), None
                except Exception as e:  # noqa: BLE001
                    want, err = None, str(e) if type(e) is jinja2.exceptions.TemplateError else ""
                ctx = {"messages": messages, "add_generation_prompt": gen}
                if tools:
                    ctx["tools"] = tools
                r = oc_render(tmp_path, template, ctx, config_extra={"bos_token": "<s>", "eos_token": "</s>",
                                                                      "unk_token": "<unk>"})
                if err is not None:
                    assert r.returncode == 1 and err in r.stderr.decode(), (family, cname, err, r.stderr)
                else:
                    assert r.returncode == 0, (family, cname, r.stderr)
                    assert r.stdout.decode() == want, f"{family}/{cname}/gen={gen}:\n{r.stdout.decode()!r}\n{want!r}"
                    compared += 1
    assert compared > 150


def test_config_forms_and_named_templates(tool, tmp_path):
    ctx = {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": False}
    listed = [{"name": "default", "template": "D:{{ messages[0].content }}"},
              {"name": "tool_use", "template": "T:{{ messages | length }}"}]
    r = oc_render(tmp_path, listed, ctx)
    assert r.returncode == 0 and r.stdout == b"D:hi"
    r = oc_render(tmp_path, listed, ctx, name="tool_use")
    assert r.returncode == 0 and r.stdout == b"T:1"
    r = oc_render(tmp_path, listed, ctx, name="nope")
    assert r.returncode == 1 and b"nope" in r.stderr and b"tool_use" in r.stderr
    r = oc_render(tmp_path, "{{ bos_token }}|{{ eos_token }}", ctx, config_extra={"bos_token": {"content": "<B>"},
                                                                               "eos_token": "<E>"})
    assert r.stdout == b"<B>|<E>"
    r = oc_render(tmp_path, "{{ bos_token }}", dict(ctx, bos_token="mine"), config_extra={"bos_token": "<B>"})
    assert r.stdout == b"mine"
    path = tmp_path / "none.json"
    path.write_text("{}")
    r = subprocess.run([TOOL, "--tokenizer-config", str(path)], input=b"{}", capture_output=True, timeout=60)
    assert r.returncode == 1 and b"chat_template" in r.stderr
    r = oc_render(tmp_path, "x", ctx)
    r2 = subprocess.run([TOOL, "--tokenizer-config", str(tmp_path / "tokenizer_config.json")], input=b"[1, 2",
                        capture_output=True, timeout=60)
    assert r2.returncode == 1 and b"stdin" in r2.stderr


def test_strftime_now(tool, tmp_path):
    r = oc_render(tmp_path, "{{ strftime_now('%Y-%m-%d') }}", {"messages": []})
    assert r.returncode == 0 and r.stdout.decode() == datetime.now().strftime("%Y-%m-%d")


@pytest.mark.parametrize("template,needles", cases.SYNTAX_ERRORS + cases.NOT_SUPPORTED)
def test_errors_name_the_line_and_what(template, needles, tool, tmp_path):
    if (template, needles) in cases.SYNTAX_ERRORS:
        with pytest.raises(Exception):  # noqa: B017 (jinja2 refuses these too)
            ENV.from_string(template).render(x="Hello", y=[1], messages=[])
    r = oc_render(tmp_path, template, {"x": "Hello", "y": [1], "messages": []})
    err = r.stderr.decode()
    assert r.returncode == 1 and err.startswith("oc-chat-template: "), err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"


def test_raise_exception_message_propagates(tool, tmp_path):
    t = "ok\n{% if messages | length > 1 %}{{ raise_exception('Too many: ' ~ messages | length) }}{% endif %}"
    r = oc_render(tmp_path, t, {"messages": [{}, {}, {}]})
    assert r.returncode == 1 and "Too many: 3" in r.stderr.decode() and "line 2" in r.stderr.decode()


def test_runaway_templates_are_bounded(tool, tmp_path):
    for t, needle in [
        ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursion"),
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "steps"),
        ("{% for i in range(10000000000) %}{% endfor %}", "range"),
        ("{% set s = 'x' * 60000000 %}{{ s ~ s }}", "limit"),
        ("{{ " + "(" * 300 + "1" + ")" * 300 + " }}", "nested"),
        ("{% if true %}" * 300 + "{% endif %}" * 300, "nested"),
        ("{% if true %}{{ " + " ~ ".join(["'a'"] * 100000) + " }}{% endif %}", "nested"),
        ("{{ x" + "|trim" * 50000 + " }}", "nested"),
        ("{{ x" + ".a" * 50000 + " }}", "nested"),
        ("{% macro f(n) %}{{ " + "(" * 40 + "f(n - 1) ~ 'x'" + " ~ 'y')" * 40 + " }}{% endmacro %}{{ f(1) }}", "nested past"),
    ]:
        r = oc_render(tmp_path, t, {"messages": []})
        assert r.returncode == 1 and needle in r.stderr.decode(), (t[:60], r.stderr[:300])


def test_undefined_and_type_errors_are_clean(tool, tmp_path):
    for t in ["{{ nope.attr }}", "{{ messages[0].content.nope.deeper }}", "{{ 1 + 'a' }}", "{{ 1 // 0 }}",
              "{% for x in 5 %}{% endfor %}", "{{ 'abc' < 3 }}"]:
        _, err = jinja_render(t, {"messages": [{"content": "c"}]})
        assert err is not None, t  # jinja2 refuses it too
        r = oc_render(tmp_path, t, {"messages": [{"content": "c"}]})
        assert r.returncode == 1 and r.stderr.startswith(b"oc-chat-template: chat template line 1"), (t, r.stderr)


def test_whitespace_control_matches_jinja2(tool, tmp_path):
    # Random sequences of tags with every strip marker, between texts of spaces,
    # tabs and newlines (also CRLF sources): trim_blocks and lstrip_blocks as
    # transformers sets them.
    import random
    rng = random.Random(19)
    opens = ["{%", "{%-", "{%+"]
    closes = ["%}", "-%}", "+%}"]
    texts = ["", " ", "  ", "\n", " \n", "\n  ", "\t\n\t", "x", " x ", "\n\n", "  y\n  ", "\r\n  ", "\u3000\n"]
    exprs = ["{{ 1 }}", "{{- 2 }}", "{{ 3 -}}", "{{- 4 -}}", "{# c #}", "{#- c -#}", "{# c -#}"]
    n = 0
    for _ in range(120):
        parts = []
        for _ in range(rng.randint(1, 4)):
            o, c = rng.choice(opens), rng.choice(closes)
            inner = rng.choice(texts) + rng.choice(exprs) + rng.choice(texts)
            parts.append(f"{rng.choice(texts)}{o} if true {c}{inner}{rng.choice(opens)} endif {rng.choice(closes)}")
            parts.append(rng.choice(texts) + rng.choice(exprs))
        template = "".join(parts) + rng.choice(texts)
        check(tmp_path, template, {"messages": []}, f"whitespace {template!r}")
        n += 1
    assert n == 120


def test_mutated_templates_fail_cleanly_or_render(tool, tmp_path):
    # Random cuts, duplications and byte flips of the family templates: each
    # must render or fail with a message (exit 0 or 1), never crash or hang.
    import random
    rng = random.Random(7)
    ctx = {"messages": cases.conversations()["tool_call"], "add_generation_prompt": True,
           "tools": [cases.WEATHER_TOOL]}
    sources = list(cases.FAMILIES.values())
    for i in range(150):
        t = rng.choice(sources)
        a, b = sorted(rng.randrange(len(t) + 1) for _ in range(2))
        kind = i % 3
        if kind == 0:
            t = t[:a] + t[b:]
        elif kind == 1:
            t = t[:b] + t[a:b] + t[b:]
        else:
            t = t[:a] + rng.choice("{}%#-+()[]'\"|.~=\n\\") + t[a + 1:]
        r = oc_render(tmp_path, t, ctx)  # asserts exit 0 or 1
        assert r.returncode == 0 or r.stderr.startswith(b"oc-chat-template: "), (t[:200], r.stderr[:300])
