// The serving core under the HTTP layer: one engine thread owns the Engine
// (which is not thread-safe) and runs steps while there is work; request
// threads submit prompts and read their outputs from a channel each.
//
//   auto svc = LlmService::Start(cfg);            // loads model, tokenizer, chat template
//   auto ch = svc->Submit(prompt_ids, params);    // checked and accepted at once, or refused
//   while (...) for (StepOutput& o : ch->Wait(100ms).outputs) ...
//   svc->Cancel(ch->id(), "abort");               // the client went away: blocks freed at the next step
//
// Submit is synchronous: the engine thread takes the request between two
// steps and answers with the engine's own verdict (InvalidArgument for a bad
// request, naming the field), ResourceExhausted when the waiting queue is full
// (max_waiting_requests) and Unavailable when the service is stopping or its
// engine failed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "llm/chat/chat_template.h"
#include "llm/engine/engine.h"
#include "llm/server/metrics.h"
#include "llm/tokenizer/tokenizer.h"

namespace oc::llm::server {

struct ServiceConfig {
  EngineConfig engine;
  std::string served_model_name;     // empty: engine.model_dir
  int64_t max_waiting_requests = 256;
};

// One request's outputs, filled by the engine thread.
class RequestChannel {
 public:
  struct Batch {
    std::vector<StepOutput> outputs;
    bool finished = false;   // every output of the request has arrived
    Status error;            // the engine failed or the service stopped
  };
  const std::string& id() const { return id_; }
  // Waits up to `timeout` for something new; returns it (possibly nothing).
  Batch Wait(std::chrono::milliseconds timeout);

 private:
  friend class LlmService;
  std::string id_;
  std::mutex mu_;
  std::condition_variable cv_;
  Batch pending_;
};

class LlmService {
 public:
  static Expected<std::unique_ptr<LlmService>> Start(ServiceConfig cfg);
  ~LlmService();  // stops the engine thread; open channels end with Unavailable

  Expected<std::shared_ptr<RequestChannel>> Submit(std::vector<int32_t> prompt, const SamplingParams& params);
  // Several prompts at once: the engine thread takes them all between the same
  // two steps, so they start in one batch (Submit of each would admit one per
  // step). One verdict per prompt, in order; each as Submit would give it.
  std::vector<Expected<std::shared_ptr<RequestChannel>>> SubmitAll(std::vector<std::vector<int32_t>> prompts,
                                                                   const SamplingParams& params);
  // Ends the request at the next step. `reason` is what the metrics count it as
  // ("abort": the client left; "stop": a stop string matched). Unknown ids are ignored.
  void Cancel(const std::string& id, const std::string& reason);

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatTemplate* chat_template() const { return chat_template_ ? &*chat_template_ : nullptr; }
  const std::string& model_name() const { return name_; }
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }
  int64_t max_model_len() const { return max_model_len_; }
  EngineStats stats() const;
  std::string MetricsText() const;  // Prometheus exposition of the metrics and the engine's gauges
  bool healthy() const;

 private:
  LlmService() = default;
  struct Pending {
    std::vector<int32_t> prompt;
    SamplingParams params;
    std::shared_ptr<RequestChannel> channel;
    std::promise<Status> accepted;
    std::chrono::steady_clock::time_point arrival;
  };
  struct Active {
    std::shared_ptr<RequestChannel> channel;
    std::chrono::steady_clock::time_point arrival, first_token, last_token;
    int64_t prompt_tokens = 0, generated = 0;  // generated: over all choices
    int32_t choices = 1, finished_choices = 0;
    int64_t token_steps = 0;  // steps that gave this request tokens
    std::string cancel_reason;
  };
  void Loop();
  void Deliver(std::vector<StepOutput>& outs);
  void FailAll(const Status& st);

  ServiceConfig cfg_;
  std::string name_, bos_token_, eos_token_;
  int64_t max_model_len_ = 0;
  std::unique_ptr<Engine> engine_;
  std::optional<Tokenizer> tokenizer_;
  std::optional<ChatTemplate> chat_template_;
  Metrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  std::vector<std::pair<std::string, std::string>> cancels_;  // id, reason
  EngineStats stats_;
  int64_t in_transit_ = 0;  // requests taken from pending_ and not yet in stats_
  Status broken_;
  bool stop_ = false;
  int64_t next_id_ = 0;

  std::map<std::string, Active> active_;  // engine thread only
  std::thread thread_;
};

}  // namespace oc::llm::server
