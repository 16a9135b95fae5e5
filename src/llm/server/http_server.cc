#include "llm/server/http_server.h"

#include <chrono>
#include <exception>

#include <httplib.h>

#include "llm/server/openai_api.h"

namespace oc::llm::server {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kHeartbeat = 1000ms;         // a write every second at most while waiting: a gone client is found
constexpr auto kNonStreamHold = 2000ms;     // a non-streaming reply waits this long before committing to chunked

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void Reply(httplib::Response& res, const ApiError& e) {
  res.status = e.http_status;
  res.set_content(Dump(e.Body()), "application/json");
}

void ReplyJson(httplib::Response& res, const Json& j) {
  res.status = 200;
  res.set_content(Dump(j), "application/json");
}

ApiError Error(int status, std::string message, std::string code = "") {
  ApiError e;
  e.http_status = status;
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

bool ParseBody(const httplib::Request& req, httplib::Response& res, Json* body) {
  *body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body->is_discarded()) {
    Reply(res, BadRequest("", "the request body is not valid JSON"));
    return false;
  }
  if (!body->is_object()) {
    Reply(res, BadRequest("", "the request body must be a JSON object"));
    return false;
  }
  return true;
}

}  // namespace

struct HttpServer::Impl {
  LlmService* svc;
  httplib::Server http;

  bool Authorized(const httplib::Request& req, httplib::Response& res, const std::string& key) {
    if (key.empty() || req.path.rfind("/v1/", 0) != 0) return true;
    if (req.get_header_value("Authorization") == "Bearer " + key) return true;
    Reply(res, Error(401, "missing or wrong API key: send the header \"Authorization: Bearer <key>\"", "invalid_api_key"));
    return false;
  }

  void Generate(const httplib::Request& req, httplib::Response& res, Endpoint ep) {
    Json body;
    if (!ParseBody(req, res, &body)) return;
    GenerationJob job;
    auto err = ep == Endpoint::kChat ? ParseChatRequest(body, *svc, &job) : ParseCompletionRequest(body, *svc, &job);
    if (err) return Reply(res, *err);
    const bool stream = job.stream;
    auto run = std::make_shared<GenerationRun>(svc, std::move(job));
    if (auto e = run->Start()) return Reply(res, *e);
    if (stream) {
      res.set_header("Cache-Control", "no-cache");
      res.set_chunked_content_provider("text/event-stream", [run](size_t, httplib::DataSink& sink) {
        auto quiet_since = Clock::now();
        for (;;) {
          const bool done = run->Poll(100ms);
          std::string events = run->TakeStreamEvents();
          if (events.empty() && !done && Clock::now() - quiet_since >= kHeartbeat) events = ": keep-alive\n\n";
          if (!events.empty()) {
            if (!sink.write(events.data(), events.size())) {
              run->Cancel();  // the client went away: its blocks are freed at the next step
              return false;
            }
            quiet_since = Clock::now();
          }
          if (done) {
            sink.done();
            return true;
          }
        }
      });
      return;
    }
    // Not streaming: a reply with its own status when it comes quickly; a longer
    // one goes out chunked, with a space written now and then (JSON allows
    // leading whitespace) so that a client that left is noticed and cancelled.
    const auto start = Clock::now();
    while (Clock::now() - start < kNonStreamHold)
      if (run->Poll(100ms)) {
        if (run->error()) return Reply(res, *run->error());
        return ReplyJson(res, run->Response());
      }
    res.set_chunked_content_provider("application/json", [run](size_t, httplib::DataSink& sink) {
      auto last = Clock::now();
      while (!run->Poll(100ms)) {
        if (Clock::now() - last < kHeartbeat) continue;
        if (!sink.write(" ", 1)) {
          run->Cancel();
          return false;
        }
        last = Clock::now();
      }
      const std::string out = Dump(run->error() ? run->error()->Body() : run->Response());
      if (!sink.write(out.data(), out.size())) return false;
      sink.done();
      return true;
    });
  }
};

