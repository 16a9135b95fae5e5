// GenerationRun: one OpenAI request's choices as the engine's outputs arrive,
// and their replies: a JSON body, or SSE chunks (see openai_api.h).
#include <algorithm>
#include <ctime>
#include <random>

#include "llm/server/openai_api.h"

namespace oc::llm::server {
namespace {

std::string RandomId(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string s = prefix;
  for (int i = 0; i < 24; ++i) s += kHex[rng() & 15];
  return s;
}

Json Utf8Bytes(const std::string& s) {
  Json b = Json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

std::string Event(const Json& j) { return "data: " + j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n"; }

}  // namespace

struct GenerationRun::Choice {
  Choice(size_t ch, int32_t idx, const Tokenizer* tok, const TextOptions& opt) : channel(ch), index(idx), text(tok, opt) {}
  size_t channel;
  int32_t index;
  ChoiceText text;
  std::vector<TokenLogprob> logprobs;
  size_t logprobs_sent = 0;
  size_t text_offset = 0;     // completions logprobs: where the next token's text starts
  std::string finish_reason;
  Json stop_reason = nullptr;
  bool done = false, finish_sent = false, started = false;
};

GenerationRun::GenerationRun(LlmService* svc, GenerationJob job) : svc_(svc), job_(std::move(job)) {
  id_ = RandomId(job_.endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
  created_ = static_cast<int64_t>(std::time(nullptr));
  for (size_t p = 0; p < job_.prompts.size(); ++p)
    for (int32_t i = 0; i < job_.n; ++i) {
      choices_.push_back(std::make_unique<Choice>(p, static_cast<int32_t>(p * job_.n + i), &svc_->tokenizer(), job_.text));
      if (!job_.echo.empty()) choices_.back()->text_offset = job_.echo[p].size();
    }
}

GenerationRun::~GenerationRun() { Cancel(); }

std::optional<ApiError> GenerationRun::Start() {
  // All prompts at once, so that they start in one batch; one refused: all are cancelled.
  auto chs = svc_->SubmitAll(job_.prompts, job_.params);
  std::optional<ApiError> err;
  for (auto& ch : chs) {
    if (!ch.ok()) {
      if (!err) err = FromStatus(ch.status());
      continue;
    }
    channels_.push_back(*ch);
    channel_done_.push_back(false);
  }
  if (err) Cancel();
  return err;
}

void GenerationRun::CancelChannel(size_t c, const std::string& reason) {
  if (channel_done_[c]) return;
  channel_done_[c] = true;
  svc_->Cancel(channels_[c]->id(), reason);
}

void GenerationRun::Cancel() {
  for (size_t c = 0; c < channels_.size(); ++c) CancelChannel(c, "abort");
}

void GenerationRun::Absorb(size_t c, std::vector<StepOutput>& outs) {
  for (StepOutput& o : outs) {
    if (o.index < 0 || o.index >= job_.n) continue;
    Choice& ch = *choices_[c * static_cast<size_t>(job_.n) + static_cast<size_t>(o.index)];
    if (ch.done) continue;
    for (size_t k = 0; k < o.new_tokens.size() && !ch.done; ++k) {
      if (k < o.logprobs.size()) ch.logprobs.push_back(o.logprobs[k]);
      if (ch.text.Append({o.new_tokens[k]})) {
        ch.done = true;
        ch.finish_reason = "stop";
        ch.stop_reason = ch.text.matched_stop();
      }
      if (job_.stream && !ch.done) EmitChunk(ch);  // one chunk per token, as vLLM sends one per step
    }
    if (o.finished && !ch.done) {
      ch.text.Finish();
      ch.done = true;
      ch.finish_reason = o.finish_reason;
      const auto& ids = ch.text.ids();
      const auto& stops = job_.params.stop_token_ids;
      if (o.finish_reason == "stop" && !ids.empty() && std::find(stops.begin(), stops.end(), ids.back()) != stops.end())
        ch.stop_reason = ids.back();
    }
    if (job_.stream && ch.done) EmitChunk(ch);
  }
  // A channel whose choices all ended on stop strings is stopped in the engine.
  bool all = true;
  for (int32_t i = 0; i < job_.n; ++i) all = all && choices_[c * static_cast<size_t>(job_.n) + static_cast<size_t>(i)]->done;
  if (all) CancelChannel(c, "stop");
}

bool GenerationRun::Poll(std::chrono::milliseconds timeout) {
  if (done_) return true;
  bool waited = false;
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (channel_done_[c]) continue;
    RequestChannel::Batch b = channels_[c]->Wait(waited ? std::chrono::milliseconds(0) : timeout);
    waited = true;
    if (!b.error.ok()) {
      error_ = FromStatus(b.error);
      Cancel();
      break;
    }
    Absorb(c, b.outputs);
    if (b.finished) channel_done_[c] = true;
  }
  done_ = true;
  for (size_t c = 0; c < channels_.size(); ++c) done_ = done_ && channel_done_[c];
  if (done_ && !error_)
    for (auto& ch : choices_)
      if (!ch->done) {  // (cannot happen: a finished channel finished its choices)
        ch->text.Finish();
        ch->done = true;
        ch->finish_reason = "abort";
      }
  return done_;
}

std::string GenerationRun::TokenText(int32_t id) const {
  const int32_t one[1] = {id};
  auto s = svc_->tokenizer().Decode(one, false);
  return s.ok() ? *s : std::string();
}

Json GenerationRun::LogprobsJson(const Choice& c, size_t from, size_t to) const {
  auto str = [&](int32_t id) { return TokenText(id); };
  if (job_.endpoint == Endpoint::kChat) {
    Json content = Json::array();
    for (size_t i = from; i < to; ++i) {
      const TokenLogprob& lp = c.logprobs[i];
      const std::string s = str(lp.token);
      Json top = Json::array();
      for (const auto& [id, l] : lp.top) {
        const std::string ts = str(id);
        top.push_back(Json{{"token", ts}, {"logprob", l}, {"bytes", Utf8Bytes(ts)}});
      }
      content.push_back(Json{{"token", s}, {"logprob", lp.logprob}, {"bytes", Utf8Bytes(s)}, {"top_logprobs", top}});
    }
    return Json{{"content", content}};
  }
  Json tokens = Json::array(), values = Json::array(), tops = Json::array(), offsets = Json::array();
  size_t offset = c.text_offset;
  for (size_t i = from; i < to; ++i) {
    const TokenLogprob& lp = c.logprobs[i];
    const std::string s = str(lp.token);
    tokens.push_back(s);
    values.push_back(lp.logprob);
    Json top = Json::object();
    for (const auto& [id, l] : lp.top) top[str(id)] = l;
    top[s] = lp.logprob;  // the sampled token is always listed (as vLLM does)
    tops.push_back(top);
    offsets.push_back(offset);
    offset += s.size();
  }
  return Json{{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

void GenerationRun::EmitChunk(Choice& c) {
  const bool chat = job_.endpoint == Endpoint::kChat;
  if (chat && !c.started)
    stream_ += Event(ChunkOf(Json{{"index", c.index}, {"delta", Json{{"role", "assistant"}, {"content", ""}}},
                                  {"logprobs", nullptr}, {"finish_reason", nullptr}}));
  std::string delta = c.text.TakeDelta();
  if (!chat && !c.started && !job_.echo.empty()) delta = job_.echo[c.channel] + delta;
  c.started = true;
  const size_t lp_to = c.logprobs.size();
  const bool finish = c.done && !c.finish_sent;
  if (delta.empty() && lp_to == c.logprobs_sent && !finish) return;
  Json lp = job_.logprobs >= 0 && lp_to > c.logprobs_sent ? LogprobsJson(c, c.logprobs_sent, lp_to) : Json(nullptr);
  if (!chat && job_.logprobs >= 0)
    for (size_t i = c.logprobs_sent; i < lp_to; ++i) c.text_offset += TokenText(c.logprobs[i].token).size();
  c.logprobs_sent = lp_to;
  Json choice = chat ? Json{{"index", c.index}, {"delta", Json{{"content", delta}}}, {"logprobs", lp}}
                     : Json{{"index", c.index}, {"text", delta}, {"logprobs", lp}};
  choice["finish_reason"] = finish ? Json(c.finish_reason) : Json(nullptr);
  choice["stop_reason"] = finish ? c.stop_reason : Json(nullptr);
  if (finish) c.finish_sent = true;
  stream_ += Event(ChunkOf(std::move(choice)));
}

Json GenerationRun::ChunkOf(Json choice) const {
  return Json{{"id", id_}, {"object", job_.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
              {"created", created_}, {"model", job_.model}, {"choices", Json::array({std::move(choice)})}};
}

std::string GenerationRun::TakeStreamEvents() {
  std::string out;
  out.swap(stream_);
  if (done_sent_ || !done_) return out;
  if (error_) {
    out += Event(error_->Body());
  } else {
    for (auto& c : choices_) EmitChunk(*c);  // (every choice has sent its finish already; kept for safety)
    out += stream_;
    stream_.clear();
    if (job_.include_usage) {
      Json chunk = ChunkOf(Json());
      chunk["choices"] = Json::array();
      chunk["usage"] = Response()["usage"];
      out += Event(chunk);
    }
  }
  out += "data: [DONE]\n\n";
  done_sent_ = true;
  return out;
}

const std::vector<int32_t>& GenerationRun::ChoiceTokenIds(size_t i) const { return choices_.at(i)->text.ids(); }

const std::vector<TokenLogprob>& GenerationRun::ChoiceLogprobs(size_t i) const { return choices_.at(i)->logprobs; }

Json GenerationRun::Response() const {
  const bool chat = job_.endpoint == Endpoint::kChat;
  Json choices = Json::array();
  int64_t completion_tokens = 0, prompt_tokens = 0;
  for (const auto& p : job_.prompts) prompt_tokens += static_cast<int64_t>(p.size());
  for (const auto& cp : choices_) {
    const Choice& c = *cp;
    completion_tokens += static_cast<int64_t>(c.text.ids().size());
    Json lp = job_.logprobs >= 0 ? LogprobsJson(c, 0, c.logprobs.size()) : Json(nullptr);
    Json choice = Json{{"index", c.index}};
    if (chat) {
      choice["message"] = Json{{"role", "assistant"}, {"content", c.text.text()}};
    } else {
      choice["text"] = (job_.echo.empty() ? std::string() : job_.echo[c.channel]) + c.text.text();
    }
    choice["logprobs"] = lp;
    choice["finish_reason"] = c.finish_reason;
    choice["stop_reason"] = c.stop_reason;
    choices.push_back(std::move(choice));
  }
  return Json{{"id", id_},
              {"object", chat ? "chat.completion" : "text_completion"},
              {"created", created_},
              {"model", job_.model},
              {"choices", choices},
              {"usage", Json{{"prompt_tokens", prompt_tokens},
                             {"completion_tokens", completion_tokens},
                             {"total_tokens", prompt_tokens + completion_tokens}}}};
}

}  // namespace oc::llm::server
