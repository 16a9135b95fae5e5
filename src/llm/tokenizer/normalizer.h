// Normalizers of tokenizer.json ("normalizer"): rewrite the text before it is
// split into words. Supported: Sequence, NFC, NFD, NFKC, NFKD, Prepend,
// Replace, Lowercase, Strip, StripAccents, ByteLevel; others are refused.
#pragma once

#include <memory>
#include <string>

#include "llm/tokenizer/json_fields.h"

namespace oc::llm {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void Normalize(std::string& text) const = 0;
};

// Null JSON gives a null pointer (no normalizer).
Expected<std::unique_ptr<Normalizer>> MakeNormalizer(const Json& spec, const JsonPath& at);

// The "pattern" object shared by Replace and Split: {"String": s} or {"Regex": r}.
struct Pattern;
Expected<Pattern> ParsePattern(const Json& spec, const JsonPath& at);

}  // namespace oc::llm
