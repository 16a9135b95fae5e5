// Request bodies of the OpenAI API -> GenerationJob (see openai_api.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "llm/server/openai_api.h"

namespace oc::llm::server {
namespace {

std::string Show(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool Absent(const Json& b, const char* key) { return !b.contains(key) || b[key].is_null(); }

std::optional<ApiError> OptNumber(const Json& b, const char* key, double* out) {
  if (Absent(b, key)) return std::nullopt;
  const Json& v = b[key];
  if (!v.is_number()) return BadRequest(key, std::string(key) + " must be a number, got " + Show(v));
  *out = v.get<double>();
  if (!std::isfinite(*out)) return BadRequest(key, std::string(key) + " must be finite");
  return std::nullopt;
}

std::optional<ApiError> OptInt(const Json& b, const char* key, int64_t lo, int64_t hi, int64_t* out) {
  if (Absent(b, key)) return std::nullopt;
  const Json& v = b[key];
  if (!v.is_number_integer())
    return BadRequest(key, std::string(key) + " must be an integer, got " + Show(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return BadRequest(key, std::string(key) + " " + Show(v) + " is out of range");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    return BadRequest(key, std::string(key) + " is " + std::to_string(x) + ", expected " + std::to_string(lo) + ".." +
                               std::to_string(hi));
  *out = x;
  return std::nullopt;
}

std::optional<ApiError> OptBool(const Json& b, const char* key, bool* out) {
  if (Absent(b, key)) return std::nullopt;
  if (!b[key].is_boolean()) return BadRequest(key, std::string(key) + " must be true or false, got " + Show(b[key]));
  *out = b[key].get<bool>();
  return std::nullopt;
}

#define OC_API_TRY(expr)                \
  do {                                  \
    auto oc_api_err_ = (expr);          \
    if (oc_api_err_) return oc_api_err_; \
  } while (0)

// Fields of the API this server knows but does not implement.
std::optional<ApiError> RefuseUnsupported(const Json& b) {
  auto refuse = [](const char* key, const std::string& what) {
    ApiError e = BadRequest(key, what + " is not supported by this server");
    e.code = "not_supported";
    return e;
  };
  if (!Absent(b, "tools") && !(b["tools"].is_array() && b["tools"].empty())) return refuse("tools", "tool calling (tools)");
  if (!Absent(b, "functions")) return refuse("functions", "function calling (functions)");
  if (!Absent(b, "function_call")) return refuse("function_call", "function calling (function_call)");
  if (!Absent(b, "tool_choice") && !(b["tool_choice"].is_string() && (b["tool_choice"] == "none" || b["tool_choice"] == "auto")))
    return refuse("tool_choice", "tool_choice " + Show(b["tool_choice"]));
  if (!Absent(b, "response_format") &&
      !(b["response_format"].is_object() && b["response_format"].value("type", "") == "text"))
    return refuse("response_format", "response_format " + Show(b["response_format"]) + " (only {\"type\": \"text\"})");
  if (!Absent(b, "audio")) return refuse("audio", "audio output");
  if (!Absent(b, "modalities") && b["modalities"] != Json::array({"text"}))
    return refuse("modalities", "modalities " + Show(b["modalities"]) + " (only [\"text\"])");
  if (!Absent(b, "prediction")) return refuse("prediction", "predicted outputs (prediction)");
  if (!Absent(b, "prompt_logprobs")) return refuse("prompt_logprobs", "prompt_logprobs");
  if (b.contains("use_beam_search") && b["use_beam_search"] == true) return refuse("use_beam_search", "beam search");
  for (const char* g : {"guided_json", "guided_regex", "guided_choice", "guided_grammar", "structured_outputs"})
    if (!Absent(b, g)) return refuse(g, std::string("guided decoding (") + g + ")");
  if (!Absent(b, "suffix") && !(b["suffix"].is_string() && b["suffix"].get<std::string>().empty()))
    return refuse("suffix", "suffix (insertion)");
  return std::nullopt;
}

// The sampling fields shared by both endpoints (vLLM's extra ones included).
std::optional<ApiError> ParseSampling(const Json& b, const LlmService& svc, GenerationJob* job) {
  SamplingParams& p = job->params;
  OC_API_TRY(OptNumber(b, "temperature", &p.temperature));
  OC_API_TRY(OptNumber(b, "top_p", &p.top_p));
  OC_API_TRY(OptNumber(b, "min_p", &p.min_p));
  OC_API_TRY(OptNumber(b, "presence_penalty", &p.presence_penalty));
  OC_API_TRY(OptNumber(b, "frequency_penalty", &p.frequency_penalty));
  OC_API_TRY(OptNumber(b, "repetition_penalty", &p.repetition_penalty));
  int64_t v = 0;
  if (!Absent(b, "top_k")) {
    OC_API_TRY(OptInt(b, "top_k", -1, std::numeric_limits<int32_t>::max(), &v));
    p.top_k = static_cast<int32_t>(v);
  }
  if (!Absent(b, "n")) {
    OC_API_TRY(OptInt(b, "n", 1, 128, &v));
    job->n = p.n = static_cast<int32_t>(v);
  }
  if (!Absent(b, "best_of")) {
    OC_API_TRY(OptInt(b, "best_of", 1, 128, &v));
    if (v != job->n) {
      ApiError e = BadRequest("best_of", "best_of " + std::to_string(v) + " different from n is not supported by this server");
      e.code = "not_supported";
      return e;
    }
  }
  if (!Absent(b, "seed")) {
    OC_API_TRY(OptInt(b, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &v));
    p.seed = static_cast<uint64_t>(v);
  }
  if (!Absent(b, "min_tokens")) {
    OC_API_TRY(OptInt(b, "min_tokens", 0, std::numeric_limits<int32_t>::max(), &v));
    p.min_tokens = v;
  }
  OC_API_TRY(OptBool(b, "ignore_eos", &p.ignore_eos));
  OC_API_TRY(OptBool(b, "include_stop_str_in_output", &job->text.include_stop));
  OC_API_TRY(OptBool(b, "skip_special_tokens", &job->text.skip_special_tokens));
  const int64_t vocab = static_cast<int64_t>(svc.tokenizer().vocab_size());
  if (!Absent(b, "logit_bias")) {
    const Json& lb = b["logit_bias"];
    if (!lb.is_object()) return BadRequest("logit_bias", "logit_bias must be an object {\"token id\": bias}, got " + Show(lb));
    for (auto it = lb.begin(); it != lb.end(); ++it) {
      char* end = nullptr;
      const long long id = std::strtoll(it.key().c_str(), &end, 10);
      if (it.key().empty() || *end != '\0' || id < 0 || id >= vocab)
        return BadRequest("logit_bias", "logit_bias key \"" + it.key() + "\" is not a token id 0.." + std::to_string(vocab - 1));
      if (!it.value().is_number() || !std::isfinite(it.value().get<double>()))
        return BadRequest("logit_bias", "logit_bias of token " + it.key() + " must be a number, got " + Show(it.value()));
      const double bias = std::clamp(it.value().get<double>(), -100.0, 100.0);  // OpenAI's range
      p.logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
    }
  }
  if (!Absent(b, "stop_token_ids")) {
    const Json& s = b["stop_token_ids"];
    if (!s.is_array()) return BadRequest("stop_token_ids", "stop_token_ids must be a list of token ids, got " + Show(s));
    for (const Json& t : s) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
        return BadRequest("stop_token_ids", "stop_token_ids holds " + Show(t) + ", expected token ids 0.." + std::to_string(vocab - 1));
      p.stop_token_ids.push_back(t.get<int32_t>());
    }
  }
  if (!Absent(b, "stop")) {
    const Json& s = b["stop"];
    if (s.is_string()) {
      job->text.stop.push_back(s.get<std::string>());
    } else if (s.is_array()) {
      for (const Json& x : s) {
        if (!x.is_string()) return BadRequest("stop", "stop must be a string or a list of strings, got " + Show(s));
        job->text.stop.push_back(x.get<std::string>());
      }
    } else {
      return BadRequest("stop", "stop must be a string or a list of strings, got " + Show(s));
    }
    for (const std::string& x : job->text.stop)
      if (x.empty()) return BadRequest("stop", "stop strings must not be empty");
  }
  OC_API_TRY(OptBool(b, "stream", &job->stream));
  if (!Absent(b, "stream_options")) {
    const Json& so = b["stream_options"];
    if (!so.is_object()) return BadRequest("stream_options", "stream_options must be an object, got " + Show(so));
    if (!job->stream) return BadRequest("stream_options", "stream_options is only allowed when stream is true");
    OC_API_TRY(OptBool(so, "include_usage", &job->include_usage));
  }
  return std::nullopt;
}

// max_tokens against the context: OpenAI's message and vLLM's numbers.
std::optional<ApiError> FitContext(const LlmService& svc, GenerationJob* job, bool has_max, const char* prompt_field) {
  const int64_t ctx = svc.max_model_len();
  for (const auto& prompt : job->prompts) {
    const int64_t len = static_cast<int64_t>(prompt.size());
    const int64_t want = has_max ? job->params.max_tokens : 0;
    if (len >= ctx || len + want > ctx) {
      return BadRequest(len >= ctx || !has_max ? prompt_field : "max_tokens",
                        "This model's maximum context length is " + std::to_string(ctx) + " tokens. However, you requested " +
                            std::to_string(len + want) + " tokens (" + std::to_string(len) + " in the " + prompt_field +
                            ", " + std::to_string(want) + " in the completion). Please reduce the length of the " +
                            prompt_field + " or completion.");
    }
  }
  if (!has_max) {  // chat without max_tokens: what the context leaves
    int64_t room = ctx;
    for (const auto& prompt : job->prompts) room = std::min<int64_t>(room, ctx - static_cast<int64_t>(prompt.size()));
    job->params.max_tokens = room;
  }
  if (job->params.min_tokens > job->params.max_tokens)
    return BadRequest("min_tokens", "min_tokens " + std::to_string(job->params.min_tokens) + " is more than max_tokens " +
                                        std::to_string(job->params.max_tokens));
  Status st = ValidateSamplingParams(job->params, static_cast<int64_t>(svc.tokenizer().vocab_size()));
  if (!st.ok()) {
    ApiError e = FromStatus(st);
    e.param = st.message().substr(0, st.message().find(' '));  // the messages start with the field's name
    return e;
  }
  return std::nullopt;
}

std::optional<ApiError> TokenIds(const Json& v, const char* field, int64_t vocab, std::vector<int32_t>* out) {
  if (v.empty()) return BadRequest(field, std::string(field) + " is empty");
  for (const Json& t : v) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      return BadRequest(field, std::string(field) + " holds " + Show(t) + ", expected token ids 0.." + std::to_string(vocab - 1));
    out->push_back(t.get<int32_t>());
  }
  return std::nullopt;
}

}  // namespace

Json ApiError::Body() const {
  const char* type = http_status == 404   ? "NotFoundError"
                     : http_status == 401 ? "AuthenticationError"
                     : http_status == 429 ? "RateLimitError"
                     : http_status == 503 ? "ServiceUnavailableError"
                     : http_status >= 500 ? "InternalServerError"
                                          : "BadRequestError";
  Json e = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) e["param"] = param;
  if (!code.empty()) e["code"] = code;
  return Json{{"error", e}};
}

ApiError BadRequest(std::string param, std::string message) {
  ApiError e;
  e.http_status = 400;
  e.param = std::move(param);
  e.message = std::move(message);
  return e;
}

ApiError FromStatus(const Status& st) {
  ApiError e;
  e.message = st.message();
  switch (st.code()) {
    case StatusCode::kInvalidArgument: case StatusCode::kOutOfRange: e.http_status = 400; break;
    case StatusCode::kNotSupported: e.http_status = 400; e.code = "not_supported"; break;
    case StatusCode::kResourceExhausted: e.http_status = 429; break;
    case StatusCode::kUnavailable: e.http_status = 503; break;
    default: e.http_status = 500; break;
  }
  return e;
}

std::optional<ApiError> CheckModel(const Json& body, const LlmService& svc) {
  if (Absent(body, "model")) return std::nullopt;
  if (!body["model"].is_string()) return BadRequest("model", "model must be a string, got " + Show(body["model"]));
  if (body["model"].get<std::string>() == svc.model_name()) return std::nullopt;
  ApiError e;
  e.http_status = 404;
  e.param = "model";
  e.code = "model_not_found";
  e.message = "The model `" + body["model"].get<std::string>() + "` does not exist; this server serves `" + svc.model_name() + "`.";
  return e;
}

Json ModelList(const LlmService& svc) {
  return Json{{"object", "list"},
              {"data", Json::array({Json{{"id", svc.model_name()}, {"object", "model"}, {"created", 0},
                                         {"owned_by", "opencann"}, {"root", svc.model_name()},
                                         {"max_model_len", svc.max_model_len()}}})}};
}

std::optional<ApiError> ParseCompletionRequest(const Json& b, const LlmService& svc, GenerationJob* job) {
  if (!b.is_object()) return BadRequest("", "the request body must be a JSON object");
  job->endpoint = Endpoint::kCompletions;
  OC_API_TRY(CheckModel(b, svc));
  job->model = svc.model_name();
  OC_API_TRY(RefuseUnsupported(b));
  job->params.max_tokens = 16;  // the OpenAI default for completions
  OC_API_TRY(ParseSampling(b, svc, job));
  bool has_max = true;
  int64_t v = 0;
  if (!Absent(b, "max_tokens")) {
    OC_API_TRY(OptInt(b, "max_tokens", 1, std::numeric_limits<int32_t>::max(), &v));
    job->params.max_tokens = v;
  }
  if (!Absent(b, "logprobs")) {
    OC_API_TRY(OptInt(b, "logprobs", 0, 20, &v));
    job->logprobs = job->params.logprobs = static_cast<int32_t>(v);
  }
  bool echo = false, add_special = true;
  OC_API_TRY(OptBool(b, "echo", &echo));
  OC_API_TRY(OptBool(b, "add_special_tokens", &add_special));
  if (echo && job->logprobs >= 0) {
    ApiError e = BadRequest("echo", "echo together with logprobs (the prompt's logprobs) is not supported by this server");
    e.code = "not_supported";
    return e;
  }
  if (!b.contains("prompt")) return BadRequest("prompt", "prompt is required");
  const Json& pr = b["prompt"];
  const int64_t vocab = static_cast<int64_t>(svc.tokenizer().vocab_size());
  auto add_text = [&](const std::string& s) {
    job->prompts.push_back(svc.tokenizer().Encode(s, add_special));
    job->echo.push_back(s);
  };
  const char* shape = "prompt must be a string, a list of strings, a list of token ids or a list of such lists";
  if (pr.is_string()) {
    add_text(pr.get<std::string>());
  } else if (pr.is_array() && !pr.empty() && pr[0].is_string()) {
    for (const Json& s : pr) {
      if (!s.is_string()) return BadRequest("prompt", shape);
      add_text(s.get<std::string>());
    }
  } else if (pr.is_array() && !pr.empty() && pr[0].is_number()) {
    job->prompts.emplace_back();
    OC_API_TRY(TokenIds(pr, "prompt", vocab, &job->prompts.back()));
  } else if (pr.is_array() && !pr.empty() && pr[0].is_array()) {
    for (const Json& ids : pr) {
      if (!ids.is_array()) return BadRequest("prompt", shape);
      job->prompts.emplace_back();
      OC_API_TRY(TokenIds(ids, "prompt", vocab, &job->prompts.back()));
    }
  } else {
    return BadRequest("prompt", std::string(shape) + "; got " + Show(pr));
  }
  if (job->prompts.size() > 256) return BadRequest("prompt", "at most 256 prompts per request");
  for (size_t i = 0; i < job->prompts.size(); ++i) {
    if (job->prompts[i].empty())
      return BadRequest("prompt", "prompt " + std::to_string(i) + " is empty (no tokens); give some text or token ids");
    if (job->echo.size() > i && !echo) job->echo[i].clear();
  }
  if (!echo) job->echo.clear();
  else if (job->echo.empty())  // token-id prompts echo their decoded text
    for (const auto& ids : job->prompts) {
      auto text = svc.tokenizer().Decode(ids, false);
      job->echo.push_back(text.ok() ? *text : std::string());
    }
  return FitContext(svc, job, has_max, "prompt");
}

std::optional<ApiError> ParseChatRequest(const Json& b, const LlmService& svc, GenerationJob* job) {
  if (!b.is_object()) return BadRequest("", "the request body must be a JSON object");
  job->endpoint = Endpoint::kChat;
  OC_API_TRY(CheckModel(b, svc));
  job->model = svc.model_name();
  OC_API_TRY(RefuseUnsupported(b));
  OC_API_TRY(ParseSampling(b, svc, job));
  int64_t v = 0;
  bool has_max = false;
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (Absent(b, key) || has_max) continue;
    OC_API_TRY(OptInt(b, key, 1, std::numeric_limits<int32_t>::max(), &v));
    job->params.max_tokens = v;
    has_max = true;
  }
  bool logprobs = false;
  OC_API_TRY(OptBool(b, "logprobs", &logprobs));
  if (logprobs) {
    job->logprobs = 0;
    if (!Absent(b, "top_logprobs")) {
      OC_API_TRY(OptInt(b, "top_logprobs", 0, 20, &v));
      job->logprobs = static_cast<int32_t>(v);
    }
    job->params.logprobs = job->logprobs;
  } else if (!Absent(b, "top_logprobs")) {
    return BadRequest("top_logprobs", "top_logprobs needs logprobs set to true");
  }
  if (!b.contains("messages") || !b["messages"].is_array() || b["messages"].empty())
    return BadRequest("messages", "messages must be a non-empty list of {\"role\", \"content\"} objects");
  Json messages = Json::array();
  for (size_t i = 0; i < b["messages"].size(); ++i) {
    const Json& m = b["messages"][i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return BadRequest("messages", at + " must be an object with a string \"role\"");
    Json msg = m;
    if (m.contains("content") && m["content"].is_array()) {  // content parts: text only
      std::string text;
      for (const Json& part : m["content"]) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string()) {
          ApiError e = BadRequest("messages", at + ".content: only parts of type \"text\" are supported, got " + Show(part));
          e.code = "not_supported";
          return e;
        }
        if (!text.empty()) text += "\n";
        text += part["text"].get<std::string>();
      }
      msg["content"] = text;
    } else if (m.contains("content") && !m["content"].is_string() && !m["content"].is_null()) {
      return BadRequest("messages", at + ".content must be a string or a list of text parts, got " + Show(m["content"]));
    }
    messages.push_back(std::move(msg));
  }
  const ChatTemplate* tmpl = svc.chat_template();
  std::optional<ChatTemplate> custom;
  if (!Absent(b, "chat_template")) {
    if (!b["chat_template"].is_string()) return BadRequest("chat_template", "chat_template must be a string");
    auto parsed = ChatTemplate::Parse(b["chat_template"].get<std::string>());
    if (!parsed.ok()) return BadRequest("chat_template", parsed.status().message());
    custom.emplace(std::move(parsed).value());
    tmpl = &*custom;
  }
  if (!tmpl)
    return BadRequest("messages", "the model has no chat template (tokenizer_config.json holds no chat_template); "
                                  "use /v1/completions or give chat_template");
  bool add_generation_prompt = true, continue_final = false, add_special = false;
  OC_API_TRY(OptBool(b, "add_generation_prompt", &add_generation_prompt));
  OC_API_TRY(OptBool(b, "continue_final_message", &continue_final));
  OC_API_TRY(OptBool(b, "add_special_tokens", &add_special));
  if (continue_final && add_generation_prompt && b.contains("add_generation_prompt"))
    return BadRequest("continue_final_message", "continue_final_message and add_generation_prompt cannot both be true");
  if (continue_final) add_generation_prompt = false;
  Json ctx = Json::object();
  if (!Absent(b, "chat_template_kwargs")) {
    if (!b["chat_template_kwargs"].is_object())
      return BadRequest("chat_template_kwargs", "chat_template_kwargs must be an object");
    ctx = b["chat_template_kwargs"];
  }
  ctx["messages"] = messages;
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["bos_token"] = svc.bos_token();
  ctx["eos_token"] = svc.eos_token();
  Status st = NormalizeChatMessages(&ctx);
  if (!st.ok()) return BadRequest("messages", st.message());
  auto text = tmpl->Render(ctx);
  if (!text.ok()) return BadRequest("messages", "the chat template failed on these messages: " + text.status().message());
  std::string prompt = std::move(text).value();
  if (continue_final) {  // generation continues the last message: cut what the template put after its content
    const Json& last = messages.back();
    if (last.contains("content") && last["content"].is_string()) {
      const std::string c = last["content"].get<std::string>();
      const size_t at = c.empty() ? std::string::npos : prompt.rfind(c);
      if (at != std::string::npos) prompt.resize(at + c.size());
    }
  }
  job->prompts.push_back(svc.tokenizer().Encode(prompt, add_special));
  if (job->prompts.back().empty()) return BadRequest("messages", "the rendered chat prompt has no tokens");
  return FitContext(svc, job, has_max, "messages");
}

