// Tokenizer from a GGUF file's tokenizer.ggml.* metadata: the equivalent
// tokenizer.json (and tokenizer_config.json) is built in memory and loaded by
// Tokenizer::FromJson, so that encoding is the one of Hugging Face tokenizers.
// Supported: tokenizer.ggml.model "gpt2" (byte-level BPE) with
// tokenizer.ggml.pre "default" / "gpt2", "llama-bpe" / "llama3", "qwen2", and
// "llama" (SentencePiece BPE with byte fallback: tokens + scores + types);
// see docs/llm.md ("GGUF").
#include <algorithm>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/model/gguf.h"
#include "llm/tokenizer/tokenizer.h"

namespace oc::llm {

namespace {

using Json = nlohmann::json;

// The pre-tokenizer regexes of the Hugging Face tokenizer.json files of GPT-2,
// Llama 3 and Qwen2.
constexpr const char* kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

Json ByteLevel(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
}

Json SplitThenBytes(const char* regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           Json::array({{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
                        ByteLevel(false)})}};
}

// An array-of-`type` metadata value; errors name the key.
Expected<const Json*> Array(const GgufFile& g, const std::string& key, GgufValueType type, bool required) {
  const GgufValue* v = g.Find(key);
  if (!v) {
    if (required) return InvalidFile(g.path(), ": metadata ", key, " is missing");
    return static_cast<const Json*>(nullptr);
  }
  if (v->type != GgufValueType::kArray || (v->elem_type != type && !v->value.empty()))
    return InvalidFile(g.path(), ": metadata ", key, " is not an array of the expected type");
  return &v->value;
}

Expected<std::optional<int64_t>> TokenId(const GgufFile& g, const std::string& key, size_t vocab) {
  const GgufValue* v = g.Find(key);
  if (!v) return std::optional<int64_t>();
  if (!v->value.is_number_integer() || v->value.get<int64_t>() < 0 || v->value.get<uint64_t>() >= vocab)
    return InvalidFile(g.path(), ": metadata ", key, " is ", v->value.dump(), ", not a token id below ", vocab);
  return std::optional<int64_t>(v->value.get<int64_t>());
}

// SentencePiece BPE merges by score: every split of a token into two tokens
// is a merge, ranked by the merged token's score (best first; then by id, then
// by where it splits), so that BPE over these merges merges, at each step, the
// adjacent pair whose concatenation scores best, as SentencePiece does.
// Control, unknown, unused and byte tokens are neither merged nor parts.
Json MergesFromScores(const Json& tokens, const Json& scores, const Json* types) {
  auto normal = [&](size_t i) {
    const int64_t t = types ? (*types)[i].get<int64_t>() : 1;
    return t == 1 || t == 4;
  };
  std::unordered_map<std::string, size_t> ids;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (normal(i)) ids.emplace(tokens[i].get_ref<const std::string&>(), i);
  struct Merge {
    double score;
    size_t id, split;
  };
  std::vector<Merge> m;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!normal(i)) continue;
    const std::string& t = tokens[i].get_ref<const std::string&>();
    for (size_t k = 1; k < t.size(); ++k) {
      if ((static_cast<uint8_t>(t[k]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
      if (ids.count(t.substr(0, k)) && ids.count(t.substr(k)))
        m.push_back({scores[i].is_number() ? scores[i].get<double>() : 0.0, i, k});
    }
  }
  std::stable_sort(m.begin(), m.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.id != b.id) return a.id < b.id;
    return a.split < b.split;
  });
  Json out = Json::array();
  for (const Merge& x : m) {
    const std::string& t = tokens[x.id].get_ref<const std::string&>();
    out.push_back(Json::array({t.substr(0, x.split), t.substr(x.split)}));
  }
  return out;
}

}  // namespace

