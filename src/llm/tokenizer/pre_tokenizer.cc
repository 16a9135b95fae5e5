#include "llm/tokenizer/pre_tokenizer.h"

#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/pattern.h"
#include "llm/tokenizer/unicode.h"

namespace oc::llm {
namespace {

// Splits every piece with a pattern; the first part keeps the piece's origin flag.
void SplitPieces(std::vector<Piece>& pieces, const Pattern& pattern, SplitBehavior behavior) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (Piece& p : pieces) {
    bool first = true;
    for (auto [b, e] : SplitText(p.text, pattern, behavior)) {
      out.push_back({p.text.substr(b, e - b), p.at_origin && first});
      first = false;
    }
  }
  pieces = std::move(out);
}

class SequencePre : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void PreTokenize(std::vector<Piece>& pieces) const override {
    for (auto& s : steps_) s->PreTokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

class SplitPre : public PreTokenizer {
 public:
  SplitPre(Pattern pattern, SplitBehavior behavior) : pattern_(std::move(pattern)), behavior_(behavior) {}
  void PreTokenize(std::vector<Piece>& pieces) const override { SplitPieces(pieces, pattern_, behavior_); }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
};

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, std::shared_ptr<const Regex> regex) : add_prefix_space_(add_prefix_space) {
    pattern_.regex = std::move(regex);
  }
  void PreTokenize(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_)
      for (Piece& p : pieces)
        if (!p.text.empty() && p.text[0] != ' ') p.text.insert(p.text.begin(), ' ');
    if (pattern_.regex) SplitPieces(pieces, pattern_, SplitBehavior::kIsolated);
    for (Piece& p : pieces) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (unsigned char b : p.text) AppendUtf8(mapped, ByteToChar(b));
      p.text = std::move(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  Pattern pattern_;
};

enum class PrependScheme { kFirst, kAlways, kNever };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {
    pattern_.literal = replacement_;
  }
  void PreTokenize(std::vector<Piece>& pieces) const override {
    for (Piece& p : pieces) {
      std::string out;
      out.reserve(p.text.size() + 8);
      for (char c : p.text) {
        if (c == ' ')
          out += replacement_;
        else
          out += c;
      }
      bool starts = out.compare(0, replacement_.size(), replacement_) == 0;
      if (!out.empty() && !starts &&
          (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && p.at_origin)))
        out = replacement_ + out;
      p.text = std::move(out);
    }
    if (split_) SplitPieces(pieces, pattern_, SplitBehavior::kMergedWithNext);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  Pattern pattern_;
};

// Predicate splits (Digits, WhitespaceSplit, Punctuation, BertPreTokenizer).
class PredicatePre : public PreTokenizer {
 public:
  struct Step {
    bool (*predicate)(char32_t);
    SplitBehavior behavior;
  };
  explicit PredicatePre(std::vector<Step> steps) : steps_(std::move(steps)) {}
  void PreTokenize(std::vector<Piece>& pieces) const override {
    for (const Step& s : steps_) {
      Pattern p;
      p.predicate = s.predicate;
      SplitPieces(pieces, p, s.behavior);
    }
  }

 private:
  std::vector<Step> steps_;
};

bool IsWhitespaceChar(char32_t c) { return IsWhitespace(c); }
bool IsNumericChar(char32_t c) { return IsNumeric(c); }
bool IsPunctuationChar(char32_t c) { return IsPunctuation(c); }

}  // namespace

