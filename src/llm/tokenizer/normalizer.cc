#include "llm/tokenizer/normalizer.h"

#include <vector>

#include "llm/tokenizer/pattern.h"
#include "llm/tokenizer/unicode.h"

namespace oc::llm {
namespace {

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void Normalize(std::string& text) const override {
    for (auto& s : steps_) s->Normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

class FormNormalizer : public Normalizer {
 public:
  explicit FormNormalizer(NormalForm form) : form_(form) {}
  void Normalize(std::string& text) const override { text = oc::llm::Normalize(text, form_); }

 private:
  NormalForm form_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void Normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);  // an empty text stays empty
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void Normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    for (const MatchSpan& m : pattern_.FindMatches(text)) {
      if (m.is_match)
        out += content_;
      else
        out.append(text, m.begin, m.end - m.begin);
    }
    text = std::move(out);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  void Normalize(std::string& text) const override { text = Lowercase(text); }
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void Normalize(std::string& text) const override {
    size_t b = 0, e = text.size();
    if (left_) {
      while (b < e) {
        size_t i = b;
        if (!IsWhitespace(NextCodePoint(text, i))) break;
        b = i;
      }
    }
    if (right_) {
      while (e > b) {
        size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t i = start;
        if (!IsWhitespace(NextCodePoint(text, i))) break;
        e = start;
      }
    }
    text = text.substr(b, e - b);
  }

 private:
  bool left_, right_;
};

class StripAccentsNormalizer : public Normalizer {
 public:
  void Normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      size_t b = i;
      char32_t c = NextCodePoint(text, i);
      if (!IsCombiningMark(c)) out.append(text, b, i - b);
    }
    text = std::move(out);
  }
};

class ByteLevelNormalizer : public Normalizer {
 public:
  void Normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size() * 2);
    for (unsigned char b : text) AppendUtf8(out, ByteToChar(b));
    text = std::move(out);
  }
};

}  // namespace

Expected<Pattern> ParsePattern(const Json& spec, const JsonPath& at) {
  Pattern p;
  if (spec.is_object() && spec.size() == 1 && spec.begin().value().is_string()) {
    const std::string& kind = spec.begin().key();
    std::string value = spec.begin().value().get<std::string>();
    if (kind == "String") {
      p.literal = std::move(value);
      return p;
    }
    if (kind == "Regex") {
      OC_ASSIGN_OR_RETURN(p.regex, Regex::Compile(value, at.Name()));
      return p;
    }
  }
  return InvalidFile(at.Name(), ": expected {\"String\": ...} or {\"Regex\": ...}, got ", spec.dump());
}

Expected<std::unique_ptr<Normalizer>> MakeNormalizer(const Json& spec, const JsonPath& at) {
  if (spec.is_null()) return std::unique_ptr<Normalizer>();
  OC_ASSIGN_OR_RETURN(std::string type, TypeOf(spec, at));
  if (type == "Sequence") {
    OC_ASSIGN_OR_RETURN(const Json* list, RequireField(spec, "normalizers", at));
    if (!list->is_array()) return InvalidFile(at.Key("normalizers").Name(), ": expected an array");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (size_t i = 0; i < list->size(); ++i) {
      OC_ASSIGN_OR_RETURN(auto step, MakeNormalizer((*list)[i], at.Key("normalizers").Index(i)));
      if (step) steps.push_back(std::move(step));
    }
    return std::unique_ptr<Normalizer>(std::make_unique<SequenceNormalizer>(std::move(steps)));
  }
  if (type == "NFC") return std::unique_ptr<Normalizer>(std::make_unique<FormNormalizer>(NormalForm::kNfc));
  if (type == "NFD") return std::unique_ptr<Normalizer>(std::make_unique<FormNormalizer>(NormalForm::kNfd));
  if (type == "NFKC") return std::unique_ptr<Normalizer>(std::make_unique<FormNormalizer>(NormalForm::kNfkc));
  if (type == "NFKD") return std::unique_ptr<Normalizer>(std::make_unique<FormNormalizer>(NormalForm::kNfkd));
  if (type == "Prepend") {
    OC_ASSIGN_OR_RETURN(std::string prefix, RequireString(spec, "prepend", at));
    return std::unique_ptr<Normalizer>(std::make_unique<PrependNormalizer>(std::move(prefix)));
  }
  if (type == "Replace") {
    OC_ASSIGN_OR_RETURN(const Json* pattern, RequireField(spec, "pattern", at));
    OC_ASSIGN_OR_RETURN(Pattern p, ParsePattern(*pattern, at.Key("pattern")));
    OC_ASSIGN_OR_RETURN(std::string content, RequireString(spec, "content", at));
    return std::unique_ptr<Normalizer>(std::make_unique<ReplaceNormalizer>(std::move(p), std::move(content)));
  }
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(std::make_unique<LowercaseNormalizer>());
  if (type == "Strip") {
    OC_ASSIGN_OR_RETURN(bool left, OptionalBool(spec, "strip_left", true, at));
    OC_ASSIGN_OR_RETURN(bool right, OptionalBool(spec, "strip_right", true, at));
    return std::unique_ptr<Normalizer>(std::make_unique<StripNormalizer>(left, right));
  }
  if (type == "StripAccents") return std::unique_ptr<Normalizer>(std::make_unique<StripAccentsNormalizer>());
  if (type == "ByteLevel") return std::unique_ptr<Normalizer>(std::make_unique<ByteLevelNormalizer>());
  return NotSupported(at.Name(), ": normalizer type '", type,
                      "' is not supported (supported: Sequence, NFC, NFD, NFKC, NFKD, Prepend, Replace, Lowercase, "
                      "Strip, StripAccents, ByteLevel)");
}

}  // namespace oc::llm
