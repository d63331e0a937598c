/* mcu_ort_out (mcu/ort_requant.h, the optimised kernels' output stage under `--onnx-numerics
 * ort`: an integer clamp after rounding, and on FPUs without VRINTR and the host the rounding
 * by adding 1.5 * 2^23) against mcu_ort_requant (the ort reference kernels': float clamp, then
 * nearbyintf), for every accumulator whose scaled value the build lets through (|acc * scale| <
 * 2^21): all halves and quarters (scales 2^-k), pseudo-random scales and accumulators, both
 * sides of every activation range and zero point. Prints "checked N mismatches M", exits 1 on
 * any mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcu/ort_requant.h"

static uint64_t state = 0x2545F4914F6CDD1Du;

static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (uint32_t)(state >> 16);
}

static long mismatches = 0;
static long checked = 0;

static void check(int32_t acc, float scale, int32_t zero, int32_t lo, int32_t hi) {
  if (fabsf((float)acc * scale) >= 2097152.0f) { /* what scaled_fits lets through */
    return;
  }
  const float scales[1] = {scale};
  const mcu_ort_requant_t rq = {0, zero, lo, hi, 1, scales};
  const mcu_ort_out_t o = mcu_ort_out_of(&rq);
  int32_t ours = mcu_ort_out(&o, acc, 0), theirs = mcu_ort_requant(&rq, acc, 0);
  ++checked;
  if (ours != theirs) {
    if (++mismatches <= 10) {
      printf("acc %ld scale %.9g zero %ld [%ld, %ld]: %ld, reference %ld\n", (long)acc,
             (double)scale, (long)zero, (long)lo, (long)hi, (long)ours, (long)theirs);
    }
  }
}

int main(int argc, char **argv) {
  long samples = argc > 1 ? atol(argv[1]) : 1000000;
  static const int32_t ranges[][2] = {{-128, 127}, {0, 255}, {-128, 0}, {3, 99}, {-20, 20}};
  for (int r = 0; r < 5; ++r) {
    for (int32_t zero = -128; zero <= 127; zero += 17) {
      for (int k = 0; k <= 8; ++k) { /* scales 2^-k: every tie at every magnitude */
        float scale = ldexpf(1.0f, -k);
        for (int32_t acc = -3000; acc <= 3000; ++acc) {
          check(acc, scale, zero, ranges[r][0], ranges[r][1]);
        }
      }
    }
  }
  for (long i = 0; i < samples; ++i) {
    float scale = ldexpf(1.0f + (float)(next() & 0xFFFFFF) / 16777216.0f, (int)(next() % 40) - 30);
    int32_t acc = (int32_t)next() >> (next() % 31);
    int32_t zero = (int32_t)(next() % 256) - 128;
    int32_t lo = (int32_t)(next() % 256) - 128;
    int32_t hi = lo + (int32_t)(next() % (uint32_t)(128 - lo));
    check(acc, scale, zero, lo, hi);
  }
  printf("checked %ld mismatches %ld\n", checked, mismatches);
  return mismatches != 0;
}
