// Added tokens of tokenizer.json ("added_tokens"): strings matched as a whole
// before the model sees the text, with Hugging Face's flags: single_word (only
// between non-word characters), lstrip / rstrip (swallow the whitespace
// beside it), normalized (matched in the normalized text instead of the raw
// one), special (skipped by Decode(skip_special_tokens)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oc::llm {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// A piece of text: either plain text [begin, end) or an added token's id.
struct AddedSplit {
  size_t begin;
  size_t end;
  int32_t id;  // -1: plain text
};

// Leftmost-longest, non-overlapping matching of a set of added tokens.
class AddedTokenMatcher {
 public:
  // `patterns[i]` is what is searched for tokens[i] (its content, normalized or not).
  void Add(std::string pattern, const AddedToken* token);
  bool empty() const { return entries_.empty(); }
  // Splits text into plain and token pieces covering it (empty text: one empty piece).
  std::vector<AddedSplit> Split(std::string_view text) const;

 private:
  struct Entry {
    std::string pattern;
    const AddedToken* token;
  };
  std::vector<Entry> entries_;
  std::vector<std::vector<size_t>> by_first_byte_ = std::vector<std::vector<size_t>>(256);  // longest first
};

}  // namespace oc::llm
