#include "llm/tokenizer/tokenizer.h"

#include <filesystem>
#include <vector>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "llm/tokenizer/added_tokens.h"
#include "llm/tokenizer/bpe.h"
#include "llm/tokenizer/decoder.h"
#include "llm/tokenizer/json_fields.h"
#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/post_processor.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/unicode.h"

namespace oc::llm {

struct Tokenizer::Impl {
  std::unique_ptr<Bpe> model;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Decoder> decoder;
  PostProcessor post;
  std::vector<AddedToken> added;  // stable: the matchers point into it
  std::unordered_map<int32_t, size_t> added_by_id;
  Vocab added_by_content;
  AddedTokenMatcher raw_matcher, normalized_matcher;
  std::optional<int32_t> bos, eos;
  bool add_bos = false, add_eos = false;
  std::string chat_template;  // tokenizer_config.json's chat_template when it is one string
  size_t vocab_size = 0;

  void EncodeText(std::string_view text, bool at_origin, std::vector<int32_t>& ids) const;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

static Expected<Json> ParseJson(std::string_view text, const std::string& name) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Parse again with positions for the message (exceptions stay inside this function).
    try {
      Json again = Json::parse(text.begin(), text.end());
      (void)again;
    } catch (const Json::exception& e) {
      return InvalidFile(name, ": not valid JSON (", e.what(), ")");
    }
    return InvalidFile(name, ": not valid JSON");
  }
  return j;
}

// bos_token / eos_token: a string or {"content": ...}.
static Expected<std::optional<std::string>> ConfigToken(const Json& config, const std::string& key,
                                                        const JsonPath& at) {
  const Json* v = OptionalField(config, key);
  if (!v) return std::optional<std::string>();
  if (v->is_string()) return std::optional<std::string>(v->get<std::string>());
  if (v->is_object()) {
    OC_ASSIGN_OR_RETURN(std::string content, RequireString(*v, "content", at.Key(key)));
    return std::optional<std::string>(content);
  }
  return InvalidFile(at.Key(key).Name(), ": expected a string or {\"content\": ...}, got ", v->type_name());
}

static Status LoadAddedTokens(const Json& root, const JsonPath& top, Tokenizer::Impl& t) {
  const Json* list = OptionalField(root, "added_tokens");
  if (!list) return Status::Ok();
  JsonPath at = top.Key("added_tokens");
  if (!list->is_array()) return InvalidFile(at.Name(), ": expected an array");
  t.added.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& e = (*list)[i];
    JsonPath p = at.Index(i);
    AddedToken tok;
    OC_ASSIGN_OR_RETURN(tok.content, RequireString(e, "content", p));
    OC_ASSIGN_OR_RETURN(int64_t id, RequireInt(e, "id", p));
    if (id < 0 || id > INT32_MAX / 2) return InvalidFile(p.Key("id").Name(), ": ", id, " is not a valid token id");
    OC_ASSIGN_OR_RETURN(tok.special, OptionalBool(e, "special", false, p));
    OC_ASSIGN_OR_RETURN(tok.single_word, OptionalBool(e, "single_word", false, p));
    OC_ASSIGN_OR_RETURN(tok.lstrip, OptionalBool(e, "lstrip", false, p));
    OC_ASSIGN_OR_RETURN(tok.rstrip, OptionalBool(e, "rstrip", false, p));
    OC_ASSIGN_OR_RETURN(tok.normalized, OptionalBool(e, "normalized", !tok.special, p));
    // Hugging Face keeps the model's id for a token its vocabulary already has.
    auto in_model = t.model->vocab().find(tok.content);
    tok.id = in_model != t.model->vocab().end() ? in_model->second : static_cast<int32_t>(id);
    // A normalized token is known by its normalized form from then on: it is
    // matched in normalized text, and Decode and IdToToken give that form, as
    // Hugging Face does.
    if (tok.normalized && t.normalizer) t.normalizer->Normalize(tok.content);
    if (!t.added_by_content.emplace(tok.content, tok.id).second) continue;  // a repeat changes nothing
    t.added.push_back(std::move(tok));
  }
  for (size_t i = 0; i < t.added.size(); ++i) {
    const AddedToken& tok = t.added[i];
    t.added_by_id[tok.id] = i;
    if (tok.normalized) {
      t.normalized_matcher.Add(tok.content, &tok);
    } else {
      t.raw_matcher.Add(tok.content, &tok);
    }
  }
  return Status::Ok();
}

