/* mcu_requant (mcu/requant.h) against mcu_mbqm (mcu/quant.h, TFLM's reference arithmetic) on
 * edge values and pseudo-random inputs, for positive multipliers [2^30, 2^31) and for the
 * negative ones QuantizeMultiplier gives a negative filter scale, [-2^31, -2^30]. One negative
 * pair is left out: a shifted accumulator and a multiplier both INT32_MIN, where gemmlowp
 * saturates and mcu_requant wraps; the build never lets a shifted sum reach INT32_MIN
 * (check_accumulator keeps it within INT32_MAX - 128). Prints "checked N mismatches M" and
 * exits 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>

#include "mcu/quant.h"
#include "mcu/requant.h"

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (uint32_t)(state >> 16);
}

static long mismatches = 0;
static long checked = 0;

static void check(int32_t acc, int32_t m, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  if (m == INT32_MIN && (int32_t)((uint32_t)acc << left) == INT32_MIN) {
    return;
  }
  int32_t want = mcu_mbqm(acc, m, shift);
  int32_t got = mcu_requant(acc, m, shift);
  ++checked;
  if (want != got && mismatches++ < 5) {
    printf("acc %ld m %ld shift %ld: mbqm %ld requant %ld\n", (long)acc, (long)m, (long)shift,
           (long)want, (long)got);
  }
}

/* One pseudo-random multiplier: [2^30, 2^31) when `positive`, else [-2^31, -2^30] (with
 * -2^30 itself now and then). */
static int32_t multiplier(int positive, uint32_t r) {
  if (positive) {
    return (int32_t)((1u << 30) | (next() & 0x3FFFFFFFu));
  }
  if ((r & 6u) == 0u) {
    return -(1 << 30);
  }
  return (int32_t)(0x80000000u | (next() & 0x3FFFFFFFu));
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000000;
  static const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, 0x3FFFFFFF, -0x40000000, INT32_MAX,
                                  INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, 1 << 20, -(1 << 20)};
  static const int32_t mults[] = {0,          1 << 30,       (1 << 30) + 1,  INT32_MAX,
                                  1518500250, 1717986918,    INT32_MIN,      INT32_MIN + 1,
                                  -(1 << 30), -(1 << 30) - 1, -1518500250,   -1717986918};
  for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; ++i) {
    for (unsigned j = 0; j < sizeof mults / sizeof mults[0]; ++j) {
      for (int32_t shift = -31; shift <= 30; ++shift) {
        check(edges[i], mults[j], shift);
      }
    }
  }
  for (int positive = 1; positive >= 0; --positive) {
    for (long k = 0; k < count; ++k) {
      uint32_t r = next();
      int32_t acc = (int32_t)next();
      if (r & 1u) {
        acc >>= (int)(next() % 31u); /* small accumulators too */
      }
      int32_t m = multiplier(positive, r);
      int32_t shift = (int32_t)(next() % 62u) - 31;
      check(acc, m, shift);
    }
  }
  printf("checked %ld mismatches %ld\n", checked, mismatches);
  return mismatches != 0;
}
