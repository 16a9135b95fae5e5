// The server's Prometheus metrics, named as vLLM names them (vllm:...) so
// dashboards and scrapers written for vLLM read them unchanged. Latency
// histograms are fed by the engine thread; the gauges come from the engine's
// stats when /metrics is read.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "llm/engine/engine.h"

namespace oc::llm::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void Observe(double v);
  // Appends the _bucket / _sum / _count lines.
  void Render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  void OnFirstToken(double ttft_s);
  void OnNextToken(double itl_s);
  void OnFinished(double e2e_s, double tpot_s, int64_t prompt_tokens, int64_t generated, const std::string& reason);
  std::string Render(const EngineStats& st, const std::string& model) const;

 private:
  mutable std::mutex mu_;
  Histogram ttft_, itl_, tpot_, e2e_;
  int64_t prompt_tokens_ = 0, generation_tokens_ = 0;
  std::map<std::string, int64_t> finished_;  // by finish reason
};

}  // namespace oc::llm::server
