/* An application of the offline LLM API built the way a user builds one:
 * include/opencann/oc_llm.h + -loc_llm. Runs one /v1/completions request.
 *
 *   oc_llm_complete MODEL_DIR REQUEST_JSON [CONFIG_JSON_EXTRA]
 *
 * prints the reply JSON on stdout and exits 0, or prints the error and exits
 * with 1 (open failed) or 2 (the request failed; the error JSON on stdout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencann/oc_llm.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL_DIR REQUEST_JSON\n", argv[0]);
    return 64;
  }
  /* The config: {"model": DIR, "threads": 2} (a real program would escape DIR for JSON). */
  size_t len = strlen(argv[1]) + 64;
  char* config = malloc(len);
  if (!config) return 70;
  snprintf(config, len, "{\"model\": \"%s\", \"threads\": 2}", argv[1]);
  oc_llm_t* llm = NULL;
  int rc = oc_llm_open(config, &llm);
  free(config);
  if (rc != 0) {
    fprintf(stderr, "oc_llm_open: %d: %s\n", rc, oc_llm_last_error());
    return 1;
  }
  char* reply = NULL;
  rc = oc_llm_completions(llm, argv[2], &reply);
  if (reply) puts(reply);
  if (rc != 0) fprintf(stderr, "oc_llm_completions: %d: %s\n", rc, oc_llm_last_error());
  oc_llm_free(reply);
  oc_llm_close(llm);
  return rc == 0 ? 0 : 2;
}
