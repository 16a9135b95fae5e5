// Post-processors of tokenizer.json ("post_processor"): the special tokens
// Encode(add_special_tokens=true) puts around a single sequence.
// Supported: TemplateProcessing (its "single" template), BertProcessing,
// RobertaProcessing, ByteLevel (ids unchanged), Sequence; others are refused.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace oc::llm {

struct PostProcessor {
  std::vector<int32_t> before;  // ids put before the sequence
  std::vector<int32_t> after;   // and after it
};

// Null JSON gives an empty PostProcessor.
Expected<PostProcessor> MakePostProcessor(const Json& spec, const JsonPath& at);

}  // namespace oc::llm
