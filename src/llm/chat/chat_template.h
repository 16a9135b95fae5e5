// Chat templates: the Jinja2 templates Hugging Face models ship in
// tokenizer_config.json ("chat_template"), rendered as transformers'
// apply_chat_template(..., tokenize=False) renders them (its Jinja
// environment: trim_blocks, lstrip_blocks, loopcontrols, its tojson,
// raise_exception, strftime_now, namespace). The engine is a Jinja2 subset
// written here; docs/llm.md ("Chat templates") lists what is supported.
// Anything else is refused with a "not supported" error naming it and the
// template line. Rendering is bounded (output size, steps, macro recursion).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oc::llm {

namespace chat { struct Node; }

class ChatTemplate {
 public:
  static Expected<ChatTemplate> Parse(std::string_view source);

  // context: the template's variables (messages, add_generation_prompt,
  // bos_token, eos_token, tools, any extra). Dicts keep the order they have
  // here (what `tojson` and `items()` show), as Python's do.
  Expected<std::string> Render(const nlohmann::ordered_json& context) const;
  // nlohmann::json sorts keys: they are rendered in that order.
  Expected<std::string> Render(const nlohmann::json& context) const;

  // Bounds; exceeding one is an error naming it.
  static constexpr size_t kMaxOutputBytes = 64 << 20;
#if defined(__SANITIZE_ADDRESS__)
  static constexpr long long kMaxSteps = 1'000'000;   // (an ASan build runs several times slower)
#else
  static constexpr long long kMaxSteps = 5'000'000;   // statements, loop iterations, expressions
#endif
  static constexpr int kMaxMacroDepth = 100;

 private:
  std::shared_ptr<const std::vector<std::unique_ptr<chat::Node>>> body_;
};

// What transformers' apply_chat_template does to `context["messages"]` before
// rendering: drops each message's keys whose value is null (OpenAI-style
// `"content": null` next to tool_calls), and copies a message's reasoning
// (the first non-null of reasoning_content, thinking, reasoning) to
// "thinking" and "reasoning_content". Messages that are not objects are an error.
Status NormalizeChatMessages(nlohmann::ordered_json* context);

// The chat template of a tokenizer_config.json's text: `chat_template` as a
// string, or as a list of {"name", "template"}; `name` picks one of the list
// (empty: "default"; a string-form template answers to "default" too).
// `file` names the config in messages.
Expected<std::string> ChatTemplateFromConfig(std::string_view config_json, std::string_view name,
                                             const std::string& file);

}  // namespace oc::llm
