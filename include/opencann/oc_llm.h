/*
 * liboc_llm.so: OpenCANN's offline LLM API in C (docs/llm.md, "Offline API").
 *
 * The requests and replies are the JSON of the OpenAI-compatible server
 * (build/oc-llm-server) without HTTP: oc_llm_completions takes the body of
 * POST /v1/completions and gives the reply /v1/completions would give (not
 * streaming), and so on. A request with many prompts runs them continuously
 * batched; calls from several threads on one handle share the engine's batch.
 *
 *   oc_llm_t* llm = NULL;
 *   if (oc_llm_open("{\"model\": \"path/to/model\"}", &llm) != 0) {
 *     fprintf(stderr, "%s\n", oc_llm_last_error());
 *     return 1;
 *   }
 *   char* reply = NULL;
 *   int rc = oc_llm_completions(llm, "{\"prompt\": \"Hello\", \"max_tokens\": 8}", &reply);
 *   puts(reply);                 // the reply JSON, or the OpenAI error JSON when rc != 0
 *   oc_llm_free(reply);
 *   oc_llm_close(llm);
 *
 * Return codes: 0 on success; otherwise the HTTP status the server would
 * answer with (400 a bad request or argument, 404 another model, 429 the
 * waiting queue is full, 500 an internal error or no memory, 503 the engine
 * failed), with {"error": {"message", "type", "param", "code"}} in *reply_json
 * (when reply_json is not NULL) and the message in oc_llm_last_error().
 * NULL arguments are refused with 400. No C++ exception leaves these calls.
 *
 * Extension of the request JSON (off unless asked): "return_token_ids": true
 * adds per choice "token_ids" and "prompt_token_ids" (chat: the reply's
 * "prompt_token_ids"), and with logprobs "token_id_logprobs".
 */
#ifndef OPENCANN_OC_LLM_H_
#define OPENCANN_OC_LLM_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define OC_LLM_API __attribute__((visibility("default")))
#else
#define OC_LLM_API
#endif

typedef struct oc_llm oc_llm_t;

/* Loads a model folder (config.json, *.safetensors, tokenizer.json,
 * tokenizer_config.json) and starts its engine. config_json is an object with
 * the server's flags as keys (underscores for dashes):
 *   "model" (required), "served_model_name", "max_model_len", "max_num_seqs",
 *   "max_num_batched_tokens", "block_size", "kv_cache_memory_bytes" (a number
 *   or a string such as "512MiB"), "max_waiting_requests" (default 1000000),
 *   "threads", "tensor_parallel_size" (1), "dtype" ("auto" / "float32").
 * An unknown key is refused by name. On success *out holds the handle; on
 * failure *out is NULL and oc_llm_last_error() tells why. */
OC_LLM_API int oc_llm_open(const char* config_json, oc_llm_t** out);

/* POST /v1/completions and POST /v1/chat/completions: blocks until every
 * choice is done. *reply_json is allocated here: release it with oc_llm_free. */
OC_LLM_API int oc_llm_completions(oc_llm_t* llm, const char* request_json, char** reply_json);
OC_LLM_API int oc_llm_chat_completions(oc_llm_t* llm, const char* request_json, char** reply_json);

/* POST /tokenize ({"prompt"} or {"messages"} -> {"count", "max_model_len", "tokens"})
 * and POST /detokenize ({"tokens"} -> {"prompt"}). */
OC_LLM_API int oc_llm_tokenize(oc_llm_t* llm, const char* request_json, char** reply_json);
OC_LLM_API int oc_llm_detokenize(oc_llm_t* llm, const char* request_json, char** reply_json);

/* GET /v1/models (JSON) and GET /metrics (Prometheus text, vLLM's names). */
OC_LLM_API int oc_llm_models(oc_llm_t* llm, char** reply_json);
OC_LLM_API int oc_llm_metrics(oc_llm_t* llm, char** text);

/* Releases a string these calls returned; NULL is ignored. */
OC_LLM_API void oc_llm_free(char* s);

/* Stops the engine and releases the model; NULL is ignored. No other call on
 * the handle may be running or made afterwards. */
OC_LLM_API void oc_llm_close(oc_llm_t* llm);

/* The message of this thread's last failed call ("" after a successful one).
 * Valid until this thread's next call. */
OC_LLM_API const char* oc_llm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_OC_LLM_H_ */
