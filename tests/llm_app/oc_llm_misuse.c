/* Misuse of the offline LLM API: every NULL or garbage argument is refused
 * with an error code, a message and (where there is a reply pointer) the
 * OpenAI error JSON; nothing crashes. With a model folder as argv[1], the
 * same on an open handle. Prints one line per check; exits 1 if any failed. */
#include <stdio.h>
#include <string.h>

#include "opencann/oc_llm.h"

static int failures = 0;

static void check(const char* what, int rc, int want_rc, const char* reply, const char* want_in_message) {
  const char* msg = oc_llm_last_error();
  int ok = rc == want_rc && msg != NULL && strstr(msg, want_in_message) != NULL;
  if (reply != NULL) ok = ok && strstr(reply, "\"error\"") != NULL && strstr(reply, want_in_message) != NULL;
  printf("%s %s: rc %d, \"%s\"\n", ok ? "ok" : "FAILED", what, rc, msg ? msg : "(null)");
  if (!ok) failures++;
}

int main(int argc, char** argv) {
  oc_llm_t* llm = NULL;
  char* reply = NULL;
  check("open(NULL config)", oc_llm_open(NULL, &llm), 400, NULL, "config_json is NULL");
  check("open(NULL out)", oc_llm_open("{\"model\": \"x\"}", NULL), 400, NULL, "out is NULL");
  check("open(garbage)", oc_llm_open("{not json", &llm), 400, NULL, "not valid JSON");
  check("open(no model)", oc_llm_open("{}", &llm), 400, NULL, "model");
  check("open(unknown key)", oc_llm_open("{\"model\": \"x\", \"gpu_memory_utilization\": 0.9}", &llm), 400, NULL,
        "gpu_memory_utilization");
  check("open(bad value)", oc_llm_open("{\"model\": \"x\", \"max_num_seqs\": -3}", &llm), 400, NULL, "max_num_seqs");
  check("open(missing folder)", oc_llm_open("{\"model\": \"/nonexistent/model\"}", &llm), 404, NULL,
        "/nonexistent/model");
  if (llm != NULL) {
    printf("FAILED: *out is not NULL after a failed open\n");
    failures++;
  }
  check("completions(NULL handle)", oc_llm_completions(NULL, "{\"prompt\": \"a\"}", &reply), 400, reply, "handle is NULL");
  oc_llm_free(reply);
  reply = NULL;
  check("completions(NULL reply)", oc_llm_completions(NULL, "{}", NULL), 400, NULL, "reply_json is NULL");
  check("chat(NULL handle)", oc_llm_chat_completions(NULL, "{}", &reply), 400, reply, "handle is NULL");
  oc_llm_free(reply);
  reply = NULL;
  check("metrics(NULL)", oc_llm_metrics(NULL, NULL), 400, NULL, "text is NULL");
  check("tokenize(NULL handle)", oc_llm_tokenize(NULL, "{}", &reply), 400, reply, "handle is NULL");
  oc_llm_free(reply);
  reply = NULL;
  oc_llm_free(NULL);
  oc_llm_close(NULL);
  if (argc > 1) {
    char config[4096];
    snprintf(config, sizeof config, "{\"model\": \"%s\", \"threads\": 1}", argv[1]);
    int rc = oc_llm_open(config, &llm);
    printf("%s open(%s): rc %d %s\n", rc == 0 && llm ? "ok" : "FAILED", argv[1], rc, oc_llm_last_error());
    if (rc != 0 || llm == NULL) return 1;
    check("completions(NULL request)", oc_llm_completions(llm, NULL, &reply), 400, reply, "request_json is NULL");
    oc_llm_free(reply);
    reply = NULL;
    check("completions(garbage)", oc_llm_completions(llm, "\x01\xff{", &reply), 400, reply, "not valid JSON");
    oc_llm_free(reply);
    reply = NULL;
    check("completions(array)", oc_llm_completions(llm, "[1, 2]", &reply), 400, reply, "must be a JSON object");
    oc_llm_free(reply);
    reply = NULL;
    check("completions(bad field)", oc_llm_completions(llm, "{\"prompt\": \"a\", \"top_p\": 7}", &reply), 400, reply,
          "top_p");
    oc_llm_free(reply);
    reply = NULL;
    check("completions(stream)", oc_llm_completions(llm, "{\"prompt\": \"a\", \"stream\": true}", &reply), 400, reply,
          "stream is not supported");
    oc_llm_free(reply);
    reply = NULL;
    check("detokenize(bad ids)", oc_llm_detokenize(llm, "{\"tokens\": [-1]}", &reply), 400, reply, "tokens");
    oc_llm_free(reply);
    reply = NULL;
    rc = oc_llm_completions(llm, "{\"prompt\": \"a\", \"max_tokens\": 2}", &reply);
    printf("%s completion after the misuse: rc %d, last error \"%s\"\n",
           rc == 0 && reply && oc_llm_last_error()[0] == '\0' ? "ok" : "FAILED", rc, oc_llm_last_error());
    if (rc != 0 || !reply || oc_llm_last_error()[0] != '\0') failures++;
    oc_llm_free(reply);
    oc_llm_close(llm);
  }
  printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
