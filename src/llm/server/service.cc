#include "llm/server/service.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace oc::llm::server {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// tokenizer_config.json's bos_token / eos_token: a string or {"content": ...}.
std::string SpecialToken(const nlohmann::json& cfg, const char* key) {
  if (!cfg.is_object() || !cfg.contains(key)) return {};
  const auto& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

}  // namespace

RequestChannel::Batch RequestChannel::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, timeout, [&] { return !pending_.outputs.empty() || pending_.finished || !pending_.error.ok(); });
  Batch b;
  b.outputs.swap(pending_.outputs);
  b.finished = pending_.finished;
  b.error = pending_.error;
  return b;
}

Expected<std::unique_ptr<LlmService>> LlmService::Start(ServiceConfig cfg) {
  std::unique_ptr<LlmService> s(new LlmService());
  const std::string& dir = cfg.engine.model_dir;
  auto tok = Tokenizer::Load(dir);
  if (!tok.ok()) return tok.status().WithContext("loading the tokenizer of " + dir);
  s->tokenizer_.emplace(std::move(tok).value());
  const std::string tcfg_text = ReadFile(dir + "/tokenizer_config.json");
  if (!tcfg_text.empty()) {
    auto tcfg = nlohmann::json::parse(tcfg_text, nullptr, false);
    s->bos_token_ = SpecialToken(tcfg, "bos_token");
    s->eos_token_ = SpecialToken(tcfg, "eos_token");
    if (tcfg.is_object() && tcfg.contains("chat_template")) {
      OC_ASSIGN_OR_RETURN(std::string src, ChatTemplateFromConfig(tcfg_text, "", dir + "/tokenizer_config.json"));
      auto parsed = ChatTemplate::Parse(src);
      if (!parsed.ok()) return parsed.status().WithContext("the chat template of " + dir + "/tokenizer_config.json");
      s->chat_template_.emplace(std::move(parsed).value());
    }
  }
  if (!s->chat_template_ && !s->tokenizer_->chat_template().empty()) {  // a GGUF file's tokenizer.chat_template
    auto parsed = ChatTemplate::Parse(s->tokenizer_->chat_template());
    if (!parsed.ok()) return parsed.status().WithContext("the chat template of " + dir);
    s->chat_template_.emplace(std::move(parsed).value());
  }
  if (s->bos_token_.empty() && s->tokenizer_->bos_id())
    s->bos_token_ = s->tokenizer_->IdToToken(*s->tokenizer_->bos_id()).value_or("");
  if (s->eos_token_.empty() && s->tokenizer_->eos_id())
    s->eos_token_ = s->tokenizer_->IdToToken(*s->tokenizer_->eos_id()).value_or("");
  if (cfg.max_waiting_requests < 0)
    return InvalidArgument("max_waiting_requests ", cfg.max_waiting_requests, " is invalid (expected >= 0)");
  OC_ASSIGN_OR_RETURN(s->engine_, Engine::Create(cfg.engine));
  s->name_ = cfg.served_model_name.empty() ? dir : cfg.served_model_name;
  s->stats_ = s->engine_->stats();
  s->max_model_len_ = s->stats_.max_model_len;
  s->cfg_ = std::move(cfg);
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

LlmService::~LlmService() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Expected<std::shared_ptr<RequestChannel>> LlmService::Submit(std::vector<int32_t> prompt, const SamplingParams& params) {
  std::vector<std::vector<int32_t>> one;
  one.push_back(std::move(prompt));
  return std::move(SubmitAll(std::move(one), params).front());
}

std::vector<Expected<std::shared_ptr<RequestChannel>>> LlmService::SubmitAll(std::vector<std::vector<int32_t>> prompts,
                                                                             const SamplingParams& params) {
  const size_t n = prompts.size();
  std::vector<std::shared_ptr<RequestChannel>> channels(n);
  std::vector<std::future<Status>> accepted(n);
  std::vector<Status> refused(n);
  {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t i = 0; i < n; ++i) {
      if (!broken_.ok()) {
        refused[i] = Unavailable("the engine failed earlier and serves no more requests: ", broken_.message());
        continue;
      }
      if (stop_) {
        refused[i] = Unavailable("the server is shutting down");
        continue;
      }
      const int64_t waiting = stats_.waiting + in_transit_ + static_cast<int64_t>(pending_.size());
      if (waiting >= cfg_.max_waiting_requests) {
        refused[i] = ResourceExhausted("the server is busy: ", waiting, " requests are waiting (--max-waiting-requests ",
                                       cfg_.max_waiting_requests, "); retry later");
        continue;
      }
      channels[i] = std::make_shared<RequestChannel>();
      channels[i]->id_ = "req-" + std::to_string(next_id_++);
      Pending& p = pending_.emplace_back();
      p.prompt = std::move(prompts[i]);
      p.params = params;
      p.channel = channels[i];
      p.arrival = Clock::now();
      accepted[i] = p.accepted.get_future();
    }
  }
  cv_.notify_all();
  std::vector<Expected<std::shared_ptr<RequestChannel>>> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!channels[i]) {
      out.emplace_back(refused[i]);
      continue;
    }
    Status st = accepted[i].get();
    if (st.ok()) out.emplace_back(channels[i]);
    else out.emplace_back(st);
  }
  return out;
}

