#include "llm/tokenizer/added_tokens.h"

#include <algorithm>

#include "llm/tokenizer/unicode.h"

namespace oc::llm {

void AddedTokenMatcher::Add(std::string pattern, const AddedToken* token) {
  if (pattern.empty()) return;
  auto& bucket = by_first_byte_[static_cast<unsigned char>(pattern[0])];
  entries_.push_back({std::move(pattern), token});
  bucket.push_back(entries_.size() - 1);
  // Longest first; among equal lengths the earlier token wins.
  std::stable_sort(bucket.begin(), bucket.end(),
                   [&](size_t a, size_t b) { return entries_[a].pattern.size() > entries_[b].pattern.size(); });
}

static char32_t LastCodePoint(std::string_view s) {
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return NextCodePoint(s, i);
}

static bool IsWordChar(char32_t c) { return IsAlphanumeric(c) || c == '_'; }

std::vector<AddedSplit> AddedTokenMatcher::Split(std::string_view text) const {
  std::vector<AddedSplit> out;
  if (text.empty()) {
    out.push_back({0, 0, -1});
    return out;
  }
  size_t start_offset = 0;
  for (size_t pos = 0; pos < text.size();) {
    const Entry* hit = nullptr;
    for (size_t k : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      const Entry& e = entries_[k];
      if (text.compare(pos, e.pattern.size(), e.pattern) == 0) {
        hit = &e;
        break;
      }
    }
    if (!hit) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + hit->pattern.size();
    pos = stop;  // a discarded match is not searched again, as in Hugging Face
    const AddedToken& t = *hit->token;
    if (t.single_word) {
      bool word_before = start > 0 && IsWordChar(LastCodePoint(text.substr(0, start)));
      size_t j = stop;
      bool word_after = stop < text.size() && IsWordChar(NextCodePoint(text, j));
      if (word_before || word_after) continue;
    }
    if (t.lstrip) {
      size_t s = start;
      while (s > 0) {
        size_t b = s - 1;
        while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) --b;
        size_t i = b;
        if (!IsWhitespace(NextCodePoint(text, i))) break;
        s = b;
      }
      start = std::max(s, start_offset);
    }
    if (t.rstrip) {
      while (stop < text.size()) {
        size_t i = stop;
        if (!IsWhitespace(NextCodePoint(text, i))) break;
        stop = i;
      }
      pos = stop;
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, t.id});
    start_offset = stop;
  }
  if (start_offset != text.size()) out.push_back({start_offset, text.size(), -1});
  return out;
}

}  // namespace oc::llm
