// liboc_llm.so: the C API of include/opencann/oc_llm.h over LlmService and
// RunToCompletion (src/llm/server/). Every entry point catches everything:
// no exception crosses into C.
#include "opencann/oc_llm.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "base/thread_pool.h"
#include "llm/model/weight_dtype.h"
#include "llm/server/byte_size.h"
#include "llm/server/offline_run.h"
#include "llm/server/openai_api.h"
#include "llm/server/service.h"

struct oc_llm {
  std::unique_ptr<oc::ThreadPool> pool;  // declared first: destroyed after the service that uses it
  std::unique_ptr<oc::llm::server::LlmService> svc;
};

namespace {

using oc::llm::server::ApiError;
using oc::llm::server::BadRequest;
using oc::llm::server::Json;
using oc::llm::server::ParseByteSize;
using oc::Expected;
using oc::llm::ParseWeightDtype;
using oc::llm::WeightDtype;

thread_local std::string t_last_error;

ApiError Internal(std::string message) {
  ApiError e;
  e.http_status = 500;
  e.message = std::move(message);
  return e;
}

// A copy of s for the caller (released with oc_llm_free), or null when out of memory.
char* Dup(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.data(), s.size() + 1);
  return p;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The error's status; its message for oc_llm_last_error and its body in *out.
int Fail(const ApiError& e, char** out) {
  t_last_error = e.message;
  if (out) *out = Dup(Dump(e.Body()));
  return e.http_status;
}

int Succeed(const std::string& text, char** out) {
  *out = Dup(text);
  if (!*out) {
    t_last_error = "out of memory copying the reply";
    return 500;
  }
  return 0;
}

// Runs fn (which returns a status code) with every exception turned into a 500.
template <typename F>
int Guard(char** out, F&& fn) {
  try {
    t_last_error.clear();
    return fn();
  } catch (const std::bad_alloc&) {
    t_last_error = "out of memory";
    if (out) *out = nullptr;  // no room for an error body either
    return 500;
  } catch (const std::exception& e) {
    try {
      return Fail(Internal(std::string("internal error: ") + e.what()), out);
    } catch (...) {
      return 500;
    }
  } catch (...) {
    try {
      return Fail(Internal("internal error: unknown exception"), out);
    } catch (...) {
      return 500;
    }
  }
}

// The request text as a JSON object, or the server's error for it.
std::optional<ApiError> ParseRequest(oc_llm_t* llm, const char* request_json, Json* body) {
  if (!llm) return BadRequest("", "the oc_llm_t handle is NULL (open one with oc_llm_open)");
  if (!request_json) return BadRequest("", "request_json is NULL (expected a JSON object)");
  *body = Json::parse(request_json, nullptr, /*allow_exceptions=*/false);
  if (body->is_discarded()) return BadRequest("", "the request body is not valid JSON");
  if (!body->is_object()) return BadRequest("", "the request body must be a JSON object");
  return std::nullopt;
}

// A request entry point: checks, then fn(body, &reply) -> optional<ApiError>.
template <typename F>
int Request(oc_llm_t* llm, const char* request_json, char** reply_json, F&& fn) {
  return Guard(reply_json, [&]() -> int {
    if (!reply_json) return Fail(BadRequest("", "reply_json is NULL (expected the address of a char*)"), nullptr);
    *reply_json = nullptr;
    Json body, reply;
    if (auto e = ParseRequest(llm, request_json, &body)) return Fail(*e, reply_json);
    if (auto e = fn(*llm->svc, body, &reply)) return Fail(*e, reply_json);
    return Succeed(Dump(reply), reply_json);
  });
}


std::optional<ApiError> ConfigInt(const Json& v, const std::string& key, int64_t lo, int64_t hi, int64_t* out) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) ||
      v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return BadRequest(key, key + " must be an integer " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                               v.dump());
  *out = v.get<int64_t>();
  return std::nullopt;
}

