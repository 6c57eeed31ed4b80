/* The counters and the CHECK macro shared by the C and C++ test programs: a check that fails
 * prints its place and message; each program ends with "ctest: N passed, N failed". */
#ifndef GPUISO_CTEST_CHECK_H
#define GPUISO_CTEST_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                          \
  do {                                            \
    if (cond) {                                   \
      passed++;                                   \
    } else {                                      \
      failed++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

#endif
