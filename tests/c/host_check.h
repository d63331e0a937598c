/* The CHECK of the host C test drivers (tests/c/test_allocator*.c): a failed condition prints one
 * FAIL line (what was being checked, where, why), and the driver stops after 20 of them. The
 * driver defines `failures` and `check_context` (a plan's label, the random plans). */
#ifndef HOST_CHECK_H
#define HOST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* Failed checks so far. */
extern unsigned long failures;
/* What is being checked, for the FAIL lines. */
extern const char *check_context;

#define CHECK(cond, ...)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "FAIL %s (%s:%d): ", check_context, __FILE__, __LINE__);      \
      fprintf(stderr, __VA_ARGS__);                                                 \
      fputc('\n', stderr);                                                          \
      if (++failures > 20) {                                                        \
        exit(1);                                                                    \
      }                                                                             \
    }                                                                               \
  } while (0)

#endif