HttpServer::HttpServer(LlmService* svc, HttpServerConfig cfg) : impl_(std::make_unique<Impl>()), cfg_(std::move(cfg)) {
  impl_->svc = svc;
  httplib::Server& http = impl_->http;
  Impl* im = impl_.get();
  const std::string key = cfg_.api_key;
  int threads = cfg_.threads;
  if (threads <= 0) threads = 64;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http.set_payload_max_length(cfg_.max_body_bytes);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second
  // server on the same port would start and silently share the requests.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  http.set_pre_routing_handler([im, key](const httplib::Request& req, httplib::Response& res) {
    return im->Authorized(req, res, key) ? httplib::Server::HandlerResponse::Unhandled
                                         : httplib::Server::HandlerResponse::Handled;
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Reply(res, Error(500, "internal error: " + what));
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) Reply(res, Error(404, "no route " + req.method + " " + req.path, "not_found"));
    else if (res.status == 413) Reply(res, Error(413, "the request body is too large"));
    else if (res.status == 400) Reply(res, BadRequest("", "malformed HTTP request"));
  });

  http.Get("/health", [im](const httplib::Request&, httplib::Response& res) {
    if (im->svc->healthy()) res.status = 200;
    else Reply(res, Error(503, "the engine failed; see the server's log"));
  });
  http.Get("/ping", [im](const httplib::Request&, httplib::Response& res) { res.status = im->svc->healthy() ? 200 : 503; });
  http.Get("/version", [](const httplib::Request&, httplib::Response& res) { ReplyJson(res, Json{{"version", "opencann"}}); });
  http.Get("/v1/models", [im](const httplib::Request&, httplib::Response& res) { ReplyJson(res, ModelList(*im->svc)); });
  http.Get("/metrics", [im](const httplib::Request&, httplib::Response& res) {
    res.set_content(im->svc->MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/openapi.json", [im](const httplib::Request&, httplib::Response& res) {
    res.set_content(OpenApiDocument(im->svc->model_name(), static_cast<int64_t>(im->svc->tokenizer().vocab_size()),
                                    im->svc->max_model_len()),
                    "application/json");
  });
  http.Post("/v1/completions", [im](const httplib::Request& req, httplib::Response& res) {
    im->Generate(req, res, Endpoint::kCompletions);
  });
  http.Post("/v1/chat/completions", [im](const httplib::Request& req, httplib::Response& res) {
    im->Generate(req, res, Endpoint::kChat);
  });
  http.Post("/tokenize", [im](const httplib::Request& req, httplib::Response& res) {
    Json body, reply;
    if (!ParseBody(req, res, &body)) return;
    if (auto e = Tokenize(body, *im->svc, &reply)) return Reply(res, *e);
    ReplyJson(res, reply);
  });
  http.Post("/detokenize", [im](const httplib::Request& req, httplib::Response& res) {
    Json body, reply;
    if (!ParseBody(req, res, &body)) return;
    if (auto e = Detokenize(body, *im->svc, &reply)) return Reply(res, *e);
    ReplyJson(res, reply);
  });
}

HttpServer::~HttpServer() = default;

Status HttpServer::Bind() {
  if (cfg_.port == 0) {
    port_ = impl_->http.bind_to_any_port(cfg_.host);
    if (port_ < 0) return Unavailable("cannot listen on ", cfg_.host, " (any port)");
    return Status::Ok();
  }
  if (cfg_.port < 0 || cfg_.port > 65535) return InvalidArgument("port ", cfg_.port, " is invalid (expected 0..65535)");
  if (!impl_->http.bind_to_port(cfg_.host, cfg_.port))
    return Unavailable("cannot listen on ", cfg_.host, ":", cfg_.port, " (the port is in use, or the host is not a local address)");
  port_ = cfg_.port;
  return Status::Ok();
}

void HttpServer::Run() { impl_->http.listen_after_bind(); }

void HttpServer::Stop() { impl_->http.stop(); }

}  // namespace oc::llm::server
