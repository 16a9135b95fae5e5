#include "llm/tokenizer/pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "llm/tokenizer/unicode.h"

namespace oc::llm {

// Oniguruma's Unicode classes, written out for PCRE2 (whose UCP \s lacks
// U+0085 and whose \w is \p{L} and \p{N} only: Oniguruma's is Alphabetic, marks,
// decimal digits, connector punctuation and the joiners).
static constexpr std::string_view kSpaceClass = "\\x{09}-\\x{0D}\\x{85}\\p{Z}";
static constexpr std::string_view kWordClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";

static std::string TranslatePattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[i + 1];
      ++i;
      std::string_view cls = (n == 's' || n == 'S') ? kSpaceClass : (n == 'w' || n == 'W') ? kWordClass : "";
      if (!cls.empty()) {
        bool negate = n == 'S' || n == 'W';
        if (in_class && !negate) {
          out += cls;
        } else if (!in_class) {
          out += negate ? "[^" : "[";
          out += cls;
          out += "]";
        } else {
          // A negated class inside a class ([^\S]): keep PCRE2's own meaning.
          out += '\\';
          out += n;
        }
        continue;
      }
      out += '\\';
      out += n;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

Expected<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern, const std::string& what) {
  std::string translated = TranslatePattern(pattern);
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    return InvalidFile(what, ": the regex '", pattern, "' does not compile (", reinterpret_cast<char*>(msg),
                       " at offset ", offset, ")");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
  std::shared_ptr<Regex> re(new Regex());
  re->code_ = code;
  return std::shared_ptr<const Regex>(std::move(re));
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::ForEachMatch(std::string_view text, const std::function<void(size_t, size_t)>& fn) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos <= text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    // A long run can exhaust the JIT's stack; the interpreter has no such limit.
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
    if (rc < 0) break;  // no match (or a resource limit): the rest is a gap
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    fn(b, e);
    if (e > b) {
      pos = e;
    } else {
      if (e >= text.size()) break;
      pos = e + Utf8Length(static_cast<unsigned char>(text[e]));
    }
  }
  pcre2_match_data_free(md);
}

std::vector<MatchSpan> Pattern::FindMatches(std::string_view text) const {
  std::vector<MatchSpan> out;
  if (text.empty()) {
    out.push_back({0, 0, false});
    return out;
  }
  size_t prev = 0;
  auto add = [&](size_t b, size_t e) {
    if (prev != b) out.push_back({prev, b, false});
    out.push_back({b, e, true});
    prev = e;
  };
  if (regex) {
    regex->ForEachMatch(text, add);
  } else if (predicate) {
    for (size_t i = 0; i < text.size();) {
      size_t b = i;
      char32_t c = NextCodePoint(text, i);
      if (predicate(c)) add(b, i);
    }
  } else if (!literal.empty()) {
    for (size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size()))
      add(at, at + literal.size());
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  if (invert)
    for (auto& m : out) m.is_match = !m.is_match;
  return out;
}

Expected<SplitBehavior> ParseSplitBehavior(const std::string& name, const std::string& what) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  return InvalidFile(what, ": unknown split behavior '", name,
                     "' (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
}

std::vector<std::pair<size_t, size_t>> SplitText(std::string_view text, const Pattern& pattern,
                                                 SplitBehavior behavior) {
  std::vector<MatchSpan> m = pattern.FindMatches(text);
  std::vector<std::pair<size_t, size_t>> out;
  auto keep = [&](size_t b, size_t e) {
    if (b != e) out.emplace_back(b, e);
  };
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (auto& s : m) keep(s.begin, s.end);
      break;
    case SplitBehavior::kRemoved:
      for (auto& s : m)
        if (!s.is_match) keep(s.begin, s.end);
      break;
    case SplitBehavior::kMergedWithPrevious:
    case SplitBehavior::kContiguous: {
      std::vector<std::pair<size_t, size_t>> acc;
      bool previous = false;
      for (auto& s : m) {
        bool merge = behavior == SplitBehavior::kContiguous ? s.is_match == previous : s.is_match && !previous;
        if (merge && !acc.empty())
          acc.back().second = s.end;
        else
          acc.emplace_back(s.begin, s.end);
        previous = s.is_match;
      }
      for (auto& [b, e] : acc) keep(b, e);
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      std::vector<std::pair<size_t, size_t>> acc;
      bool previous = false;
      for (auto it = m.rbegin(); it != m.rend(); ++it) {
        if (it->is_match && !previous && !acc.empty())
          acc.back().first = it->begin;
        else
          acc.emplace_back(it->begin, it->end);
        previous = it->is_match;
      }
      for (auto it = acc.rbegin(); it != acc.rend(); ++it) keep(it->first, it->second);
      break;
    }
  }
  return out;
}

}  // namespace oc::llm
