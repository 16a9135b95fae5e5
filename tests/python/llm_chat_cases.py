"""Chat templates and conversations for test_llm_chat.py.

The family templates are written here in the style of each model family's
chat template (the constructs they use: role alternation checks with
raise_exception, system-message hoisting, namespace flags, tools sections with
tojson, tool-call loops, whitespace control); they are not copies of the
models' files.
"""

LLAMA2 = (
    "{% if messages and messages[0]['role'] == 'system' %}{% set sys_text = messages[0]['content'] %}"
    "{% set turns = messages[1:] %}{% else %}{% set sys_text = none %}{% set turns = messages %}{% endif %}"
    "{% for m in turns %}"
    "{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('roles must go user, assistant, user, ... (message ' ~ loop.index ~ ' is ' ~ m['role'] ~ ')') }}"
    "{% endif %}"
    "{% if loop.first and sys_text is not none %}{% set text = '<<SYS>>\\n' + sys_text + '\\n<</SYS>>\\n\\n' + m['content'] %}"
    "{% else %}{% set text = m['content'] %}{% endif %}"
    "{% if m['role'] == 'user' %}{{ bos_token ~ '[INST] ' ~ text.strip() ~ ' [/INST]' }}"
    "{% elif m['role'] == 'assistant' %}{{ ' ' ~ text.strip() ~ ' ' ~ eos_token }}{% endif %}"
    "{% endfor %}"
)

LLAMA3 = """{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- The system message goes first #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{%- if tools is not none %}
    {{- "Environment: ipython\\n" }}
{%- endif %}
{{- "Knowledge: December 2023\\n" }}
{{- "Today: " + date_string + "\\n\\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You may call these functions. Answer with JSON {\\"name\\": ..., \\"parameters\\": ...}.\\n\\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\\n\\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{%- if tools_in_user_message and not tools is none %}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("tools in the user message need a user message") }}
    {%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}
    {{- "Functions available:\\n\\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\\n\\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("one tool call per message") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}
        {%- if message.content is mapping or message.content is iterable and message.content is not string %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""

ZEPHYR = """{% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>\\n' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>\\n' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>\\n'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %}"""

QWEN25 = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions.\\n\\nSignatures inside <tools></tools>:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each call return <tool_call></tool_call> with JSON inside:\\n<tool_call>\\n{\\"name\\": <name>, \\"arguments\\": <args>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

MISTRAL = """{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- set ns = namespace(user_turns=0, seen_assistant=false) %}
{%- for m in loop_messages %}
    {%- if m.role == 'user' %}{% set ns.user_turns = ns.user_turns + 1 %}{% endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.last and system_message is defined %}
            {{- '[INST] ' + system_message + '\\n\\n' + message['content'] + '[/INST]' }}
        {%- else %}
            {{- '[INST] ' + message['content'] + '[/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {%- set ns.seen_assistant = true %}
        {{- ' ' + message['content']|trim + eos_token}}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %}
{%- if ns.user_turns > 3 %}{{ '[many turns]' }}{% endif %}
"""

GEMMA = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)

PHI3 = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' and message['content'] %}{{'<|system|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'user' %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'assistant' %}{{'<|assistant|>\\n' + message['content'] + '<|end|>\\n'}}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# A macro-based template in the style of newer families (content as a string or a list of parts).
MACRO_PARTS = """{%- macro render_content(content) -%}
{%- if content is string -%}
{{- content -}}
{%- else -%}
{%- for part in content if part.type == 'text' -%}{{ part.text }}{% if not loop.last %} {% endif %}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- for message in messages -%}
<|{{ message.role }}|>
{{ render_content(message.content) | trim }}
{% endfor -%}
{%- if add_generation_prompt -%}<|assistant|>
{% endif -%}"""

# Reasoning models' style (Qwen3-like: the last user query found by a reversed
# loop, <think> split out of the content) and DeepSeek-like (namespace flags, tool calls).
REASONING = """{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- set content = message.content if message.content is string else '' %}
    {%- if message.role == "assistant" %}
        {%- set reasoning = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning = message.reasoning_content %}
        {%- elif '</think>' in content %}
            {%- set reasoning = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index and reasoning %}
            {{- '<|im_start|>assistant\\n<think>\\n' + reasoning.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}
        {%- else %}
            {{- '<|im_start|>assistant\\n' + content }}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- endif %}
{%- endif %}"""

