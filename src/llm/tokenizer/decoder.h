// Decoders of tokenizer.json ("decoder"): turn token strings back into text.
// Supported: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace,
// Sequence; others are refused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace oc::llm {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the list of token strings (the caller joins the result).
  virtual void DecodeChain(std::vector<std::string>& tokens) const = 0;
};

// Null JSON gives a null pointer (tokens are joined with spaces).
Expected<std::unique_ptr<Decoder>> MakeDecoder(const Json& spec, const JsonPath& at);

}  // namespace oc::llm
