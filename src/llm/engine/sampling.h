// Per-request sampling: the parameters, their validation, and the rules that
// turn one row of logits into the next token.
//
// The order of the rules (vLLM's, with OpenAI's penalty formulas):
//   1. min_tokens: while fewer than min_tokens tokens are generated, the eos
//      ids and stop_token_ids get -inf;
//   2. logit_bias: added to the named tokens' logits;
//   3. repetition_penalty r (Hugging Face / vLLM): every token that occurs in
//      the prompt or the output has its logit divided by r when positive,
//      multiplied by r when negative;
//   4. frequency / presence penalties (OpenAI): logit -= frequency * count +
//      presence * (count > 0), count = occurrences in the OUTPUT only;
//   5. temperature 0: greedy, the argmax (lowest id on ties); otherwise
//      softmax(logits / temperature) and then, each on what the previous one
//      left (renormalised):
//   6. min_p: drop tokens with p < min_p * max p;
//   7. top_k: keep the tokens whose probability is at least the k-th largest
//      (ties at the k-th value are all kept);
//   8. top_p: keep the smallest prefix of the tokens sorted by probability
//      (descending, lower id first on ties) whose sum reaches top_p;
//   9. one uniform draw u in [0,1) from the request's own RNG picks the token
//      by inverse CDF over the kept tokens in id order.
// The RNG is per request (seeded by `seed`, else from std::random_device), and
// a request draws exactly once per generated token, so a seeded request gives
// the same tokens alone or in any batch, preempted or not. With n > 1 each
// choice has its own RNG (engine.h says how it is seeded).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"

namespace oc::llm {

inline constexpr int32_t kMaxChoices = 128;  // the most choices (n) a request may ask for, as the OpenAI API

struct SamplingParams {
  double temperature = 1.0;   // 0: greedy
  int32_t top_k = 0;          // 0 or -1: off
  double top_p = 1.0;         // (0, 1]
  double min_p = 0.0;         // [0, 1]
  double repetition_penalty = 1.0;  // > 0; 1: off
  double presence_penalty = 0.0;    // [-2, 2]
  double frequency_penalty = 0.0;   // [-2, 2]
  std::vector<std::pair<int32_t, float>> logit_bias;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int64_t max_tokens = 16;    // >= 1
  int64_t min_tokens = 0;     // 0..max_tokens
  std::optional<uint64_t> seed;
  int32_t logprobs = -1;      // -1: none; 0: the chosen token's; k: and the top k
  int32_t n = 1;              // choices (parallel sampling), 1..kMaxChoices
};

// Checks every field; `vocab` bounds the token ids. Errors name the field and
// the accepted range.
Status ValidateSamplingParams(const SamplingParams& p, int64_t vocab);

// Rules 1-4 in place on one row of logits. `eos` are the end-of-sequence ids.
void ApplyLogitRules(const SamplingParams& p, std::span<const int32_t> prompt, std::span<const int32_t> output,
                     std::span<const int32_t> eos, std::span<float> logits);

// Rules 6-8 on processed logits (temperature > 0): probabilities of every
// token, 0 for the removed ones, summing to 1.
void FilteredProbs(const SamplingParams& p, std::span<const float> logits, std::vector<double>& probs);

// A uniform double in [0, 1) from 53 random bits.
inline double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Rules 5-9: the next token from processed logits (draws from rng unless greedy).
int32_t SampleToken(const SamplingParams& p, std::span<const float> logits, std::mt19937_64& rng,
                    std::vector<double>& scratch);

// log_softmax of the raw logits: the chosen token's log probability and the
// `top` most likely tokens (descending, lower id first on ties).
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};
TokenLogprob ComputeLogprobs(std::span<const float> raw_logits, int32_t token, int32_t top);

}  // namespace oc::llm