Expected<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const Json& spec, const JsonPath& at) {
  using Ptr = std::unique_ptr<PreTokenizer>;
  if (spec.is_null()) return Ptr();
  OC_ASSIGN_OR_RETURN(std::string type, TypeOf(spec, at));
  if (type == "Sequence") {
    OC_ASSIGN_OR_RETURN(const Json* list, RequireField(spec, "pretokenizers", at));
    if (!list->is_array()) return InvalidFile(at.Key("pretokenizers").Name(), ": expected an array");
    std::vector<Ptr> steps;
    for (size_t i = 0; i < list->size(); ++i) {
      OC_ASSIGN_OR_RETURN(Ptr step, MakePreTokenizer((*list)[i], at.Key("pretokenizers").Index(i)));
      if (step) steps.push_back(std::move(step));
    }
    return Ptr(std::make_unique<SequencePre>(std::move(steps)));
  }
  if (type == "ByteLevel") {
    OC_ASSIGN_OR_RETURN(bool add_prefix_space, OptionalBool(spec, "add_prefix_space", true, at));
    OC_ASSIGN_OR_RETURN(bool use_regex, OptionalBool(spec, "use_regex", true, at));
    std::shared_ptr<const Regex> re;
    if (use_regex) {
      OC_ASSIGN_OR_RETURN(re, Regex::Compile(kGpt2Regex, at.Name()));
    }
    return Ptr(std::make_unique<ByteLevelPre>(add_prefix_space, std::move(re)));
  }
  if (type == "Split") {
    OC_ASSIGN_OR_RETURN(const Json* pattern, RequireField(spec, "pattern", at));
    OC_ASSIGN_OR_RETURN(Pattern p, ParsePattern(*pattern, at.Key("pattern")));
    OC_ASSIGN_OR_RETURN(std::string behavior_name, RequireString(spec, "behavior", at));
    OC_ASSIGN_OR_RETURN(SplitBehavior behavior, ParseSplitBehavior(behavior_name, at.Key("behavior").Name()));
    OC_ASSIGN_OR_RETURN(p.invert, OptionalBool(spec, "invert", false, at));
    return Ptr(std::make_unique<SplitPre>(std::move(p), behavior));
  }
  if (type == "Digits") {
    OC_ASSIGN_OR_RETURN(bool individual, OptionalBool(spec, "individual_digits", false, at));
    return Ptr(std::make_unique<PredicatePre>(std::vector<PredicatePre::Step>{
        {IsNumericChar, individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous}}));
  }
  if (type == "Metaspace") {
    std::string replacement = "\xE2\x96\x81";  // U+2581
    if (const Json* r = OptionalField(spec, "replacement")) {
      if (!r->is_string() || r->get<std::string>().empty())
        return InvalidFile(at.Key("replacement").Name(), ": expected a one-character string");
      replacement = r->get<std::string>();
      size_t i = 0;
      NextCodePoint(replacement, i);
      if (i != replacement.size())
        return InvalidFile(at.Key("replacement").Name(), ": expected one character, got '", replacement, "'");
    }
    PrependScheme scheme = PrependScheme::kAlways;
    if (const Json* ps = OptionalField(spec, "prepend_scheme")) {
      std::string s = ps->is_string() ? ps->get<std::string>() : "";
      if (s == "first")
        scheme = PrependScheme::kFirst;
      else if (s == "always")
        scheme = PrependScheme::kAlways;
      else if (s == "never")
        scheme = PrependScheme::kNever;
      else
        return InvalidFile(at.Key("prepend_scheme").Name(), ": expected \"first\", \"always\" or \"never\", got ",
                           ps->dump());
    } else {
      // Files written before prepend_scheme existed say add_prefix_space.
      OC_ASSIGN_OR_RETURN(bool add, OptionalBool(spec, "add_prefix_space", true, at));
      scheme = add ? PrependScheme::kAlways : PrependScheme::kNever;
    }
    OC_ASSIGN_OR_RETURN(bool split, OptionalBool(spec, "split", true, at));
    return Ptr(std::make_unique<MetaspacePre>(std::move(replacement), scheme, split));
  }
  if (type == "Whitespace") {
    Pattern p;
    OC_ASSIGN_OR_RETURN(p.regex, Regex::Compile(R"(\w+|[^\w\s]+)", at.Name()));
    p.invert = true;
    return Ptr(std::make_unique<SplitPre>(std::move(p), SplitBehavior::kRemoved));
  }
  if (type == "WhitespaceSplit")
    return Ptr(
        std::make_unique<PredicatePre>(std::vector<PredicatePre::Step>{{IsWhitespaceChar, SplitBehavior::kRemoved}}));
  if (type == "Punctuation") {
    SplitBehavior behavior = SplitBehavior::kIsolated;
    if (auto b = OptionalField(spec, "behavior")) {
      if (!b->is_string()) return InvalidFile(at.Key("behavior").Name(), ": expected a string");
      OC_ASSIGN_OR_RETURN(behavior, ParseSplitBehavior(b->get<std::string>(), at.Key("behavior").Name()));
    }
    return Ptr(std::make_unique<PredicatePre>(std::vector<PredicatePre::Step>{{IsPunctuationChar, behavior}}));
  }
  if (type == "BertPreTokenizer")
    return Ptr(std::make_unique<PredicatePre>(std::vector<PredicatePre::Step>{
        {IsWhitespaceChar, SplitBehavior::kRemoved}, {IsPunctuationChar, SplitBehavior::kIsolated}}));
  if (type == "CharDelimiterSplit") {
    OC_ASSIGN_OR_RETURN(std::string d, RequireString(spec, "delimiter", at));
    Pattern p;
    p.literal = d;
    return Ptr(std::make_unique<SplitPre>(std::move(p), SplitBehavior::kRemoved));
  }
  return NotSupported(at.Name(), ": pre-tokenizer type '", type,
                      "' is not supported (supported: ByteLevel, Split, Digits, Metaspace, Sequence, Whitespace, "
                      "WhitespaceSplit, Punctuation, BertPreTokenizer, CharDelimiterSplit)");
}

}  // namespace oc::llm
