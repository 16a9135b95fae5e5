// Lexer and parser of the chat-template language (a Jinja2 subset), with the
// whitespace rules transformers sets: trim_blocks, lstrip_blocks, no
// keep_trailing_newline, `{%-`/`-%}` and `{%+`/`+%}`.
#pragma once

#include <string_view>

#include "base/status.h"
#include "llm/chat/template_ast.h"

namespace oc::llm::chat {

Expected<Body> ParseTemplate(std::string_view source);

// The filters and tests the evaluator implements (the parser refuses others).
bool IsKnownFilter(std::string_view name);
bool IsKnownTest(std::string_view name);

}  // namespace oc::llm::chat
