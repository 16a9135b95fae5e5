#include "llm/engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace oc::llm {

Status ValidateSamplingParams(const SamplingParams& p, int64_t vocab) {
  if (!(p.temperature >= 0) || !std::isfinite(p.temperature))
    return InvalidArgument("temperature ", p.temperature, " is invalid (expected a finite value >= 0; 0 is greedy)");
  if (!(p.top_p > 0 && p.top_p <= 1)) return InvalidArgument("top_p ", p.top_p, " is outside (0, 1]");
  if (p.top_k < -1) return InvalidArgument("top_k ", p.top_k, " is invalid (expected -1 or 0 to disable, or >= 1)");
  if (!(p.min_p >= 0 && p.min_p <= 1)) return InvalidArgument("min_p ", p.min_p, " is outside [0, 1]");
  if (!(p.repetition_penalty > 0) || !std::isfinite(p.repetition_penalty))
    return InvalidArgument("repetition_penalty ", p.repetition_penalty, " is invalid (expected > 0; 1 disables)");
  if (!(p.presence_penalty >= -2 && p.presence_penalty <= 2))
    return InvalidArgument("presence_penalty ", p.presence_penalty, " is outside [-2, 2]");
  if (!(p.frequency_penalty >= -2 && p.frequency_penalty <= 2))
    return InvalidArgument("frequency_penalty ", p.frequency_penalty, " is outside [-2, 2]");
  if (p.max_tokens < 1) return InvalidArgument("max_tokens ", p.max_tokens, " is invalid (expected at least 1)");
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens)
    return InvalidArgument("min_tokens ", p.min_tokens, " is invalid (expected 0..max_tokens ", p.max_tokens, ")");
  if (p.logprobs < -1 || p.logprobs > 20)
    return InvalidArgument("logprobs ", p.logprobs, " is invalid (expected 0..20, or none)");
  if (p.n < 1 || p.n > kMaxChoices) return InvalidArgument("n ", p.n, " is invalid (expected 1..", kMaxChoices, ")");
  for (const auto& [t, b] : p.logit_bias) {
    if (t < 0 || t >= vocab) return InvalidArgument("logit_bias names token ", t, ", expected 0..", vocab - 1);
    if (!std::isfinite(b)) return InvalidArgument("logit_bias of token ", t, " is not finite");
  }
  for (int32_t t : p.stop_token_ids)
    if (t < 0 || t >= vocab) return InvalidArgument("stop_token_ids holds ", t, ", expected 0..", vocab - 1);
  return Status::Ok();
}

void ApplyLogitRules(const SamplingParams& p, std::span<const int32_t> prompt, std::span<const int32_t> output,
                     std::span<const int32_t> eos, std::span<float> logits) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t vocab = static_cast<int64_t>(logits.size());
  auto in_vocab = [&](int32_t t) { return t >= 0 && t < vocab; };
  if (static_cast<int64_t>(output.size()) < p.min_tokens) {
    for (int32_t t : eos)
      if (in_vocab(t)) logits[static_cast<size_t>(t)] = ninf;
    for (int32_t t : p.stop_token_ids) logits[static_cast<size_t>(t)] = ninf;
  }
  for (const auto& [t, b] : p.logit_bias) logits[static_cast<size_t>(t)] += b;
  if (p.repetition_penalty != 1.0) {
    const float r = static_cast<float>(p.repetition_penalty);
    std::vector<char> seen(logits.size(), 0);
    for (int32_t t : prompt) seen[static_cast<size_t>(t)] = 1;
    for (int32_t t : output) seen[static_cast<size_t>(t)] = 1;
    for (size_t i = 0; i < logits.size(); ++i)
      if (seen[i]) logits[i] = logits[i] > 0 ? logits[i] / r : logits[i] * r;
  }
  if (p.presence_penalty != 0 || p.frequency_penalty != 0) {
    std::unordered_map<int32_t, int64_t> count;
    for (int32_t t : output) ++count[t];
    for (const auto& [t, c] : count)
      logits[static_cast<size_t>(t)] -= static_cast<float>(p.frequency_penalty * static_cast<double>(c) +
                                                           p.presence_penalty);
  }
}

void FilteredProbs(const SamplingParams& p, std::span<const float> logits, std::vector<double>& probs) {
  const size_t n = logits.size();
  probs.assign(n, 0.0);
  double mx = -std::numeric_limits<double>::infinity();
  for (float x : logits) mx = std::max(mx, static_cast<double>(x));
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = logits[i];
    probs[i] = std::isinf(x) && x < 0 ? 0.0 : std::exp((x - mx) / p.temperature);
    sum += probs[i];
  }
  for (double& q : probs) q /= sum;
  auto renormalise = [&] {
    double s = 0;
    for (double q : probs) s += q;
    for (double& q : probs) q /= s;
  };
  if (p.min_p > 0) {
    const double cut = p.min_p * *std::max_element(probs.begin(), probs.end());
    for (double& q : probs)
      if (q < cut) q = 0;
    renormalise();
  }
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < n) {
    std::vector<double> sorted(probs);
    std::nth_element(sorted.begin(), sorted.begin() + (p.top_k - 1), sorted.end(), std::greater<>());
    const double kth = sorted[static_cast<size_t>(p.top_k - 1)];
    for (double& q : probs)
      if (q < kth) q = 0;
    renormalise();
  }
  if (p.top_p < 1) {
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return probs[static_cast<size_t>(a)] >
                                                                                      probs[static_cast<size_t>(b)]; });
    double cum = 0;
    for (int32_t t : order) {
      double& q = probs[static_cast<size_t>(t)];
      if (cum >= p.top_p) {
        q = 0;
      } else {
        cum += q;
      }
    }
    renormalise();
  }
}

int32_t SampleToken(const SamplingParams& p, std::span<const float> logits, std::mt19937_64& rng,
                    std::vector<double>& probs) {
  if (p.temperature == 0) {
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  FilteredProbs(p, logits, probs);
  const double u = Uniform01(rng);
  double cum = 0;
  int32_t last = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    last = static_cast<int32_t>(i);
    cum += probs[i];
    if (u < cum) return last;
  }
  return last;  // rounding left u past the sum
}

TokenLogprob ComputeLogprobs(std::span<const float> raw, int32_t token, int32_t top) {
  double mx = -std::numeric_limits<double>::infinity();
  for (float x : raw) mx = std::max(mx, static_cast<double>(x));
  double sum = 0;
  for (float x : raw) sum += std::exp(static_cast<double>(x) - mx);
  const double lse = mx + std::log(sum);
  TokenLogprob out;
  out.token = token;
  out.logprob = static_cast<float>(raw[static_cast<size_t>(token)] - lse);
  if (top > 0) {
    std::vector<int32_t> order(raw.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t k = std::min(order.size(), static_cast<size_t>(top));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](int32_t a, int32_t b) {
                        const float xa = raw[static_cast<size_t>(a)], xb = raw[static_cast<size_t>(b)];
                        return xa > xb || (xa == xb && a < b);
                      });
    for (size_t i = 0; i < k; ++i)
      out.top.emplace_back(order[i], static_cast<float>(raw[static_cast<size_t>(order[i])] - lse));
  }
  return out;
}

}  // namespace oc::llm