struct Config {
  oc::llm::server::ServiceConfig svc;
  int64_t threads = 0;
};

std::optional<ApiError> ParseConfig(const Json& c, Config* cfg) {
  if (!c.is_object()) return BadRequest("", "the config must be a JSON object such as {\"model\": \"path/to/model\"}");
  cfg->svc.max_waiting_requests = 1000000;  // offline: a whole batch may wait
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  for (auto it = c.begin(); it != c.end(); ++it) {
    const std::string& k = it.key();
    const Json& v = it.value();
    int64_t n = 0;
    auto integer = [&](int64_t lo, int64_t hi) { return ConfigInt(v, k, lo, hi, &n); };
    std::optional<ApiError> err;
    if (k == "model" || k == "served_model_name") {
      if (!v.is_string()) return BadRequest(k, k + " must be a string, got " + v.dump());
      (k == "model" ? cfg->svc.engine.model_dir : cfg->svc.served_model_name) = v.get<std::string>();
    } else if (k == "max_model_len") {
      if ((err = integer(1, kMax))) return err;
      cfg->svc.engine.max_model_len = n;
    } else if (k == "max_num_seqs") {
      if ((err = integer(1, 1 << 20))) return err;
      cfg->svc.engine.max_num_seqs = static_cast<int32_t>(n);
    } else if (k == "max_num_batched_tokens") {
      if ((err = integer(1, kMax))) return err;
      cfg->svc.engine.max_num_batched_tokens = n;
    } else if (k == "block_size") {
      if ((err = integer(1, kMax))) return err;
      cfg->svc.engine.block_size = n;
    } else if (k == "max_waiting_requests") {
      if ((err = integer(0, std::numeric_limits<int64_t>::max()))) return err;
      cfg->svc.max_waiting_requests = n;
    } else if (k == "threads") {
      if ((err = integer(1, oc::ThreadPool::kMaxThreads))) return err;
      cfg->threads = n;
    } else if (k == "kv_cache_memory_bytes") {
      if (v.is_string()) {
        if (!ParseByteSize(v.get<std::string>(), &cfg->svc.engine.kv_cache_bytes))
          return BadRequest(k, k + " \"" + v.get<std::string>() + "\" is not a size (e.g. 536870912, \"512MiB\", \"2G\")");
      } else {
        if ((err = integer(1, std::numeric_limits<int64_t>::max()))) return err;
        cfg->svc.engine.kv_cache_bytes = n;
      }
    } else if (k == "tensor_parallel_size") {
      if ((err = integer(1, kMax))) return err;
      if (n != 1) {
        ApiError e = BadRequest(k, "tensor_parallel_size " + std::to_string(n) + " is not supported yet (only 1)");
        e.code = "not_supported";
        return e;
      }
    } else if (k == "dtype") {
      if (!v.is_string()) return BadRequest(k, "dtype must be a string, got " + v.dump());
      Expected<WeightDtype> d = ParseWeightDtype(v.get<std::string>());
      if (!d.ok()) return BadRequest(k, "dtype: " + d.status().message());
      cfg->svc.engine.weight_dtype = *d;
    } else if (k == "group_size") {
      if ((err = integer(0, kMax))) return err;
      cfg->svc.engine.weight_group_size = n;
    } else {
      return BadRequest(k, "unknown config key \"" + k +
                               "\" (expected model, served_model_name, max_model_len, max_num_seqs, "
                               "max_num_batched_tokens, block_size, kv_cache_memory_bytes, max_waiting_requests, "
                               "threads, tensor_parallel_size, dtype, group_size)");
    }
  }
  if (cfg->svc.engine.model_dir.empty()) return BadRequest("model", "model (the model folder) is required");
  return std::nullopt;
}

}  // namespace

