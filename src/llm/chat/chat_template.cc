#include "llm/chat/chat_template.h"

#include "llm/chat/template_eval.h"
#include "llm/chat/template_parser.h"

namespace oc::llm {

Expected<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  OC_ASSIGN_OR_RETURN(chat::Body body, chat::ParseTemplate(source));
  ChatTemplate t;
  t.body_ = std::make_shared<const chat::Body>(std::move(body));
  return t;
}

Expected<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context) const {
  if (!context.is_object()) return InvalidArgument("the chat template context must be a JSON object, got ", context.type_name());
  return chat::RenderTemplate(*body_, context);
}

Expected<std::string> ChatTemplate::Render(const nlohmann::json& context) const {
  return Render(nlohmann::ordered_json::parse(context.dump()));
}

Status NormalizeChatMessages(nlohmann::ordered_json* context) {
  auto it = context->find("messages");
  if (it == context->end()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument("messages must be a list, got ", it->type_name());
  for (size_t i = 0; i < it->size(); ++i) {
    auto& m = (*it)[i];
    if (!m.is_object()) return InvalidArgument("messages[", i, "] must be an object, got ", m.type_name());
    nlohmann::ordered_json kept = nlohmann::ordered_json::object();
    for (auto f = m.begin(); f != m.end(); ++f)
      if (!f->is_null()) kept[f.key()] = f.value();
    const nlohmann::ordered_json* reasoning = nullptr;
    for (const char* k : {"reasoning_content", "thinking", "reasoning"})
      if (kept.contains(k)) { reasoning = &kept[k]; break; }
    if (reasoning) {
      // {"thinking": r, **message, "reasoning_content": r}: thinking first unless present.
      nlohmann::ordered_json r = *reasoning, out = nlohmann::ordered_json::object();
      out["thinking"] = r;
      for (auto f = kept.begin(); f != kept.end(); ++f) out[f.key()] = f.value();
      out["reasoning_content"] = r;
      kept = std::move(out);
    }
    m = std::move(kept);
  }
  return Status::Ok();
}

Expected<std::string> ChatTemplateFromConfig(std::string_view config_json, std::string_view name,
                                             const std::string& file) {
  nlohmann::ordered_json cfg = nlohmann::ordered_json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (cfg.is_discarded() || !cfg.is_object()) return InvalidFile(file, ": not valid JSON (an object expected)");
  auto it = cfg.find("chat_template");
  if (it == cfg.end() || it->is_null()) return NotFound(file, ": no chat_template");
  std::string want = name.empty() ? "default" : std::string(name);
  if (it->is_string()) {
    if (want != "default") return NotFound(file, ": chat_template is a single template, there is no template named '", want, "'");
    return it->get<std::string>();
  }
  if (!it->is_array()) return InvalidFile(file, ": chat_template must be a string or a list of {name, template}");
  std::string names;
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& e = (*it)[i];
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
      return InvalidFile(file, ": chat_template[", i, "] must be {\"name\": string, \"template\": string}");
    if (e["name"] == want) return e["template"].get<std::string>();
    names += (names.empty() ? "" : ", ") + e["name"].get<std::string>();
  }
  return NotFound(file, ": no chat template named '", want, "' (there are: ", names, ")");
}

}  // namespace oc::llm
