// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): split normalized text
// into the words the model encodes one by one. Supported: ByteLevel, Split,
// Digits, Metaspace, Sequence, Whitespace, WhitespaceSplit, Punctuation,
// BertPreTokenizer, CharDelimiterSplit; others are refused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace oc::llm {

struct Piece {
  std::string text;
  bool at_origin = false;  // starts at byte 0 of the caller's text (Metaspace's prepend_scheme "first")
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void PreTokenize(std::vector<Piece>& pieces) const = 0;
};

// Null JSON gives a null pointer (the whole text is one word).
Expected<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const Json& spec, const JsonPath& at);

// GPT-2's word regex (ByteLevel with use_regex).
inline constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace oc::llm
