// The HTTP front of the LLM server (cpp-httplib): the OpenAI-compatible
// routes over LlmService, SSE streaming, API-key checks, and client
// disconnects turned into cancellations. See docs/llm.md ("Server").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "llm/server/service.h"

namespace oc::llm::server {

struct HttpServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;             // 0: any free port (port() tells which)
  std::string api_key;         // empty: no check; else /v1/* need "Authorization: Bearer KEY"
  int threads = 0;             // connection threads; 0: enough for max_num_seqs + the waiting queue
  size_t max_body_bytes = 32 << 20;
};

class HttpServer {
 public:
  HttpServer(LlmService* svc, HttpServerConfig cfg);
  ~HttpServer();
  Status Bind();   // the host and port; a port in use is an error naming it
  int port() const { return port_; }
  void Run();      // serves until Stop()
  void Stop();     // safe from any thread (a signal watcher)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  HttpServerConfig cfg_;
  int port_ = 0;
};

// The OpenAPI 3.0 description of the routes (served at /openapi.json).
std::string OpenApiDocument(const std::string& model_name, int64_t vocab, int64_t max_model_len);

}  // namespace oc::llm::server
