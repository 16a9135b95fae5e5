// /openapi.json: the routes, their request bodies (the fields this server
// reads, with the ranges it accepts) and their replies, in OpenAPI 3.0.
#include "llm/server/http_server.h"
#include "llm/server/openai_api.h"

namespace oc::llm::server {
namespace {

Json Ref(const std::string& name) { return Json{{"$ref", "#/components/schemas/" + name}}; }
Json Type(const char* t) { return Json{{"type", t}}; }
Json Nullable(Json s) {
  s["nullable"] = true;
  return s;
}
Json Number(double lo, double hi) { return Json{{"type", "number"}, {"minimum", lo}, {"maximum", hi}}; }
Json Int(int64_t lo, int64_t hi) { return Json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}}; }
Json ArrayOf(Json items) { return Json{{"type", "array"}, {"items", std::move(items)}}; }
Json StringOrList() { return Json{{"oneOf", Json::array({Type("string"), ArrayOf(Type("string"))})}}; }

Json Object(Json props, Json required = Json::array()) {
  Json o{{"type", "object"}, {"properties", std::move(props)}};
  if (!required.empty()) o["required"] = std::move(required);
  return o;
}

// The sampling fields both generation endpoints take.
Json SamplingProps(int64_t vocab, int64_t max_len) {
  return Json{{"model", Type("string")},
              {"temperature", Number(0, 2)},
              {"top_p", Json{{"type", "number"}, {"exclusiveMinimum", true}, {"minimum", 0}, {"maximum", 1}}},
              {"top_k", Int(-1, 1000)},
              {"min_p", Number(0, 1)},
              {"n", Int(1, 4)},
              {"presence_penalty", Number(-2, 2)},
              {"frequency_penalty", Number(-2, 2)},
              {"repetition_penalty", Json{{"type", "number"}, {"exclusiveMinimum", true}, {"minimum", 0}, {"maximum", 2}}},
              {"seed", Type("integer")},
              {"stop", StringOrList()},
              {"stop_token_ids", ArrayOf(Int(0, vocab - 1))},
              {"ignore_eos", Type("boolean")},
              {"min_tokens", Int(0, max_len)},
              {"include_stop_str_in_output", Type("boolean")},
              {"skip_special_tokens", Type("boolean")},
              {"logit_bias", Json{{"type", "object"}, {"additionalProperties", Number(-100, 100)}}},
              {"stream", Type("boolean")},
              {"stream_options", Object(Json{{"include_usage", Type("boolean")}})},
              {"user", Type("string")}};
}

Json ErrorResponse(const char* what) {
  return Json{{"description", what}, {"content", Json{{"application/json", Json{{"schema", Ref("ErrorResponse")}}}}}};
}

Json GenerationPath(const char* summary, const std::string& request, const std::string& reply) {
  Json ok{{"description", "The reply; with stream = true, server-sent events (data: <chunk>, ..., data: [DONE])."},
          {"content", Json{{"application/json", Json{{"schema", Ref(reply)}}},
                           {"text/event-stream", Json{{"schema", Type("string")}}}}}};
  return Json{{"post", Json{{"summary", summary},
                            {"requestBody", Json{{"required", true},
                                                 {"content", Json{{"application/json", Json{{"schema", Ref(request)}}}}}}},
                            {"responses", Json{{"200", ok},
                                               {"400", ErrorResponse("A bad request: the error names the field")},
                                               {"401", ErrorResponse("Missing or wrong API key")},
                                               {"404", ErrorResponse("Unknown model")},
                                               {"429", ErrorResponse("The waiting queue is full")},
                                               {"503", ErrorResponse("The server is stopping or its engine failed")}}}}}};
}

Json JsonPath(const char* method, const char* summary, Json request, Json reply) {
  Json op{{"summary", summary},
          {"responses", Json{{"200", Json{{"description", "OK"},
                                          {"content", Json{{"application/json", Json{{"schema", std::move(reply)}}}}}}},
                             {"400", ErrorResponse("A bad request: the error names the field")},
                             {"401", ErrorResponse("Missing or wrong API key")},
                             {"404", ErrorResponse("Unknown model")}}}};
  if (!request.is_null())
    op["requestBody"] = Json{{"required", true}, {"content", Json{{"application/json", Json{{"schema", std::move(request)}}}}}};
  return Json{{method, op}};
}

Json Usage() {
  return Object(Json{{"prompt_tokens", Type("integer")}, {"completion_tokens", Type("integer")}, {"total_tokens", Type("integer")}},
                Json::array({"prompt_tokens", "completion_tokens", "total_tokens"}));
}