extern "C" {

int oc_llm_open(const char* config_json, oc_llm_t** out) {
  return Guard(nullptr, [&]() -> int {
    if (!out) return Fail(BadRequest("", "out is NULL (expected the address of an oc_llm_t*)"), nullptr);
    *out = nullptr;
    if (!config_json) return Fail(BadRequest("", "config_json is NULL (expected a JSON object with \"model\")"), nullptr);
    const Json c = Json::parse(config_json, nullptr, /*allow_exceptions=*/false);
    if (c.is_discarded()) return Fail(BadRequest("", "the config is not valid JSON"), nullptr);
    Config cfg;
    if (auto e = ParseConfig(c, &cfg)) return Fail(*e, nullptr);
    auto h = std::make_unique<oc_llm>();
    if (cfg.threads > 0) {
      h->pool = std::make_unique<oc::ThreadPool>(static_cast<int>(cfg.threads));
      cfg.svc.engine.pool = h->pool.get();
    }
    auto svc = oc::llm::server::LlmService::Start(cfg.svc);
    if (!svc.ok()) {
      ApiError e = oc::llm::server::FromStatus(svc.status());
      if (svc.status().code() == oc::StatusCode::kNotFound) e.http_status = 404;
      if (svc.status().code() == oc::StatusCode::kInvalidFile) e.http_status = 400;
      e.message = svc.status().ToString();
      return Fail(e, nullptr);
    }
    h->svc = std::move(svc).value();
    *out = h.release();
    return 0;
  });
}

int oc_llm_completions(oc_llm_t* llm, const char* request_json, char** reply_json) {
  return Request(llm, request_json, reply_json, [](auto& svc, const Json& body, Json* reply) {
    return oc::llm::server::RunToCompletion(svc, body, oc::llm::server::Endpoint::kCompletions, reply);
  });
}

int oc_llm_chat_completions(oc_llm_t* llm, const char* request_json, char** reply_json) {
  return Request(llm, request_json, reply_json, [](auto& svc, const Json& body, Json* reply) {
    return oc::llm::server::RunToCompletion(svc, body, oc::llm::server::Endpoint::kChat, reply);
  });
}

int oc_llm_tokenize(oc_llm_t* llm, const char* request_json, char** reply_json) {
  return Request(llm, request_json, reply_json, [](auto& svc, const Json& body, Json* reply) {
    return oc::llm::server::Tokenize(body, svc, reply);
  });
}

int oc_llm_detokenize(oc_llm_t* llm, const char* request_json, char** reply_json) {
  return Request(llm, request_json, reply_json, [](auto& svc, const Json& body, Json* reply) {
    return oc::llm::server::Detokenize(body, svc, reply);
  });
}

int oc_llm_models(oc_llm_t* llm, char** reply_json) {
  return Guard(reply_json, [&]() -> int {
    if (!reply_json) return Fail(BadRequest("", "reply_json is NULL (expected the address of a char*)"), nullptr);
    *reply_json = nullptr;
    if (!llm) return Fail(BadRequest("", "the oc_llm_t handle is NULL (open one with oc_llm_open)"), reply_json);
    return Succeed(Dump(oc::llm::server::ModelList(*llm->svc)), reply_json);
  });
}

int oc_llm_metrics(oc_llm_t* llm, char** text) {
  return Guard(text, [&]() -> int {
    if (!text) return Fail(BadRequest("", "text is NULL (expected the address of a char*)"), nullptr);
    *text = nullptr;
    if (!llm) return Fail(BadRequest("", "the oc_llm_t handle is NULL (open one with oc_llm_open)"), text);
    return Succeed(llm->svc->MetricsText(), text);
  });
}

void oc_llm_free(char* s) { std::free(s); }

void oc_llm_close(oc_llm_t* llm) {
  try {
    delete llm;
  } catch (...) {  // (destructors do not throw; kept so that nothing can cross)
  }
}

const char* oc_llm_last_error(void) { return t_last_error.c_str(); }

}  // extern "C"