Expected<Tokenizer> Tokenizer::FromJson(std::string_view tokenizer_json, std::string_view config_json,
                                        const std::string& name) {
  OC_ASSIGN_OR_RETURN(Json root, ParseJson(tokenizer_json, name));
  JsonPath top{name, ""};
  if (!root.is_object()) return InvalidFile(name, ": expected a JSON object at the top level");
  auto impl = std::make_unique<Impl>();

  OC_ASSIGN_OR_RETURN(const Json* model, RequireField(root, "model", top));
  JsonPath mpath = top.Key("model");
  // Old files leave out the model's type; a BPE model is known by its merges.
  std::string type = "BPE";
  if (const Json* ty = OptionalField(*model, "type")) {
    if (!ty->is_string()) return InvalidFile(mpath.Key("type").Name(), ": expected a string");
    type = ty->get<std::string>();
  } else if (!OptionalField(*model, "merges")) {
    return InvalidFile(mpath.Key("type").Name(), ": missing field (and no merges to recognise a BPE model by)");
  }
  if (type != "BPE")
    return NotSupported(mpath.Key("type").Name(), ": model type '", type,
                        "' is not supported (only BPE is; WordPiece, Unigram and WordLevel are not yet)");
  OC_ASSIGN_OR_RETURN(impl->model, Bpe::FromJson(*model, mpath));

  static const Json kNull;
  auto field = [&](const char* key) -> const Json& {
    const Json* v = OptionalField(root, key);
    return v ? *v : kNull;
  };
  OC_ASSIGN_OR_RETURN(impl->normalizer, MakeNormalizer(field("normalizer"), top.Key("normalizer")));
  OC_ASSIGN_OR_RETURN(impl->pre_tokenizer, MakePreTokenizer(field("pre_tokenizer"), top.Key("pre_tokenizer")));
  OC_ASSIGN_OR_RETURN(impl->decoder, MakeDecoder(field("decoder"), top.Key("decoder")));
  OC_ASSIGN_OR_RETURN(impl->post, MakePostProcessor(field("post_processor"), top.Key("post_processor")));
  if (const Json* trunc = OptionalField(root, "truncation"))
    return NotSupported(top.Key("truncation").Name(), ": truncation ", trunc->dump(),
                        " is not supported (expected null)");
  if (const Json* pad = OptionalField(root, "padding"))
    return NotSupported(top.Key("padding").Name(), ": padding ", pad->dump(), " is not supported (expected null)");
  OC_RETURN_IF_ERROR(LoadAddedTokens(root, top, *impl));

  impl->vocab_size = impl->model->tokens().size();
  for (const AddedToken& t : impl->added) impl->vocab_size = std::max(impl->vocab_size, static_cast<size_t>(t.id) + 1);
  for (int32_t id : impl->post.before)
    if (static_cast<size_t>(id) >= impl->vocab_size)
      return InvalidFile(top.Key("post_processor").Name(), ": special token id ", id,
                         " is outside the vocabulary (size ", impl->vocab_size, ")");
  for (int32_t id : impl->post.after)
    if (static_cast<size_t>(id) >= impl->vocab_size)
      return InvalidFile(top.Key("post_processor").Name(), ": special token id ", id,
                         " is outside the vocabulary (size ", impl->vocab_size, ")");

  Tokenizer tok(std::move(impl));
  if (!tok.impl_->post.before.empty()) tok.impl_->bos = tok.impl_->post.before.front();
  if (!config_json.empty()) {
    std::string cname = (std::filesystem::path(name).parent_path() / "tokenizer_config.json").string();
    OC_ASSIGN_OR_RETURN(Json config, ParseJson(config_json, cname));
    JsonPath cpath{cname, ""};
    if (!config.is_object()) return InvalidFile(cname, ": expected a JSON object at the top level");
    for (auto [key, slot] : {std::pair{"bos_token", &tok.impl_->bos}, std::pair{"eos_token", &tok.impl_->eos}}) {
      OC_ASSIGN_OR_RETURN(auto content, ConfigToken(config, key, cpath));
      if (!content) continue;
      auto id = tok.TokenToId(*content);
      if (!id) return InvalidFile(cpath.Key(key).Name(), ": '", *content, "' is not a token of ", name);
      *slot = id;
    }
    OC_ASSIGN_OR_RETURN(tok.impl_->add_bos, OptionalBool(config, "add_bos_token", false, cpath));
    OC_ASSIGN_OR_RETURN(tok.impl_->add_eos, OptionalBool(config, "add_eos_token", false, cpath));
    if (config.contains("chat_template") && config["chat_template"].is_string())
      tok.impl_->chat_template = config["chat_template"].get<std::string>();
  }
  return tok;
}

