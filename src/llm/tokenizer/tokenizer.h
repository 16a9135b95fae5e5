// The tokenizer of the LLM serving stack: loads a Hugging Face tokenizer.json
// (and tokenizer_config.json beside it) and encodes / decodes as Hugging Face
// `tokenizers` does, id for id. See docs/llm.md ("Tokenizers") for what is
// supported and what is refused.
//
// Encode pipeline (as in Hugging Face): split out the added tokens that are
// matched on raw text -> normalizer on each remaining piece -> split out the
// added tokens matched on normalized text -> pre-tokenizer -> BPE per word ->
// post-processor (when add_special_tokens).
//
// Input that is not valid UTF-8 is not an error: each maximal invalid
// subsequence is replaced by U+FFFD first (Python's errors="replace").
// A loaded Tokenizer is immutable; Encode and Decode may run on many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oc::llm {

class Tokenizer {
 public:
  // A folder holding tokenizer.json (and optionally tokenizer_config.json), or
  // the path of a tokenizer.json (its folder's tokenizer_config.json is read too).
  // A .gguf file (or a folder without tokenizer.json holding exactly one) is
  // read with FromGguf.
  static Expected<Tokenizer> Load(const std::string& folder_or_file);
  // From a GGUF file's tokenizer.ggml.* metadata (gguf_vocab.cc): byte-level
  // BPE (tokenizer.ggml.model "gpt2"); bos / eos / add_bos_token as the
  // tokenizer_config.json fields.
  static Expected<Tokenizer> FromGguf(const std::string& path);
  // From the files' contents; `name` is the tokenizer.json name for messages.
  // An empty config means none.
  static Expected<Tokenizer> FromJson(std::string_view tokenizer_json, std::string_view config_json,
                                      const std::string& name);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const;
  // Ids outside the vocabulary are an OutOfRange error naming the id and its position.
  Expected<std::string> Decode(std::span<const int32_t> ids, bool skip_special_tokens) const;

  std::optional<int32_t> TokenToId(std::string_view token) const;
  std::optional<std::string> IdToToken(int32_t id) const;
  bool IsSpecial(int32_t id) const;  // a special added token

  // From tokenizer_config.json's bos_token / eos_token; without it, bos is the
  // first special token of the post-processor's template, eos unknown.
  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> eos_id() const;
  // tokenizer_config.json's add_bos_token / add_eos_token (for information:
  // Encode follows tokenizer.json's post-processor, as Hugging Face does).
  bool add_bos_token() const;
  bool add_eos_token() const;
  // tokenizer_config.json's chat_template when it is a single string (for a
  // GGUF file: tokenizer.chat_template); empty otherwise.
  const std::string& chat_template() const;
  // One past the largest id (model vocabulary and added tokens).
  size_t vocab_size() const;

  struct Impl;  // defined in tokenizer.cc

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace oc::llm
