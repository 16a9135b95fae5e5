// The OpenAI-compatible API over LlmService: request bodies of
// /v1/completions and /v1/chat/completions turned into engine requests
// (openai_request.cc), and their replies and SSE chunks in OpenAI's shapes
// (openai_response.cc). No HTTP here: http_server.cc moves the bytes.
//
// Errors have OpenAI's body, {"error": {"message", "type", "param", "code"}},
// with the HTTP status beside it; `param` names the request field at fault.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/server/service.h"
#include "llm/server/text_output.h"

namespace oc::llm::server {

using Json = nlohmann::ordered_json;

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string param;  // empty: null
  std::string code;   // empty: null
  Json Body() const;
};

ApiError BadRequest(std::string param, std::string message);
// A Status from the service or the engine as an ApiError (400 / 429 / 503 / 500).
ApiError FromStatus(const Status& st);

enum class Endpoint { kCompletions, kChat };

struct GenerationJob {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;
  std::vector<std::vector<int32_t>> prompts;  // one engine request each
  std::vector<std::string> echo;              // completions with echo: each prompt's text
  SamplingParams params;
  TextOptions text;
  int32_t n = 1;
  bool stream = false, include_usage = false;
  int32_t logprobs = -1;  // completions: `logprobs`; chat: `top_logprobs` when `logprobs` is true
};

// Parses and checks a request body (any field error names the field).
std::optional<ApiError> ParseCompletionRequest(const Json& body, const LlmService& svc, GenerationJob* job);
std::optional<ApiError> ParseChatRequest(const Json& body, const LlmService& svc, GenerationJob* job);
// /tokenize and /detokenize (vLLM's shapes): the reply, or the error.
std::optional<ApiError> Tokenize(const Json& body, const LlmService& svc, Json* reply);
std::optional<ApiError> Detokenize(const Json& body, const LlmService& svc, Json* reply);
// A "model" field names the served model, or is absent.
std::optional<ApiError> CheckModel(const Json& body, const LlmService& svc);
Json ModelList(const LlmService& svc);

// One generation request on the service: its choices' text, logprobs and
// finish reasons as the engine's outputs arrive.
class GenerationRun {
 public:
  GenerationRun(LlmService* svc, GenerationJob job);
  ~GenerationRun();  // cancels what is still running
  std::optional<ApiError> Start();
  // Waits up to `timeout` for outputs. Returns true once every choice is done
  // (or the engine failed: then error() is set).
  bool Poll(std::chrono::milliseconds timeout);
  // SSE events ("data: {...}\n\n") for what arrived since the last call;
  // after the end, the usage chunk (when asked) and "data: [DONE]".
  std::string TakeStreamEvents();
  Json Response() const;                   // the non-streaming reply (after Poll returned true)
  void Cancel();                           // the client went away
  const std::optional<ApiError>& error() const { return error_; }
  // Choice i (reply order): its generated token ids (the one that completed a
  // stop string included, later ones not) and their logprobs when asked.
  // Used by the offline API's "return_token_ids" (offline_run.h).
  size_t num_choices() const { return choices_.size(); }
  const std::vector<int32_t>& ChoiceTokenIds(size_t i) const;
  const std::vector<TokenLogprob>& ChoiceLogprobs(size_t i) const;

 private:
  struct Choice;
  Json LogprobsJson(const Choice& c, size_t from, size_t to) const;
  std::string TokenText(int32_t id) const;
  Json ChunkOf(Json choice) const;
  void EmitChunk(Choice& c);  // streaming: appends the choice's news as one SSE event
  void Absorb(size_t channel, std::vector<StepOutput>& outs);
  void CancelChannel(size_t channel, const std::string& reason);

  LlmService* svc_;
  GenerationJob job_;
  std::string id_;
  int64_t created_ = 0;
  std::vector<std::shared_ptr<RequestChannel>> channels_;
  std::vector<bool> channel_done_;
  std::vector<std::unique_ptr<Choice>> choices_;
  std::optional<ApiError> error_;
  std::string stream_;  // SSE events not yet taken
  bool done_ = false, done_sent_ = false;
};

}  // namespace oc::llm::server
