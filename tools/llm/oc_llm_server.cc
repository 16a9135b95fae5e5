// oc-llm-server: the OpenAI-compatible LLM server (src/llm/server/), with
// vLLM's flag names where vLLM has the same knob. `--help` lists them.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <pthread.h>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "llm/model/weight_dtype.h"
#include "llm/server/byte_size.h"
#include "llm/server/http_server.h"
#include "llm/server/service.h"

namespace {

const char kUsage[] = R"(usage: oc-llm-server --model DIR [options]

Serves the Hugging Face checkpoint folder DIR (config.json, *.safetensors,
tokenizer.json, tokenizer_config.json) with the OpenAI API: /v1/completions,
/v1/chat/completions (SSE streaming with "stream": true), /v1/models,
/tokenize, /detokenize, /health, /metrics (Prometheus), /openapi.json.

  --model DIR                    the model folder (required)
  --host H                       address to listen on (default 127.0.0.1)
  --port N                       port (default 8000; 0: any free port, printed)
  --served-model-name NAME       the name clients send as "model" (default: DIR as given)
  --api-key KEY                  require "Authorization: Bearer KEY" on /v1/* (default: none)
  --max-model-len N              context length (default: the model's maximum positions)
  --max-num-seqs N               sequences in one batch (default 64)
  --max-num-batched-tokens N     tokens in one step (default 2048; longer prompts are chunked)
  --block-size N                 positions per KV-cache block (default 16)
  --kv-cache-memory-bytes N      the KV-cache budget, e.g. 512MiB or 2G (default 1GiB)
  --max-waiting-requests N       requests that may wait for a batch slot; beyond, 429 (default 256)
  --tensor-parallel-size N       ranks for tensor parallelism (only 1 is supported so far)
  --dtype T                      weight precision: auto (= float32), float32, bfloat16, int8, int4
  --group-size N                 int8 / int4: inputs per scale (a multiple of 32; default: int8 per
                                 channel, int4 128)
  --threads N                    compute threads (default: the cores this process may use)
  --help                         this text
)";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "oc-llm-server: %s\n", msg.c_str());
  return 2;
}

bool ParsePositive(const std::string& s, int64_t* out, int64_t lo = 1) {
  try {
    size_t used = 0;
    long long n = std::stoll(s, &used);
    if (used != s.size() || n < lo) return false;
    *out = n;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT / SIGTERM stop the server cleanly: blocked here (before any thread
  // starts, so that every thread inherits the mask) and waited for by one thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  oc::llm::server::ServiceConfig cfg;
  oc::llm::server::HttpServerConfig http;
  int64_t threads = 0;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], v;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < args.size()) {
      v = args[++i];
    } else {
      return Fail(a + " needs a value (see --help)");
    }
    int64_t n = 0;
    auto positive = [&](int64_t lo = 1) {
      if (!ParsePositive(v, &n, lo)) {
        Fail(a + ": \"" + v + "\" is not an integer >= " + std::to_string(lo));
        return false;
      }
      return true;
    };
    if (a == "--model") cfg.engine.model_dir = v;
    else if (a == "--host") http.host = v;
    else if (a == "--served-model-name") cfg.served_model_name = v;
    else if (a == "--api-key") http.api_key = v;
    else if (a == "--port") { if (!positive(0)) return 2; if (n > 65535) return Fail("--port " + v + " is past 65535"); http.port = static_cast<int>(n); }
    else if (a == "--max-model-len") { if (!positive()) return 2; cfg.engine.max_model_len = n; }
    else if (a == "--max-num-seqs") { if (!positive()) return 2; cfg.engine.max_num_seqs = static_cast<int32_t>(std::min<int64_t>(n, 1 << 20)); }
    else if (a == "--max-num-batched-tokens") { if (!positive()) return 2; cfg.engine.max_num_batched_tokens = n; }
    else if (a == "--block-size") { if (!positive()) return 2; cfg.engine.block_size = n; }
    else if (a == "--max-waiting-requests") { if (!positive(0)) return 2; cfg.max_waiting_requests = n; }
    else if (a == "--threads") { if (!positive()) return 2; threads = std::min<int64_t>(n, oc::ThreadPool::kMaxThreads); }
    else if (a == "--kv-cache-memory-bytes") {
      if (!oc::llm::server::ParseByteSize(v, &cfg.engine.kv_cache_bytes)) return Fail(a + ": \"" + v + "\" is not a size (e.g. 536870912, 512MiB, 2G)");
    } else if (a == "--tensor-parallel-size") {
      if (!positive()) return 2;
      if (n != 1) return Fail("--tensor-parallel-size " + v + " is not supported yet (only 1)");
    } else if (a == "--dtype") {
      auto d = oc::llm::ParseWeightDtype(v);
      if (!d.ok()) return Fail("--dtype: " + d.status().message());
      cfg.engine.weight_dtype = *d;
    } else if (a == "--group-size") {
      if (!positive(0)) return 2;
      cfg.engine.weight_group_size = n;
    } else {
      return Fail("unknown argument " + a + " (see --help)");
    }
  }
  if (cfg.engine.model_dir.empty()) return Fail("--model DIR is required (see --help)");

  std::unique_ptr<oc::ThreadPool> pool;
  if (threads > 0) {
    pool = std::make_unique<oc::ThreadPool>(static_cast<int>(threads));
    cfg.engine.pool = pool.get();
  }
  auto svc = oc::llm::server::LlmService::Start(cfg);
  if (!svc.ok()) return Fail(svc.status().ToString());
  const oc::llm::EngineStats st = (*svc)->stats();
  std::fprintf(stderr,
               "oc-llm-server: KV cache of %d blocks x %lld positions from the %.1f MiB budget; max_model_len %lld; "
               "at most %lld sequences of that length at once\n",
               st.kv_blocks_total, static_cast<long long>(st.block_size),
               static_cast<double>(cfg.engine.kv_cache_bytes) / (1 << 20), static_cast<long long>(st.max_model_len),
               static_cast<long long>(st.max_concurrency));
  if (http.threads == 0)
    http.threads = static_cast<int>(std::min<int64_t>(4096, cfg.engine.max_num_seqs + cfg.max_waiting_requests + 16));
  oc::llm::server::HttpServer server(svc->get(), http);
  oc::Status bound = server.Bind();
  if (!bound.ok()) return Fail(bound.ToString());
  std::fprintf(stderr, "oc-llm-server: serving \"%s\" on http://%s:%d\n", (*svc)->model_name().c_str(),
               http.host.c_str(), server.port());
  std::fflush(stderr);
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "oc-llm-server: signal %d, stopping\n", sig);
    server.Stop();
  });
  server.Run();
  // Run returned (Stop, or the listener failed): wake the watcher if it still waits.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  return 0;
}
