// OpenAI requests run to completion without HTTP: the C++ core of the offline
// API (liboc_llm.so in src/llm/capi/, python/oc_llm/). The request is parsed
// and checked exactly as /v1/completions and /v1/chat/completions parse it
// (openai_api.h), every prompt of it is submitted to the service at once (so
// many prompts run continuously batched), and the reply is the server's
// non-streaming reply.
//
//   Json reply;
//   if (auto err = RunToCompletion(*svc, body, Endpoint::kCompletions, &reply)) ... err->Body() ...
//
// One extension, off unless asked: "return_token_ids": true adds the ids
// (vLLM's field names): per choice "token_ids" (the generated ids, the one
// that completed a stop string included); the prompt's ids as
// "prompt_token_ids" on each choice (completions) or on the reply (chat);
// and, when logprobs were asked, per choice "token_id_logprobs": one
// {"token_id", "logprob", "top": [[id, logprob], ...]} per generated token
// (the top list by id, which the text-keyed OpenAI shapes cannot carry).
// "stream": true is refused (not supported here: the reply comes whole).
//
// Blocking; safe to call from many threads at once on one service.
#pragma once

#include <optional>

#include "llm/server/openai_api.h"

namespace oc::llm::server {

std::optional<ApiError> RunToCompletion(LlmService& svc, const Json& body, Endpoint endpoint, Json* reply);

}  // namespace oc::llm::server