std::optional<ApiError> Tokenize(const Json& b, const LlmService& svc, Json* reply) {
  if (!b.is_object()) return BadRequest("", "the request body must be a JSON object");
  OC_API_TRY(CheckModel(b, svc));
  std::vector<int32_t> ids;
  if (b.contains("messages")) {
    GenerationJob job;
    Json chat = b;
    chat.erase("model");
    chat["max_tokens"] = 1;
    for (const char* k : {"prompt", "return_token_strs"}) chat.erase(k);
    // A prompt that fills the context is still tokenized: check the rendering only.
    auto err = ParseChatRequest(chat, svc, &job);
    if (err && job.prompts.empty()) return err;
    ids = job.prompts.empty() ? std::vector<int32_t>() : job.prompts[0];
  } else {
    if (!b.contains("prompt") || !b["prompt"].is_string()) return BadRequest("prompt", "prompt must be a string");
    bool add_special = true;
    OC_API_TRY(OptBool(b, "add_special_tokens", &add_special));
    ids = svc.tokenizer().Encode(b["prompt"].get<std::string>(), add_special);
  }
  bool strs = false;
  OC_API_TRY(OptBool(b, "return_token_strs", &strs));
  *reply = Json{{"count", ids.size()}, {"max_model_len", svc.max_model_len()}, {"tokens", ids}};
  if (strs) {
    Json s = Json::array();
    for (int32_t id : ids) s.push_back(svc.tokenizer().IdToToken(id).value_or(""));
    (*reply)["token_strs"] = s;
  }
  return std::nullopt;
}

std::optional<ApiError> Detokenize(const Json& b, const LlmService& svc, Json* reply) {
  if (!b.is_object()) return BadRequest("", "the request body must be a JSON object");
  OC_API_TRY(CheckModel(b, svc));
  if (!b.contains("tokens") || !b["tokens"].is_array()) return BadRequest("tokens", "tokens must be a list of token ids");
  std::vector<int32_t> ids;
  const int64_t vocab = static_cast<int64_t>(svc.tokenizer().vocab_size());
  if (!b["tokens"].empty()) OC_API_TRY(TokenIds(b["tokens"], "tokens", vocab, &ids));
  auto text = svc.tokenizer().Decode(ids, false);
  if (!text.ok()) return BadRequest("tokens", text.status().message());
  *reply = Json{{"prompt", *text}};
  return std::nullopt;
}

}  // namespace oc::llm::server
