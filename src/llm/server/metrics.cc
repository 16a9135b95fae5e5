#include "llm/server/metrics.h"

#include <cstdio>

namespace oc::llm::server {
namespace {

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

void Family(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Sample(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name + "{" + labels + "} " + Num(v) + "\n";
}

// Prometheus label values escape backslash, quote and newline.
std::string LabelValue(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '\\' || c == '"') r += '\\';
    if (c == '\n') { r += "\\n"; continue; }
    r += c;
  }
  return r;
}

}  // namespace

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::Render(std::string& out, const std::string& name, const std::string& labels) const {
  uint64_t cum = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cum += counts_[i];
    const std::string le = i < bounds_.size() ? Num(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cum) + "\n";
  }
  out += name + "_sum{" + labels + "} " + Num(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

// Bucket bounds in seconds (vLLM's).
Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
             80.0, 160.0, 640.0, 2560.0}),
      itl_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      tpot_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
            960.0, 1920.0, 7680.0}) {}

void Metrics::OnFirstToken(double s) {
  std::lock_guard<std::mutex> l(mu_);
  ttft_.Observe(s);
}

void Metrics::OnNextToken(double s) {
  std::lock_guard<std::mutex> l(mu_);
  itl_.Observe(s);
}

void Metrics::OnFinished(double e2e_s, double tpot_s, int64_t prompt_tokens, int64_t generated,
                         const std::string& reason) {
  std::lock_guard<std::mutex> l(mu_);
  e2e_.Observe(e2e_s);
  if (tpot_s > 0) tpot_.Observe(tpot_s);
  prompt_tokens_ += prompt_tokens;
  generation_tokens_ += generated;
  ++finished_[reason];
}

std::string Metrics::Render(const EngineStats& st, const std::string& model) const {
  const std::string lab = "model_name=\"" + LabelValue(model) + "\"";
  std::string o;
  Family(o, "vllm:num_requests_running", "gauge", "Requests in the running batch.");
  Sample(o, "vllm:num_requests_running", lab, static_cast<double>(st.running));
  Family(o, "vllm:num_requests_waiting", "gauge", "Requests waiting to be scheduled.");
  Sample(o, "vllm:num_requests_waiting", lab, static_cast<double>(st.waiting));
  Family(o, "vllm:kv_cache_usage_perc", "gauge", "Fraction of KV-cache blocks in use (1 = all).");
  Sample(o, "vllm:kv_cache_usage_perc", lab,
         st.kv_blocks_total ? static_cast<double>(st.kv_blocks_used) / st.kv_blocks_total : 0.0);
  Family(o, "oc:kv_cache_blocks_used", "gauge", "KV-cache blocks held by requests.");
  Sample(o, "oc:kv_cache_blocks_used", lab, st.kv_blocks_used);
  Family(o, "oc:kv_cache_blocks_total", "gauge", "KV-cache blocks in the budget.");
  Sample(o, "oc:kv_cache_blocks_total", lab, st.kv_blocks_total);
  Family(o, "vllm:num_preemptions_total", "counter", "Sequences preempted (recomputed later) for lack of KV blocks.");
  Sample(o, "vllm:num_preemptions_total", lab, static_cast<double>(st.preemptions));
  Family(o, "vllm:prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.");
  Sample(o, "vllm:prefix_cache_queries_total", lab, static_cast<double>(st.prefix_cache_queries));
  Family(o, "vllm:prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.");
  Sample(o, "vllm:prefix_cache_hits_total", lab, static_cast<double>(st.prefix_cache_hits));
  std::lock_guard<std::mutex> l(mu_);
  Family(o, "vllm:prompt_tokens_total", "counter", "Prompt tokens of finished requests.");
  Sample(o, "vllm:prompt_tokens_total", lab, static_cast<double>(prompt_tokens_));
  Family(o, "vllm:generation_tokens_total", "counter", "Tokens generated for finished requests.");
  Sample(o, "vllm:generation_tokens_total", lab, static_cast<double>(generation_tokens_));
  Family(o, "vllm:request_success_total", "counter", "Finished requests by finish reason.");
  for (const char* r : {"stop", "length", "abort"}) {
    auto it = finished_.find(r);
    Sample(o, "vllm:request_success_total", lab + ",finished_reason=\"" + r + "\"",
           static_cast<double>(it == finished_.end() ? 0 : it->second));
  }
  Family(o, "vllm:time_to_first_token_seconds", "histogram", "Time from arrival to the first generated token.");
  ttft_.Render(o, "vllm:time_to_first_token_seconds", lab);
  Family(o, "vllm:inter_token_latency_seconds", "histogram", "Time between two tokens of a request.");
  itl_.Render(o, "vllm:inter_token_latency_seconds", lab);
  Family(o, "vllm:request_time_per_output_token_seconds", "histogram",
         "Per request: (end-to-end - time to first token) / (tokens - 1).");
  tpot_.Render(o, "vllm:request_time_per_output_token_seconds", lab);
  Family(o, "vllm:e2e_request_latency_seconds", "histogram", "Time from arrival to the last token.");
  e2e_.Render(o, "vllm:e2e_request_latency_seconds", lab);
  return o;
}

}  // namespace oc::llm::server
