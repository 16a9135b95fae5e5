// The BPE model of tokenizer.json ("model": {"type": "BPE", ...}): a vocabulary,
// ranked merges, and the options byte_fallback, ignore_merges, unk_token,
// fuse_unk, continuing_subword_prefix and end_of_word_suffix.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace oc::llm {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class Bpe {
 public:
  static Expected<std::unique_ptr<Bpe>> FromJson(const Json& model, const JsonPath& at);

  // Appends the ids of one pre-tokenized word.
  void Tokenize(std::string_view word, std::vector<int32_t>& ids) const;

  const Vocab& vocab() const { return vocab_; }
  // id -> token; empty for ids the vocabulary does not use.
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  struct PairHash {
    size_t operator()(uint64_t k) const { return std::hash<uint64_t>{}(k * 0x9E3779B97F4A7C15ull); }
  };
  struct MergeInfo {
    int32_t rank;
    int32_t new_id;
  };
  static uint64_t Key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  std::vector<int32_t> MergeWord(std::string_view word) const;

  Vocab vocab_;
  std::vector<std::string> tokens_;
  std::unordered_map<uint64_t, MergeInfo, PairHash> merges_;
  std::optional<int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  std::array<int32_t, 256> byte_ids_{};  // <0xNN> tokens, -1 when absent

  // Words already merged; cleared when full (bounded memory, no LRU bookkeeping).
  static constexpr size_t kCacheCapacity = 50000;
  static constexpr size_t kMaxCachedWord = 256;
  mutable std::shared_mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace oc::llm
