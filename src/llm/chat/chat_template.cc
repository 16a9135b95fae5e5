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
