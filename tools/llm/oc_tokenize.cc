// oc-tokenize: encode and decode with a Hugging Face tokenizer.json, one JSON
// value per line (docs/llm.md).
//
//   oc-tokenize --tokenizer PATH encode [--no-special]   JSON strings in, JSON arrays of ids out
//   oc-tokenize --tokenizer PATH decode [--skip-special] JSON arrays of ids in, JSON strings out
//   oc-tokenize --tokenizer PATH info                    vocab size, bos and eos ids (and the chat template) as JSON
//
// Errors go to stderr with exit status 1 (2 for a bad command line).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/tokenizer/tokenizer.h"

namespace {

using Json = nlohmann::json;

int Usage(const std::string& why) {
  std::cerr << "oc-tokenize: " << why << "\n"
            << "usage: oc-tokenize --tokenizer PATH encode [--no-special]\n"
            << "       oc-tokenize --tokenizer PATH decode [--skip-special]\n"
            << "       oc-tokenize --tokenizer PATH info\n";
  return 2;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

int Encode(const oc::llm::Tokenizer& tok, bool special) {
  std::string line;
  for (size_t n = 1; std::getline(std::cin, line); ++n) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_string()) {
      std::cerr << "oc-tokenize: stdin line " << n << ": expected a JSON string\n";
      return 1;
    }
    std::vector<int32_t> ids = tok.Encode(j.get_ref<const std::string&>(), special);
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(ids[i]);
    }
    out += "]\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}

int Decode(const oc::llm::Tokenizer& tok, bool skip_special) {
  std::string line;
  for (size_t n = 1; std::getline(std::cin, line); ++n) {
    Json j = Json::parse(line, nullptr, false);
    std::vector<int32_t> ids;
    bool ok = j.is_array();
    for (size_t i = 0; ok && i < j.size(); ++i) {
      ok = j[i].is_number_integer() && j[i].get<int64_t>() >= INT32_MIN && j[i].get<int64_t>() <= INT32_MAX;
      if (ok) ids.push_back(static_cast<int32_t>(j[i].get<int64_t>()));
    }
    if (!ok) {
      std::cerr << "oc-tokenize: stdin line " << n << ": expected a JSON array of integer ids\n";
      return 1;
    }
    auto text = tok.Decode(ids, skip_special);
    if (!text.ok()) {
      std::cerr << "oc-tokenize: stdin line " << n << ": " << text.status().message() << "\n";
      return 1;
    }
    std::string out = Dump(Json(*text)) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, command;
  bool no_special = false, skip_special = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tokenizer" && i + 1 < argc) {
      path = argv[++i];
    } else if (a.rfind("--tokenizer=", 0) == 0) {
      path = a.substr(12);
    } else if (a == "--no-special") {
      no_special = true;
    } else if (a == "--skip-special") {
      skip_special = true;
    } else if (command.empty() && (a == "encode" || a == "decode" || a == "info")) {
      command = a;
    } else {
      return Usage("unknown argument '" + a + "'");
    }
  }
  if (path.empty()) return Usage("--tokenizer PATH is required");
  if (command.empty()) return Usage("a command (encode, decode or info) is required");
  auto tok = oc::llm::Tokenizer::Load(path);
  if (!tok.ok()) {
    std::cerr << "oc-tokenize: " << tok.status().ToString() << "\n";
    return 1;
  }
  std::ios::sync_with_stdio(false);
  if (command == "encode") return Encode(*tok, !no_special);
  if (command == "decode") return Decode(*tok, skip_special);
  Json info = {{"vocab_size", tok->vocab_size()},
               {"bos_id", tok->bos_id() ? Json(*tok->bos_id()) : Json()},
               {"eos_id", tok->eos_id() ? Json(*tok->eos_id()) : Json()},
               {"add_bos_token", tok->add_bos_token()},
               {"add_eos_token", tok->add_eos_token()}};
  if (!tok->chat_template().empty()) info["chat_template"] = tok->chat_template();
  std::cout << Dump(info) << "\n";
  return 0;
}