Json Reply(const char* choice_field, Json choice_schema) {
  Json choice = Object(Json{{"index", Type("integer")},
                            {choice_field, std::move(choice_schema)},
                            {"logprobs", Nullable(Type("object"))},
                            {"finish_reason", Nullable(Type("string"))}},
                       Json::array({"index", choice_field, "finish_reason"}));
  return Object(Json{{"id", Type("string")}, {"object", Type("string")}, {"created", Type("integer")},
                     {"model", Type("string")}, {"choices", ArrayOf(choice)}, {"usage", Usage()}},
                Json::array({"id", "object", "created", "model", "choices", "usage"}));
}

}  // namespace

std::string OpenApiDocument(const std::string& model_name, int64_t vocab, int64_t max_model_len) {
  Json completion = SamplingProps(vocab, max_model_len);
  completion["prompt"] = Json{{"oneOf", Json::array({Type("string"), ArrayOf(Type("string")), ArrayOf(Int(0, vocab - 1)),
                                                     ArrayOf(ArrayOf(Int(0, vocab - 1)))})}};
  completion["max_tokens"] = Int(1, 1 << 20);
  completion["logprobs"] = Int(0, 20);
  completion["echo"] = Type("boolean");
  completion["add_special_tokens"] = Type("boolean");
  Json message = Object(Json{{"role", Type("string")}, {"content", Nullable(Type("string"))}, {"name", Type("string")}},
                        Json::array({"role"}));
  Json chat = SamplingProps(vocab, max_model_len);
  chat["messages"] = Json{{"type", "array"}, {"minItems", 1}, {"items", message}};
  chat["max_tokens"] = Int(1, 1 << 20);
  chat["max_completion_tokens"] = Int(1, 1 << 20);
  chat["logprobs"] = Type("boolean");
  chat["top_logprobs"] = Int(0, 20);
  chat["add_generation_prompt"] = Type("boolean");
  chat["continue_final_message"] = Type("boolean");
  chat["add_special_tokens"] = Type("boolean");
  chat["chat_template_kwargs"] = Type("object");
  Json schemas{
      {"CompletionRequest", Object(completion, Json::array({"prompt"}))},
      {"ChatCompletionRequest", Object(chat, Json::array({"messages"}))},
      {"Completion", Reply("text", Type("string"))},
      {"ChatCompletion", Reply("message", Object(Json{{"role", Type("string")}, {"content", Nullable(Type("string"))}},
                                                 Json::array({"role", "content"})))},
      {"ErrorResponse",
       Object(Json{{"error", Object(Json{{"message", Type("string")}, {"type", Type("string")},
                                         {"param", Nullable(Type("string"))}, {"code", Nullable(Type("string"))}},
                                    Json::array({"message", "type"}))}},
              Json::array({"error"}))}};
  Json paths{
      {"/v1/completions", GenerationPath("Text completion (OpenAI)", "CompletionRequest", "Completion")},
      {"/v1/chat/completions", GenerationPath("Chat completion (OpenAI)", "ChatCompletionRequest", "ChatCompletion")},
      {"/v1/models", JsonPath("get", "The served model", nullptr,
                              Object(Json{{"object", Type("string")}, {"data", ArrayOf(Type("object"))}},
                                     Json::array({"object", "data"})))},
      {"/tokenize", JsonPath("post", "Text or chat messages to token ids",
                             Object(Json{{"model", Type("string")}, {"prompt", Type("string")},
                                         {"messages", Json{{"type", "array"}, {"minItems", 1}, {"items", message}}},
                                         {"add_special_tokens", Type("boolean")}, {"return_token_strs", Type("boolean")}}),
                             Object(Json{{"count", Type("integer")}, {"max_model_len", Type("integer")},
                                         {"tokens", ArrayOf(Type("integer"))}},
                                    Json::array({"count", "max_model_len", "tokens"})))},
      {"/detokenize", JsonPath("post", "Token ids to text",
                               Object(Json{{"model", Type("string")}, {"tokens", ArrayOf(Int(0, vocab - 1))}}, Json::array({"tokens"})),
                               Object(Json{{"prompt", Type("string")}}, Json::array({"prompt"})))},
      {"/health", Json{{"get", Json{{"summary", "200 while the engine serves"},
                                    {"responses", Json{{"200", Json{{"description", "Serving"}}},
                                                       {"503", ErrorResponse("The engine failed")}}}}}}},
      {"/metrics", Json{{"get", Json{{"summary", "Prometheus metrics (vLLM's names)"},
                                     {"responses", Json{{"200", Json{{"description", "Prometheus text format"},
                                                                     {"content", Json{{"text/plain", Json{{"schema", Type("string")}}}}}}}}}}}}}};
  Json doc{{"openapi", "3.0.3"},
           {"info", Json{{"title", "OpenCANN LLM server"}, {"version", "1"},
                         {"description", "OpenAI-compatible API serving " + model_name}}},
           {"paths", paths},
           {"components", Json{{"schemas", schemas}}}};
  return doc.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oc::llm::server