static Expected<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path.string(), ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path.string(), ": read failed");
  return ss.str();
}

Expected<Tokenizer> Tokenizer::Load(const std::string& folder_or_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path(folder_or_file);
  if (fs::is_regular_file(path, ec) && path.extension() == ".gguf") return FromGguf(path.string());
  if (fs::is_directory(path, ec)) {
    if (!fs::exists(path / "tokenizer.json", ec)) {
      std::vector<fs::path> ggufs;
      for (const auto& e : fs::directory_iterator(path, ec))
        if (e.is_regular_file() && e.path().extension() == ".gguf") ggufs.push_back(e.path());
      if (ggufs.size() == 1) return FromGguf(ggufs[0].string());
    }
    path /= "tokenizer.json";
  }
  if (!fs::exists(path, ec))
    return NotFound(path.string(), ": no such file (expected a tokenizer.json or a folder holding one)");
  OC_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::string config;
  fs::path config_path = path.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path, ec)) {
    OC_ASSIGN_OR_RETURN(config, ReadFile(config_path));
  }
  return FromJson(text, config, path.string());
}

void Tokenizer::Impl::EncodeText(std::string_view text, bool at_origin, std::vector<int32_t>& ids) const {
  std::string normalized(text);
  if (normalizer) normalizer->Normalize(normalized);
  std::vector<AddedSplit> splits = normalized_matcher.empty() ? std::vector<AddedSplit>{{0, normalized.size(), -1}}
                                                              : normalized_matcher.Split(normalized);
  std::vector<Piece> pieces;
  for (const AddedSplit& s : splits) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    pieces.clear();
    pieces.push_back({normalized.substr(s.begin, s.end - s.begin), at_origin && s.begin == 0});
    if (pre_tokenizer) pre_tokenizer->PreTokenize(pieces);
    for (const Piece& p : pieces) model->Tokenize(p.text, ids);
  }
}

std::vector<int32_t> Tokenizer::Encode(std::string_view input, bool add_special_tokens) const {
  const Impl& t = *impl_;
  std::string text = Utf8Lossy(input);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 8);
  if (add_special_tokens) ids.insert(ids.end(), t.post.before.begin(), t.post.before.end());
  if (t.raw_matcher.empty()) {
    t.EncodeText(text, true, ids);
  } else {
    for (const AddedSplit& s : t.raw_matcher.Split(text)) {
      if (s.id >= 0)
        ids.push_back(s.id);
      else
        t.EncodeText(std::string_view(text).substr(s.begin, s.end - s.begin), s.begin == 0, ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), t.post.after.begin(), t.post.after.end());
  return ids;
}

Expected<std::string> Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  const Impl& t = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    auto added = t.added_by_id.find(id);
    if (added != t.added_by_id.end()) {
      const AddedToken& tok = t.added[added->second];
      if (!(skip_special_tokens && tok.special)) tokens.push_back(tok.content);
      continue;
    }
    if (id < 0 || static_cast<size_t>(id) >= t.model->tokens().size() || t.model->tokens()[id].empty())
      return OutOfRange("Decode: id ", id, " at position ", i, " is not in the vocabulary (size ", t.vocab_size, ")");
    tokens.push_back(t.model->tokens()[id]);
  }
  if (!t.decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  t.decoder->DecodeChain(tokens);
  std::string out;
  for (auto& s : tokens) out += s;
  return out;
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  auto a = impl_->added_by_content.find(token);
  if (a != impl_->added_by_content.end()) return a->second;
  auto m = impl_->model->vocab().find(token);
  if (m != impl_->model->vocab().end()) return m->second;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::IdToToken(int32_t id) const {
  auto a = impl_->added_by_id.find(id);
  if (a != impl_->added_by_id.end()) return impl_->added[a->second].content;
  const auto& tokens = impl_->model->tokens();
  if (id >= 0 && static_cast<size_t>(id) < tokens.size() && !tokens[id].empty()) return tokens[id];
  return std::nullopt;
}

bool Tokenizer::IsSpecial(int32_t id) const {
  auto a = impl_->added_by_id.find(id);
  return a != impl_->added_by_id.end() && impl_->added[a->second].special;
}

std::optional<int32_t> Tokenizer::bos_id() const { return impl_->bos; }
std::optional<int32_t> Tokenizer::eos_id() const { return impl_->eos; }
bool Tokenizer::add_bos_token() const { return impl_->add_bos; }
bool Tokenizer::add_eos_token() const { return impl_->add_eos; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }
size_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

}  // namespace oc::llm
