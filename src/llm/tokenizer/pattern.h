// Patterns that split text (a regex, a literal string or a character class)
// and the split behaviours of Hugging Face tokenizers (Isolated, Removed,
// MergedWithPrevious, MergedWithNext, Contiguous). Regexes are PCRE2 in UTF +
// UCP mode, with \s and \w rewritten to Oniguruma's Unicode meaning (the
// engine Hugging Face uses), so `\s` also matches U+0085.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oc::llm {

// One piece of the text: [begin, end) and whether the pattern matched it.
struct MatchSpan {
  size_t begin;
  size_t end;
  bool is_match;
};

class Regex {
 public:
  // `what` names the pattern's place in the file for the error message.
  static Expected<std::shared_ptr<const Regex>> Compile(std::string_view pattern, const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Non-overlapping matches, left to right (an empty match advances one code point).
  void ForEachMatch(std::string_view text, const std::function<void(size_t, size_t)>& fn) const;

 private:
  Regex() = default;
  void* code_ = nullptr;  // pcre2_code_8
};

// A split pattern: exactly one of regex, literal or predicate is set.
struct Pattern {
  std::shared_ptr<const Regex> regex;
  std::string literal;
  bool (*predicate)(char32_t) = nullptr;
  bool invert = false;
  // The whole text covered by spans, matches and gaps alternating.
  std::vector<MatchSpan> FindMatches(std::string_view text) const;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
Expected<SplitBehavior> ParseSplitBehavior(const std::string& name, const std::string& what);

// The non-empty pieces [begin, end) of text after a split.
std::vector<std::pair<size_t, size_t>> SplitText(std::string_view text, const Pattern& pattern, SplitBehavior behavior);

}  // namespace oc::llm
