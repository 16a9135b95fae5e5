#include "llm/tokenizer/decoder.h"

#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/pattern.h"
#include "llm/tokenizer/unicode.h"

namespace oc::llm {
namespace {

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (auto& s : steps_) s->DecodeChain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

// Byte-level code points back to bytes; a token with any other code point
// (an added token such as "<|endoftext|>") keeps its own bytes. The bytes of
// all tokens are joined into one string, invalid UTF-8 replaced by U+FFFD.
class ByteLevelDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    std::string token_bytes;
    for (const std::string& t : tokens) {
      token_bytes.clear();
      bool all = true;
      for (size_t i = 0; i < t.size() && all;) {
        int b = CharToByte(NextCodePoint(t, i));
        if (b < 0)
          all = false;
        else
          token_bytes += static_cast<char>(b);
      }
      bytes += all ? token_bytes : t;
    }
    tokens.assign(1, Utf8Lossy(bytes));
  }
};

// Runs of <0xNN> tokens become their bytes when those are valid UTF-8, one
// U+FFFD per byte otherwise.
class ByteFallbackDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (IsValidUtf8(pending)) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      pending.clear();
    };
    for (std::string& t : tokens) {
      int byte = ParseByteToken(t);
      if (byte >= 0) {
        pending += static_cast<char>(byte);
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }

 private:
  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // "<0xNN>" -> NN, else -1 (Rust's from_str_radix also takes "+N").
  static int ParseByteToken(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    if (t[3] == '+') return Hex(t[4]);
    int hi = Hex(t[3]), lo = Hex(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
  }
};

class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

// Strips up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop) : content_(content), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<size_t> offsets;  // byte offset of each code point, then the end
      for (size_t i = 0; i < t.size();) {
        offsets.push_back(i);
        NextCodePoint(t, i);
      }
      size_t n = offsets.size();
      offsets.push_back(t.size());
      auto at = [&](size_t k) {
        size_t i = offsets[k];
        return NextCodePoint(t, i);
      };
      size_t start_cut = 0;
      for (size_t k = 0; k < start_ && k < n && at(k) == content_; ++k) start_cut = k + 1;
      size_t stop_cut = n;
      for (size_t k = 0; k < stop_ && k < n && at(n - k - 1) == content_; ++k) stop_cut = n - k - 1;
      if (stop_cut < start_cut) stop_cut = start_cut;
      t = t.substr(offsets[start_cut], offsets[stop_cut] - offsets[start_cut]);
    }
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::string out;
      for (const MatchSpan& m : pattern_.FindMatches(t)) {
        if (m.is_match)
          out += content_;
        else
          out.append(t, m.begin, m.end - m.begin);
      }
      t = std::move(out);
    }
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// The replacement character becomes a space, except in the first token when
// the pre-tokenizer prepended one (every occurrence there is dropped, as in
// Hugging Face).
class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool drop_first)
      : replacement_(std::move(replacement)), drop_first_(drop_first) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string& t = tokens[k];
      std::string out;
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, replacement_.size(), replacement_) == 0) {
          if (!(k == 0 && drop_first_)) out += ' ';
          i += replacement_.size();
        } else {
          out += t[i++];
        }
      }
      t = std::move(out);
    }
  }

 private:
  std::string replacement_;
  bool drop_first_;
};

}  // namespace

Expected<std::unique_ptr<Decoder>> MakeDecoder(const Json& spec, const JsonPath& at) {
  using Ptr = std::unique_ptr<Decoder>;
  if (spec.is_null()) return Ptr();
  OC_ASSIGN_OR_RETURN(std::string type, TypeOf(spec, at));
  if (type == "Sequence") {
    OC_ASSIGN_OR_RETURN(const Json* list, RequireField(spec, "decoders", at));
    if (!list->is_array()) return InvalidFile(at.Key("decoders").Name(), ": expected an array");
    std::vector<Ptr> steps;
    for (size_t i = 0; i < list->size(); ++i) {
      OC_ASSIGN_OR_RETURN(Ptr step, MakeDecoder((*list)[i], at.Key("decoders").Index(i)));
      if (step) steps.push_back(std::move(step));
    }
    return Ptr(std::make_unique<SequenceDecoder>(std::move(steps)));
  }
  if (type == "ByteLevel") return Ptr(std::make_unique<ByteLevelDecoder>());
  if (type == "ByteFallback") return Ptr(std::make_unique<ByteFallbackDecoder>());
  if (type == "Fuse") return Ptr(std::make_unique<FuseDecoder>());
  if (type == "Strip") {
    OC_ASSIGN_OR_RETURN(std::string content, RequireString(spec, "content", at));
    size_t i = 0;
    char32_t c = content.empty() ? 0 : NextCodePoint(content, i);
    if (content.empty() || i != content.size())
      return InvalidFile(at.Key("content").Name(), ": expected one character, got '", content, "'");
    OC_ASSIGN_OR_RETURN(int64_t start, RequireInt(spec, "start", at));
    OC_ASSIGN_OR_RETURN(int64_t stop, RequireInt(spec, "stop", at));
    if (start < 0 || stop < 0) return InvalidFile(at.Name(), ": start and stop must be >= 0");
    return Ptr(std::make_unique<StripDecoder>(c, static_cast<size_t>(start), static_cast<size_t>(stop)));
  }
  if (type == "Replace") {
    OC_ASSIGN_OR_RETURN(const Json* pattern, RequireField(spec, "pattern", at));
    OC_ASSIGN_OR_RETURN(Pattern p, ParsePattern(*pattern, at.Key("pattern")));
    OC_ASSIGN_OR_RETURN(std::string content, RequireString(spec, "content", at));
    return Ptr(std::make_unique<ReplaceDecoder>(std::move(p), std::move(content)));
  }
  if (type == "Metaspace") {
    std::string replacement = "\xE2\x96\x81";
    if (const Json* r = OptionalField(spec, "replacement")) {
      if (!r->is_string() || r->get<std::string>().empty())
        return InvalidFile(at.Key("replacement").Name(), ": expected a one-character string");
      replacement = r->get<std::string>();
    }
    bool drop_first = true;
    if (const Json* ps = OptionalField(spec, "prepend_scheme")) {
      drop_first = !(ps->is_string() && ps->get<std::string>() == "never");
    } else {
      OC_ASSIGN_OR_RETURN(drop_first, OptionalBool(spec, "add_prefix_space", true, at));
    }
    return Ptr(std::make_unique<MetaspaceDecoder>(std::move(replacement), drop_first));
  }
  return NotSupported(at.Name(), ": decoder type '", type,
                      "' is not supported (supported: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, "
                      "Sequence)");
}

}  // namespace oc::llm
