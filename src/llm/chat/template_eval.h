// The evaluator of parsed chat templates (template_parser.h's tree).
#pragma once

#include <string>

#include "base/status.h"
#include "llm/chat/template_ast.h"

namespace oc::llm::chat {

Expected<std::string> RenderTemplate(const Body& body, const Json& context);

}  // namespace oc::llm::chat
