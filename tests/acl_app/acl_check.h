/* Tiny checking helpers shared by the AscendCL test applications. */
#ifndef OPENCANN_TESTS_ACL_CHECK_H_
#define OPENCANN_TESTS_ACL_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

static int g_failures = 0;
static int g_checks = 0;

/* Fails the test (and continues) when `call` does not return `expected`; an
 * error return must also leave a non-empty aclGetRecentErrMsg. */
#define EXPECT_CODE(call, expected)                                                              \
  do {                                                                                           \
    aclError rc_ = (call);                                                                       \
    ++g_checks;                                                                                  \
    if (rc_ != (expected)) {                                                                     \
      ++g_failures;                                                                              \
      fprintf(stderr, "FAIL %s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__, #call, \
              rc_, (int)(expected), aclGetRecentErrMsg());                                      \
    } else if (rc_ != ACL_SUCCESS && aclGetRecentErrMsg()[0] == '\0') {                           \
      ++g_failures;                                                                              \
      fprintf(stderr, "FAIL %s:%d: %s returned %d with an empty error message\n", __FILE__,       \
              __LINE__, #call, rc_);                                                             \
    }                                                                                            \
  } while (0)

#define EXPECT_OK(call) EXPECT_CODE(call, ACL_SUCCESS)

#define EXPECT_TRUE(cond)                                                               \
  do {                                                                                  \
    ++g_checks;                                                                         \
    if (!(cond)) {                                                                      \
      ++g_failures;                                                                     \
      fprintf(stderr, "FAIL %s:%d: expected %s\n", __FILE__, __LINE__, #cond);          \
    }                                                                                   \
  } while (0)

/* The recent message must mention `text`. */
#define EXPECT_MSG_HAS(text)                                                                    \
  do {                                                                                          \
    ++g_checks;                                                                                 \
    if (strstr(aclGetRecentErrMsg(), (text)) == NULL) {                                         \
      ++g_failures;                                                                             \
      fprintf(stderr, "FAIL %s:%d: message '%s' does not mention '%s'\n", __FILE__, __LINE__,   \
              aclGetRecentErrMsg(), (text));                                                    \
    }                                                                                           \
  } while (0)

/* Aborts the program: for set-up steps the rest depends on. */
#define REQUIRE_OK(call)                                                                        \
  do {                                                                                          \
    aclError rc_ = (call);                                                                      \
    if (rc_ != ACL_SUCCESS) {                                                                   \
      fprintf(stderr, "FATAL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, rc_,       \
              aclGetRecentErrMsg());                                                            \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

static int Summary(const char* name) {
  if (g_failures) {
    fprintf(stderr, "%s: %d of %d checks failed\n", name, g_failures, g_checks);
    return 1;
  }
  printf("%s: PASS (%d checks)\n", name, g_checks);
  return 0;
}

#endif