void LlmService::Cancel(const std::string& id, const std::string& reason) {
  {
    std::lock_guard<std::mutex> l(mu_);
    cancels_.emplace_back(id, reason);
  }
  cv_.notify_all();
}

EngineStats LlmService::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool LlmService::healthy() const {
  std::lock_guard<std::mutex> l(mu_);
  return broken_.ok() && !stop_;
}

std::string LlmService::MetricsText() const { return metrics_.Render(stats(), name_); }

void LlmService::Loop() {
  for (;;) {
    std::deque<Pending> pending;
    std::vector<std::pair<std::string, std::string>> cancels;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || !pending_.empty() || !cancels_.empty() || engine_->HasUnfinished(); });
      if (stop_) break;
      pending.swap(pending_);
      cancels.swap(cancels_);
      in_transit_ = static_cast<int64_t>(pending.size());
    }
    for (Pending& p : pending) {
      const std::string& id = p.channel->id_;
      const int64_t prompt_tokens = static_cast<int64_t>(p.prompt.size());
      Status st = engine_->AddRequest(id, std::move(p.prompt), p.params);
      if (st.ok()) {
        Active& a = active_[id];
        a.channel = p.channel;
        a.arrival = a.last_token = p.arrival;
        a.prompt_tokens = prompt_tokens;
        a.choices = p.params.n;
      }
      p.accepted.set_value(st);
    }
    for (auto& [id, reason] : cancels) {
      auto it = active_.find(id);
      if (it == active_.end()) continue;  // finished already
      it->second.cancel_reason = reason;
      (void)engine_->Abort(id);          // NotFound: it finished in the last step
    }
    if (!pending.empty()) {  // the queue length the next Submit sees includes these
      std::lock_guard<std::mutex> l(mu_);
      stats_ = engine_->stats();
      in_transit_ = 0;
    }
    if (engine_->HasUnfinished()) {
      auto outs = engine_->Step();
      if (!outs.ok()) {
        FailAll(outs.status());
        std::lock_guard<std::mutex> l(mu_);
        broken_ = outs.status();
        stats_ = engine_->stats();
        break;
      }
      Deliver(*outs);
    }
    std::lock_guard<std::mutex> l(mu_);
    stats_ = engine_->stats();
  }
  FailAll(Unavailable("the server is shutting down"));
  // Requests that arrived meanwhile are refused.
  std::lock_guard<std::mutex> l(mu_);
  for (Pending& p : pending_) p.accepted.set_value(broken_.ok() ? Unavailable("the server is shutting down") : broken_);
  pending_.clear();
  stop_ = true;
}

void LlmService::Deliver(std::vector<StepOutput>& outs) {
  const Clock::time_point now = Clock::now();
  for (StepOutput& o : outs) {
    auto it = active_.find(o.id);
    if (it == active_.end()) continue;
    Active& a = it->second;
    if (!o.new_tokens.empty()) {
      if (a.generated == 0) {
        metrics_.OnFirstToken(Seconds(now - a.arrival));
        a.first_token = now;
        a.token_steps = 1;
      } else if (now != a.last_token) {  // once per step (n choices give n tokens in one step)
        metrics_.OnNextToken(Seconds(now - a.last_token));
        ++a.token_steps;
      }
      a.generated += static_cast<int64_t>(o.new_tokens.size());
      a.last_token = now;
    }
    // A request of n choices ends when its n-th choice does.
    const bool finished = o.finished && ++a.finished_choices == a.choices;
    if (finished) {
      const double e2e = Seconds(now - a.arrival);
      const double tpot = a.token_steps > 1 ? Seconds(a.last_token - a.first_token) / static_cast<double>(a.token_steps - 1) : 0;
      const std::string reason = !a.cancel_reason.empty() && o.finish_reason == "abort" ? a.cancel_reason : o.finish_reason;
      metrics_.OnFinished(e2e, tpot, a.prompt_tokens, a.generated, reason);
    }
    {
      std::lock_guard<std::mutex> l(a.channel->mu_);
      a.channel->pending_.outputs.push_back(std::move(o));
      if (finished) a.channel->pending_.finished = true;
    }
    a.channel->cv_.notify_all();
    if (finished) active_.erase(it);
  }
}

void LlmService::FailAll(const Status& st) {
  for (auto& [id, a] : active_) {
    {
      std::lock_guard<std::mutex> l(a.channel->mu_);
      a.channel->pending_.error = st;
    }
    a.channel->cv_.notify_all();
    (void)engine_->Abort(id);
  }
  active_.clear();
}

}  // namespace oc::llm::server
