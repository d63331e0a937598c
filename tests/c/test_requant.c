/* mcu_requant (mcu/requant.h) against mcu_mbqm (mcu/quant.h, TFLM's reference arithmetic) on
 * edge values and pseudo-random inputs, for positive multipliers [2^30, 2^31) and for the
 * negative ones QuantizeMultiplier gives a negative filter scale, [-2^31, -2^30]. One negative
 * pair is left out: a shifted accumulator and a multiplier both INT32_MIN, where gemmlowp
 * saturates and mcu_requant wraps; the build never lets a shifted sum reach INT32_MIN
 * (check_accumulator keeps it within INT32_MAX - 128). Then mcu_ort_out (mcu/ort_requant.h, the
 * optimised kernels' output stage under `--onnx-numerics ort`: the clamp on the rounded integer,
 * and on the host and FPUs without VRINTR the rounding by adding 1.5 * 2^23) against
 * mcu_ort_requant (the ort reference kernels': float clamp, then nearbyintf), within the bound
 * the build proves (|acc * scale| < 2^21). Prints "checked N mismatches M" and exits 1 on any
 * mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcu/ort_requant.h"
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

static void check_ort(int32_t acc, float scale, int32_t zero, int32_t lo, int32_t hi) {
  if (fabsf((float)acc * scale) >= 2097152.0f) { /* what scaled_fits lets through */
    return;
  }
  const float scales[1] = {scale};
  const mcu_ort_requant_t rq = {0, zero, lo, hi, 1, scales};
  const mcu_ort_out_t o = mcu_ort_out_of(&rq);
  int32_t ours = mcu_ort_out(&o, acc, 0), theirs = mcu_ort_requant(&rq, acc, 0);
  ++checked;
  if (ours != theirs) {
    if (mismatches++ < 5) {
      printf("acc %ld scale %.9g zero %ld [%ld, %ld]: %ld, reference %ld\n", (long)acc,
             (double)scale, (long)zero, (long)lo, (long)hi, (long)ours, (long)theirs);
    }
  }
}

/* mcu_ort_out against mcu_ort_requant: all halves and quarters (scales 2^-k) at every zero point
 * and activation range, then `count` pseudo-random cases. */
static void check_ort_all(long count) {
  static const int32_t ranges[][2] = {{-128, 127}, {0, 255}, {-128, 0}, {3, 99}, {-20, 20}};
  for (int r = 0; r < 5; ++r) {
    for (int32_t zero = -128; zero <= 127; zero += 17) {
      for (int k = 0; k <= 8; ++k) { /* scales 2^-k: every tie at every magnitude */
        float scale = ldexpf(1.0f, -k);
        for (int32_t acc = -3000; acc <= 3000; ++acc) {
          check_ort(acc, scale, zero, ranges[r][0], ranges[r][1]);
        }
      }
    }
  }
  for (long i = 0; i < count; ++i) {
    float scale = ldexpf(1.0f + (float)(next() & 0xFFFFFF) / 16777216.0f, (int)(next() % 40) - 30);
    int32_t acc = (int32_t)next() >> (next() % 31);
    int32_t zero = (int32_t)(next() % 256) - 128;
    int32_t lo = (int32_t)(next() % 256) - 128;
    int32_t hi = lo + (int32_t)(next() % (uint32_t)(128 - lo));
    check_ort(acc, scale, zero, lo, hi);
  }
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
  check_ort_all(count);
  printf("checked %ld mismatches %ld\n", checked, mismatches);
  return mismatches != 0;
}
