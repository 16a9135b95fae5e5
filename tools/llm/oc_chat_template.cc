// oc-chat-template: renders a tokenizer_config.json's chat template over a
// JSON context read from stdin, as transformers' apply_chat_template(...,
// tokenize=False) does. The config's bos_token, eos_token, unk_token and
// pad_token are passed unless the context sets them; messages are normalized
// as transformers does (NormalizeChatMessages). Errors: exit 1.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "llm/chat/chat_template.h"

namespace {

int Fail(const std::string& m) {
  std::fprintf(stderr, "oc-chat-template: %s\n", m.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path, name;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tokenizer-config" && i + 1 < argc) config_path = argv[++i];
    else if (a == "--template" && i + 1 < argc) name = argv[++i];
    else if (a == "--help" || a == "-h") {
      std::printf("usage: oc-chat-template --tokenizer-config FILE [--template NAME] < context.json\n");
      return 0;
    } else return Fail("unknown argument '" + a + "' (usage: --tokenizer-config FILE [--template NAME])");
  }
  if (config_path.empty()) return Fail("--tokenizer-config FILE is required");
  std::ifstream f(config_path, std::ios::binary);
  if (!f) return Fail(config_path + ": no such file or not readable");
  std::string config((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto source = oc::llm::ChatTemplateFromConfig(config, name, config_path);
  if (!source.ok()) return Fail(source.status().message());
  auto tmpl = oc::llm::ChatTemplate::Parse(*source);
  if (!tmpl.ok()) return Fail(tmpl.status().message());
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto ctx = nlohmann::ordered_json::parse(input, nullptr, false);
  if (ctx.is_discarded() || !ctx.is_object()) return Fail("stdin: the context must be one JSON object");
  auto cfg = nlohmann::ordered_json::parse(config, nullptr, false);
  for (const char* tok : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (ctx.contains(tok) || !cfg.contains(tok)) continue;
    const auto& v = cfg[tok];
    if (v.is_string()) ctx[tok] = v;
    else if (v.is_object() && v.contains("content") && v["content"].is_string()) ctx[tok] = v["content"];
  }
  if (auto st = oc::llm::NormalizeChatMessages(&ctx); !st.ok()) return Fail("stdin: " + st.message());
  auto out = tmpl->Render(ctx);
  if (!out.ok()) return Fail(out.status().message());
  std::fwrite(out->data(), 1, out->size(), stdout);
  return 0;
}