DEEPSEEK = """{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, system_prompt='') %}{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = message['content'] %}{%- endif %}{%- endfor %}{{ bos_token }}{{ ns.system_prompt }}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is none %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls']%}{%- if not ns.is_first %}{{'<｜Assistant｜><｜tool▁calls▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments'] | tojson + '\\n' + '```' + '<｜tool▁call▁end｜>'}}{%- set ns.is_first = true -%}{%- else %}{{'\\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments'] | tojson + '\\n' + '```' + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- endfor %}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is not none %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'\\n<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\\n'}}{% endif %}"""

FAMILIES = {"reasoning": REASONING, "deepseek": DEEPSEEK, "llama2": LLAMA2, "llama3": LLAMA3, "zephyr": ZEPHYR, "qwen25": QWEN25, "mistral": MISTRAL,
            "gemma": GEMMA, "phi3": PHI3, "chatml": CHATML, "macro_parts": MACRO_PARTS}

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather at a place — «now»",
    "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "City"},
                                                    "unit": {"type": "string", "enum": ["c", "f"]}},
                   "required": ["location"]}}}
TIME_TOOL = {"type": "function", "function": {"name": "get_time", "description": "", "parameters": {
    "type": "object", "properties": {}}}}


def conversations():
    u = lambda t: {"role": "user", "content": t}  # noqa: E731
    a = lambda t: {"role": "assistant", "content": t}  # noqa: E731
    s = lambda t: {"role": "system", "content": t}  # noqa: E731
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"location": "Paris", "unit": "c"}}}]}
    call2 = {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"location": "東京"}}},
        {"type": "function", "function": {"name": "get_time", "arguments": {}}}]}
    tool = lambda t: {"role": "tool", "content": t}  # noqa: E731
    think = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nA1"},
             {"role": "user", "content": "q2"}, {"role": "assistant", "content": "x", "reasoning_content": "r2"}]
    call_none = [{"role": "user", "content": "w?"}, {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}, {"type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "content": "r"}, {"role": "assistant", "content": "done"}]
    return {
        "think": think,
        "call_none": call_none,
        "one_user": [u("Hello!")],
        "system_user": [s("You are terse."), u("What is 2+2?")],
        "multi_turn": [u("Hi"), a("Hello, how can I help?"), u("Tell me a joke."), a("Why did the chicken..."), u("Another")],
        "system_multi": [s("Be kind."), u("a"), a("b"), u("c")],
        "unicode": [u("Grüße, 世界! 🙂👍🏽 — naïve café"), a("مرحبا שלום ☃"), u("Ω≈ç√∫ ǅ ß ﬁ")],
        "whitespace": [s("  padded system \n"), u("\n\n  lots of space\t\n"), a("  \t answer  \n"), u(" ")],
        "empty_content": [u(""), a(""), u("x")],
        "newlines_crlf": [u("line1\r\nline2\rline3\nline4"), a("ok\n")],
        "braces": [u("{{ not a tag }} {% neither %} {# nor #}"), a("'quotes' \"double\" \\backslash")],
        "controls": [u("tab\there\x01\x1f\x7f and \u2028 sep \u0085 nel")],
        "assistant_last": [u("q"), a("partial answer")],
        "tool_call": [u("Weather in Paris?"), call, tool('{"temp": 21}'), a("It is 21 °C.")],
        "tool_two_calls": [s("Use tools."), u("Weather in Tokyo and the time?"), call2, tool("sunny"), tool("12:00"),
                           u("thanks")],
        "bad_alternation": [u("a"), u("b")],
        "long": [m for i in range(30) for m in (u(f"question {i}"), a(f"answer {i}"))],
        "parts": [{"role": "user", "content": [{"type": "text", "text": "look at"}, {"type": "image"},
                                               {"type": "text", "text": "this"}]}, a("done")],
    }


# Targeted templates: one construct each, rendered over CONSTRUCT_CONTEXTS.
CONSTRUCTS = [
    "{{ 'a' ~ 1 ~ none ~ true ~ 1.5 }}|{{ 1 + 2 * 3 - 4 / 2 }}|{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }}",
    "{{ [1, 2, 3] }} {{ {'a': 1, 'b': [true, none]} }} {{ (1, 2) | join('-') }} {{ 'it\\'s' }} {{ \"q\\\"\" }} {{ 1e3 }} {{ 0.1 + 0.2 }}",
    "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }} {% endfor %}",
    "{% for m in messages if m.role == 'user' %}{{ loop.index }}:{{ m.content }};{% else %}none{% endfor %}",
    "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}{% if m.role == 'system' %}{% continue %}{% endif %}[{{ m.content }}]{% endfor %}",
    "{% for x in [] %}x{% else %}empty{% endfor %} {% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}",
    "{% set ns = namespace(found=false, n=0) %}{% for m in messages %}{% if m.role == 'assistant' %}{% set ns.found = true %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}",
    "{% set x = 1 %}{% for m in messages %}{% set x = x + 1 %}{{ x }}{% endfor %}/{{ x }}",
    "{% set greeting %}Hello {{ messages[0].role }}!{% endset %}[{{ greeting }}]{% set a, b = 1, 2 %}{{ a }}{{ b }}",
    "{% macro tag(name, body='none') %}<{{ name }}>{{ body }}</{{ name }}>{% endmacro %}{{ tag('a') }}{{ tag('b', 'x') }}{{ tag(name='c', body=messages|length) }}",
    "{{ messages[0].content if messages else 'no' }}|{{ 'yes' if add_generation_prompt else 'no' }}|{{ 'x' if false }}|",
    "{{ messages[1:] | length }} {{ messages[:1] | length }} {{ messages[::-1] | map(attribute='role') | join(',') }} {{ 'abcdef'[1:4] }} {{ 'abcdef'[::-2] }} {{ messages[-1].role }}",
    "{{ messages[0].content | trim }}|{{ messages[0].content | length }}|{{ messages[0].content | upper }}|{{ messages[0].content | lower }}|{{ messages[0].content | title }}|{{ messages[0].content | capitalize }}",
    "{{ messages[0].content.strip() }}|{{ messages[0].content.lstrip() }}|{{ messages[0].content.rstrip() }}|{{ messages[0].content.split() }}|{{ messages[0].content.split(' ') }}|{{ messages[0].content.split(' ', 1) }}",
    "{{ messages[0].content.startswith('H') }} {{ messages[0].content.endswith(('!', '?')) }} {{ messages[0].content.upper() }} {{ messages[0].content.lower() }} {{ messages[0].content.title() }} {{ messages[0].content.replace('l', 'L') }}",
    "{{ messages | map(attribute='role') | list }} {{ messages | first }} {{ (messages | last).role }} {{ messages | selectattr('role', 'equalto', 'user') | list | length }} {{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='content') | join('|') }}",
    "{{ tools | tojson }}\n{{ tools | tojson(indent=2) }}\n{{ messages | tojson }}\n{{ {'é': 'ü', 'n': [1.0, 2.5, -0.0, 1e-7, 12345678901234567890.0]} | tojson }}",
    "{{ nothing | default('dflt') }} {{ '' | default('empty', true) }} {{ messages[0].missing | default('m') }} {{ none | string }} {{ 42 | string }} {{ '42' | int + 1 }} {{ '3.9' | int }} {{ 'x' | int }} {{ 3.9 | int }}",
    "{% for k, v in {'b': 1, 'a': 2} | items %}{{ k }}{{ v }}{% endfor %} {{ {'b': 1, 'a': 2}.get('a') }} {{ {'b': 1}.get('z', 'zz') }} {{ {'b': 1}.get('z') }} {{ {'k': 1}.keys() | list }} {{ {'k': 1}.values() | list }}",
    "{{ messages[0].content | replace('l', '_') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ ['x', 'y'] | join }} {{ [1, 2] | join(', ') }} {{ 'abc' | list }} {{ 'abc' | first }} {{ 'abc' | last }}",
    "{{ 'line1\\nline2\\n\\nline4' | indent(2) }}|{{ 'a\\nb' | indent(4, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'a\\nb' | indent('> ') }}",
    "{{ x is defined }} {{ messages is defined }} {{ none is none }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is sequence }} {{ 1 is number }} {{ true is boolean }} {{ 1 is boolean }} {{ 1.5 is number }} {{ messages is not mapping }}",
    "{{ 1 is odd }} {{ 2 is even }} {{ 9 is divisibleby(3) }} {{ 'a' is in 'abc' }} {{ 3 is eq 3 }} {{ 3 is gt 2 }} {{ 3 is lt(2) }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is true }}",
    "{{ 'a' in 'cat' }} {{ 'role' in messages[0] }} {{ 2 in [1, 2] }} {{ 'z' not in 'abc' }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] == [1, 2] }} {{ true == 1 }} {{ none == none }} {{ 1 != 2 }}",
    "{{ true and false }} {{ true or false }} {{ not true }} {{ 0 or 'x' }} {{ '' and 'y' }} {{ not messages }} {{ (1 < 2) and (2 < 3) }} {{ not 1 == 2 }}",
    "  {%- if true %}\n    stripped\n  {%- endif %}\n  {% if true %}\n  lstripped\n  {% endif %}\n{%+ if true %}kept{% endif %}\n{{- ' minus' -}}\n  {# comment #}\n  after\n",
    "a  \n  {% if true %}\n  b\n  {%- endif %}  \n  c {# c1 -#}   d {#- c2 #} e\n{% for i in range(3) -%}\n  {{ i }}\n{%- endfor %}\n\n",
    "{% for i in range(2) %}{% for j in range(2) %}{{ loop.index }}{{ i }}{{ j }} {% endfor %}{{ loop.index }};{% endfor %} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }}",
    "{{ messages | length }} {{ (messages | length) > 2 }} {{ messages[0]['role'] }} {{ messages[0].role | upper }} {{ (messages | selectattr('role', 'equalto', 'system') | list)[0].content | default('no system') if messages | selectattr('role', 'equalto', 'system') | list else 'none' }}",
    "{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ [1, 2, 2, 1] | unique | list }} {{ [1, 2, 3] | reverse | list }} {{ [1, 2, 3] | sum }} {{ [4, 2, 8] | min }} {{ [4, 2, 8] | max }} {{ -3 | abs }}",
    "{{ 1.0 }} {{ 2.50 }} {{ 1e16 }} {{ 1.5e-5 }} {{ 100000.0 }} {{ 3 / 2 }} {{ 4 / 2 }} {{ 10 ** -1 }} {{ 2.0 ** 3 }} {{ 7.5 // 2 }} {{ 7.5 % 2 }}",
    "{{ messages[0] }}|{{ ['a\\'b', \"c\\\"d\", 'e\\nf', 'ü'] }}|{{ {'k': none, 'b': false} }}",
    "{{ extra_var | default('no extra') }} {{ extra_list | join('+') if extra_list is defined else '' }} {{ bos_token }}{{ eos_token }}",
    "{% if messages[0].role == 'system' %}{% set rest = messages[1:] %}{% else %}{% set rest = messages %}{% endif %}{% for m in rest %}{{ m.role[0] | upper }}{% endfor %} {{ rest | length }}",
    "{{ messages[0].content | wordcount if false else 'ok' }}" if False else "{{ 'x' * 3 }} {{ 3 * 'ab' }} {{ [1] + [2] }} {{ 'a' + 'b' }} {{ 'é'|length }} {{ '🙂👍🏽'|length }} {{ 'ǅungla ǆ'.title() }} {{ 'straße'.upper() }} {{ 'İ'.lower()|length }}",
    "{{ messages[0].tool_calls[0].function.arguments | tojson if messages[0].tool_calls is defined else 'no calls' }}",
 "{% for m in messages %}{{ loop.previtem.role if loop.previtem is defined else '-' }}>{{ loop.nextitem.role if loop.nextitem is defined else '-' }} {% endfor %}",
 "{{ messages[0]['content'][0] }} {{ messages[0]['content'][-1] }} {{ messages[0].content[100] is defined }} {{ none.x is defined }}",
 "{{ 1234567890123456789 }} {{ -5 | abs }} {{ true | int }} {{ 2.5 | string }} {{ [1.0, 2] | tojson }} {{ 1e300 * 10 }}",
 "{% set ns = namespace(items=[]) %}{% for m in messages %}{% set ns.items = ns.items + [m.role] %}{% endfor %}{{ ns.items | join(',') }} {{ ns.items | length }}",
 "{% for m in messages %}{% if m.role == 'user' %}{% set last_user = loop.index0 %}{% endif %}{% endfor %}[{{ last_user }}]",
 "{%- for m in messages -%}\n  {%- if not loop.first %}, {% endif -%}\n  {{ m.role }}\n{%- endfor %}",
 "{{ messages | selectattr('role', 'in', ['user', 'system']) | map(attribute='role') | join }} {{ messages | map('upper', attribute='role') | list if false else messages | map(attribute='role') | map('upper') | join }}",
 "{{ 'A-B-C'.split('-', 1) }} {{ '  a  b  '.split(none, 1) }} {{ 'x'.join(['1', '2']) }} {{ 'abcabc'.find('c') }} {{ 'a\\nb\\r\\nc'.splitlines() }}",
 "{{ messages[0].content | trim('!H') }} {{ '..x..'.strip('.') }} {{ 'mississippi'.replace('ss', 'SS', 1) }} {{ ''.join([]) }}",
 "{{ {'a': {'b': [1, {'c': 'é\\u0001'}]}} | tojson(indent=4) }}|{{ [] | tojson(indent=2) }}|{{ {} | tojson }}|{{ {'z': 1, 'a': 2} | tojson(sort_keys=true) }}",
 "{{ 3 > 2 > 1 }} {{ 1 < 2 < 0 }} {{ 1 == 1 == 1 }}",
 "{{ 'a' if 'x' in messages[0].content else 'b' }}{{ (messages | length) // 2 }}{{ messages|length is even }}",
 "{{ messages[0].content | capitalize }} {{ 'hELLO wORLD'|title }} {{ \"they're bill's\"|title }} {{ 'ǆemal'|capitalize }}",
 "{{ range(3) | list }}{{ range(3) | length }}{% for i in range(3) | reverse %}{{ i }}{% endfor %}{{ [1,2,3][1:] | sum }}",
    "{{ dict(a=1, b=[2]) | tojson }} {{ namespace(a=1).a }} {{ messages | selectattr('tool_calls') | list | length }} {{ messages | selectattr('tool_calls', 'defined') | list | length }}",
]


def construct_contexts():
    conv = conversations()
    return [
        {"messages": conv["system_multi"], "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"},
        {"messages": conv["unicode"], "add_generation_prompt": False, "bos_token": "<s>", "eos_token": "</s>",
         "extra_var": "EXTRA", "extra_list": ["p", "q"]},
        {"messages": [{"role": "user", "content": "Hello world, hello!"}], "add_generation_prompt": False,
         "tools": [WEATHER_TOOL, TIME_TOOL], "bos_token": "", "eos_token": ""},
        {"messages": conv["whitespace"], "add_generation_prompt": True, "bos_token": "<|begin|>", "eos_token": "<|end|>"},
        {"messages": conv["tool_call"][1:], "add_generation_prompt": True, "tools": [WEATHER_TOOL]},
    ]


# Templates with errors: (template, substrings the error must contain).
SYNTAX_ERRORS = [
    ("{% if x %}no end", ["line 1", "endif"]),
    ("line one\n{% for x in y %}\n{{ x }", ["line 3"]),
    ("a\nb\n{{ 1 + }}", ["line 3", "expression"]),
    ("{% endfor %}", ["line 1", "endfor"]),
    ("{% for in x %}{% endfor %}", ["line 1"]),
    ("\n{{ 'unterminated }}", ["line 2", "string"]),
    ("{# never closed", ["line 1", "comment"]),
    ("{% break %}", ["line 1", "break"]),
    ("{{ x ! y }}", ["line 1"]),
    ("{% if %}{% endif %}", ["line 1"]),
]
NOT_SUPPORTED = [
    ("\n\n{{ x | wordcount }}", ["line 3", "filter 'wordcount'", "not supported"]),
    ("{{ x | nonexistent_filter }}", ["line 1", "filter 'nonexistent_filter'", "not supported"]),
    ("{{ x is nonexistent_test }}", ["line 1", "test 'nonexistent_test'", "not supported"]),
    ("{% include 'x.j2' %}", ["line 1", "tag 'include'", "not supported"]),
    ("{% raw %}{{ x }}{% endraw %}", ["line 1", "raw", "not supported"]),
    ("\n{% call foo() %}x{% endcall %}", ["line 2", "tag 'call'", "not supported"]),
    ("{{ 'a'.zfill(3) }}", ["line 1", "zfill", "not supported"]),
    ("{{ '%s' % 1 }}", ["line 1", "'%' string formatting", "not supported"]),
]
