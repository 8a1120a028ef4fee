/* tests/capi/capi_check.h: what the C API's C tests share (capi_test.c, capi_pods_test.c,
 * capi_fast_test.c): CHECK and EXPECT, which count failures and go on; the example config;
 * and the usual request and scheduler. C99 or later; each test includes it once. */
#ifndef HIVED_TESTS_CAPI_CAPI_CHECK_H_
#define HIVED_TESTS_CAPI_CAPI_CHECK_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hived/hived_c.h"

/* The checks that failed so far. */
static int failures = 0;

/* Counts a failure, naming the condition and the line, when `cond` is false. */
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* `code` is expected to be `want`; on an error the message must be set and contain `needle`
 * (NULL: any). Frees the message and sets `*error` to NULL. */
static inline void ExpectCode(hived_code code, hived_code want, char** error, const char* needle,
                              int line) {
  if (code != want) {
    fprintf(stderr, "line %d: got code %s, want %s (%s)\n", line, hived_code_name((int)code),
            hived_code_name((int)want), *error != NULL ? *error : "no message");
    ++failures;
  }
  if (want != HIVED_OK) {
    if (*error == NULL || (*error)[0] == '\0') {
      fprintf(stderr, "line %d: an error without a message\n", line);
      ++failures;
    } else if (needle != NULL && strstr(*error, needle) == NULL) {
      fprintf(stderr, "line %d: message \"%s\" lacks \"%s\"\n", line, *error, needle);
      ++failures;
    }
  }
  hived_free(*error);
  *error = NULL;
}
/* Checks `call`'s code against `want` (and its message against `needle`); the caller has
 * `char* err` and passes `&err` in the call. */
#define EXPECT(call, want, needle) ExpectCode((call), (want), &err, (needle), __LINE__)

/* The example cluster the tests run on (relative to the source root, CTest's working
 * directory). */
static const char* const kConfigPath = "config/examples/two-racks.yaml";

/* A request for `pods` pods of `gpus` GPUs each (`gpu_milli` of a GPU when not 0). */
static inline hived_request* MakeRequest(const char* name, const char* vc, int32_t priority,
                                         int32_t pods, int32_t gpus, int32_t gpu_milli) {
  hived_member member;
  memset(&member, 0, sizeof member);
  member.pod_number = pods;
  member.leaf_cell_number = gpus;
  member.gpu_milli = gpu_milli;
  hived_request_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.name = name;
  desc.vc = vc;
  desc.priority = priority;
  desc.members = &member;
  desc.member_count = 1;
  hived_request* request = NULL;
  char* err = NULL;
  EXPECT(hived_request_create(&desc, &request, &err), HIVED_OK, NULL);
  return request;
}

/* A scheduler of kConfigPath. */
static inline hived_scheduler* MakeScheduler(void) {
  hived_scheduler* s = NULL;
  char* err = NULL;
  EXPECT(hived_scheduler_create_from_file(kConfigPath, &s, &err), HIVED_OK, NULL);
  return s;
}

/* main's exit code: 1 with the count of failed checks, else 0 with "`program`: all checks
 * passed". */
static inline int CheckSummary(const char* program) {
  if (failures > 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("%s: all checks passed\n", program);
  return 0;
}

#endif /* HIVED_TESTS_CAPI_CAPI_CHECK_H_ */
