#include "llm/server/offline_run.h"

#include <chrono>

namespace oc::llm::server {
namespace {

Json LogprobsById(const std::vector<TokenLogprob>& lps) {
  Json out = Json::array();
  for (const TokenLogprob& lp : lps) {
    Json top = Json::array();
    for (const auto& [id, l] : lp.top) top.push_back(Json::array({id, l}));
    out.push_back(Json{{"token_id", lp.token}, {"logprob", lp.logprob}, {"top", top}});
  }
  return out;
}

}  // namespace

std::optional<ApiError> RunToCompletion(LlmService& svc, const Json& body, Endpoint endpoint, Json* reply) {
  if (!body.is_object()) return BadRequest("", "the request body must be a JSON object");
  bool token_ids = false;
  if (body.contains("return_token_ids") && !body["return_token_ids"].is_null()) {
    if (!body["return_token_ids"].is_boolean())
      return BadRequest("return_token_ids", "return_token_ids must be true or false, got " + body["return_token_ids"].dump());
    token_ids = body["return_token_ids"].get<bool>();
  }
  if (body.contains("stream") && body["stream"] == true) {
    ApiError e = BadRequest("stream", "stream is not supported by the offline API (its replies come whole); "
                                      "use oc-llm-server for streaming");
    e.code = "not_supported";
    return e;
  }
  GenerationJob job;
  auto err = endpoint == Endpoint::kChat ? ParseChatRequest(body, svc, &job) : ParseCompletionRequest(body, svc, &job);
  if (err) return err;
  const std::vector<std::vector<int32_t>> prompts = job.prompts;
  const size_t n = static_cast<size_t>(job.n);
  const bool logprobs = job.logprobs >= 0;
  GenerationRun run(&svc, std::move(job));
  if (auto e = run.Start()) return e;
  while (!run.Poll(std::chrono::milliseconds(100))) {
  }
  if (run.error()) return run.error();
  *reply = run.Response();
  if (!token_ids) return std::nullopt;
  Json& choices = (*reply)["choices"];
  for (size_t i = 0; i < choices.size() && i < run.num_choices(); ++i) {
    if (endpoint == Endpoint::kCompletions) choices[i]["prompt_token_ids"] = prompts.at(i / n);
    choices[i]["token_ids"] = run.ChoiceTokenIds(i);
    if (logprobs) choices[i]["token_id_logprobs"] = LogprobsById(run.ChoiceLogprobs(i));
  }
  if (endpoint == Endpoint::kChat) (*reply)["prompt_token_ids"] = prompts.at(0);
  return std::nullopt;
}

}  // namespace oc::llm::server