Expected<Tokenizer> Tokenizer::FromGguf(const std::string& path) {
  OC_ASSIGN_OR_RETURN(auto g, GgufFile::Open(path));
  const GgufValue* model = g->Find("tokenizer.ggml.model");
  if (!model || !model->value.is_string()) return InvalidFile(path, ": metadata tokenizer.ggml.model is missing");
  const std::string kind = model->value.get<std::string>();
  if (kind != "gpt2" && kind != "llama")
    return NotSupported(path, ": tokenizer.ggml.model \"", kind,
                        "\" is not supported (gpt2: byte-level BPE, llama: SentencePiece BPE)");
  const bool spm = kind == "llama";
  OC_ASSIGN_OR_RETURN(const Json* tokens, Array(*g, "tokenizer.ggml.tokens", GgufValueType::kString, true));
  OC_ASSIGN_OR_RETURN(const Json* types, Array(*g, "tokenizer.ggml.token_type", GgufValueType::kI32, false));
  if (types && types->size() != tokens->size())
    return InvalidFile(path, ": tokenizer.ggml.token_type has ", types->size(), " entries for ", tokens->size(),
                       " tokens");
  for (const auto& t : *tokens)
    if (!t.is_string()) return InvalidFile(path, ": tokenizer.ggml.tokens holds a non-string");
  Json spm_merges;
  const Json* merges = nullptr;
  if (spm) {
    OC_ASSIGN_OR_RETURN(const Json* scores, Array(*g, "tokenizer.ggml.scores", GgufValueType::kF32, true));
    if (scores->size() != tokens->size())
      return InvalidFile(path, ": tokenizer.ggml.scores has ", scores->size(), " entries for ", tokens->size(),
                         " tokens");
    spm_merges = MergesFromScores(*tokens, *scores, types);
    merges = &spm_merges;
  } else {
    OC_ASSIGN_OR_RETURN(merges, Array(*g, "tokenizer.ggml.merges", GgufValueType::kString, true));
  }
  std::string pre = spm ? "" : "default";
  if (const GgufValue* p = g->Find("tokenizer.ggml.pre"); p && p->value.is_string()) pre = p->value.get<std::string>();
  Json pre_tok;
  bool ignore_merges = false;
  if (spm) {
    // SentencePiece: no pre-tokenizer; spaces become U+2581 in the normalizer.
  } else if (pre == "default" || pre == "gpt2" || pre == "gpt-2") {
    pre_tok = ByteLevel(true);
  } else if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") {
    pre_tok = SplitThenBytes(kLlama3Regex);
    ignore_merges = true;  // as Llama 3's tokenizer.json
  } else if (pre == "qwen2") {
    pre_tok = SplitThenBytes(kQwen2Regex);
  } else {
    return NotSupported(path, ": tokenizer.ggml.pre \"", pre,
                        "\" is not supported (default, gpt-2, llama-bpe, llama3, llama-v3, qwen2)");
  }

  Json vocab = Json::object(), added = Json::array();
  for (size_t i = 0; i < tokens->size(); ++i) {
    const std::string& t = (*tokens)[i].get_ref<const std::string&>();
    if (vocab.contains(t)) continue;  // the first id wins, as in tokenizers
    vocab[t] = i;
    // token_type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    const int64_t type = types ? (*types)[i].get<int64_t>() : 1;
    if (type == 3 || type == 4)
      added.push_back({{"id", i}, {"content", t}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                       {"normalized", type == 4}, {"special", type == 3}});
  }
  OC_ASSIGN_OR_RETURN(auto bos, TokenId(*g, "tokenizer.ggml.bos_token_id", tokens->size()));
  OC_ASSIGN_OR_RETURN(auto eos, TokenId(*g, "tokenizer.ggml.eos_token_id", tokens->size()));
  auto flag = [&](const char* key) {
    const GgufValue* v = g->Find(key);
    return v && v->value.is_boolean() && v->value.get<bool>();
  };
  const bool add_bos = flag("tokenizer.ggml.add_bos_token") && bos.has_value();
  const bool add_eos = flag("tokenizer.ggml.add_eos_token") && eos.has_value();

  Json post = nullptr;
  if (add_bos || add_eos) {
    Json special = Json::object();
    auto tok = [&](int64_t id, int type_id) {
      const std::string& t = (*tokens)[static_cast<size_t>(id)].get_ref<const std::string&>();
      special[t] = {{"id", t}, {"ids", {id}}, {"tokens", {t}}};
      return Json{{"SpecialToken", {{"id", t}, {"type_id", type_id}}}};
    };
    auto seq = [&](const char* id, int type_id, Json& out) {
      if (add_bos) out.push_back(tok(*bos, type_id));
      out.push_back({{"Sequence", {{"id", id}, {"type_id", type_id}}}});
      if (add_eos) out.push_back(tok(*eos, type_id));
    };
    Json single = Json::array(), pair = Json::array();
    seq("A", 0, single);
    seq("A", 0, pair);
    seq("B", 1, pair);
    post = {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", special}};
  }
  Json normalizer = nullptr, decoder = ByteLevel(true), unk = nullptr;
  if (spm) {
    // As Hugging Face's Llama 2 tokenizer.json: "▁" prefix (tokenizer.ggml.add_space_prefix,
    // default true), spaces as "▁", byte fallback; the decoder undoes both.
    const GgufValue* sp = g->Find("tokenizer.ggml.add_space_prefix");
    const bool prefix = !(sp && sp->value.is_boolean() && !sp->value.get<bool>());
    const std::string ws = "\xE2\x96\x81";  // U+2581
    Json norms = Json::array();
    if (prefix) norms.push_back({{"type", "Prepend"}, {"prepend", ws}});
    norms.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", ws}});
    normalizer = {{"type", "Sequence"}, {"normalizers", norms}};
    Json decs = Json::array({{{"type", "Replace"}, {"pattern", {{"String", ws}}}, {"content", " "}},
                             {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    if (prefix) decs.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    decoder = {{"type", "Sequence"}, {"decoders", decs}};
    for (size_t i = 0; types && i < types->size(); ++i)
      if ((*types)[i].get<int64_t>() == 2) {
        unk = (*tokens)[i];
        break;
      }
  }
  Json tj = {{"version", "1.0"},
             {"truncation", nullptr},
             {"padding", nullptr},
             {"added_tokens", added},
             {"normalizer", normalizer},
             {"pre_tokenizer", pre_tok},
             {"post_processor", post},
             {"decoder", decoder},
             {"model",
              {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", unk}, {"continuing_subword_prefix", nullptr},
               {"end_of_word_suffix", nullptr}, {"fuse_unk", spm}, {"byte_fallback", spm},
               {"ignore_merges", ignore_merges}, {"vocab", vocab}, {"merges", *merges}}}};
  Json cfg = Json::object();
  if (bos) cfg["bos_token"] = (*tokens)[static_cast<size_t>(*bos)];
  if (eos) cfg["eos_token"] = (*tokens)[static_cast<size_t>(*eos)];
  cfg["add_bos_token"] = add_bos;
  cfg["add_eos_token"] = add_eos;
  if (const GgufValue* ct = g->Find("tokenizer.chat_template"); ct && ct->value.is_string())
    cfg["chat_template"] = ct->value;
  const auto replace = Json::error_handler_t::replace;  // GGUF strings need not be UTF-8
  return FromJson(tj.dump(-1, ' ', false, replace), cfg.dump(-1, ' ', false, replace), path);
}

}  // namespace oc::llm
