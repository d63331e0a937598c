/* What the int8 matrix product's files (kernels/opt/mat_mult_s8.c, mat_mult_s8_pairs.c) share:
 * the widening of rows into 16-bit lanes, a widened row's dot product, the short
 * requantisation of one sum and the DSP paths' conditions (mat_mult_s8.c's header says how
 * they compute). Private to those files. */
#ifndef MCU_MAT_MULT_S8_LANES_H
#define MCU_MAT_MULT_S8_LANES_H

#include <string.h>

#include "mcu/mat_mult_s8.h"
#include "mcu/simd.h"

/* The first `n` (1 to 3) bytes at `p` in a word, the rest 0. */
static inline uint32_t tail_word(const int8_t *p, int32_t n) {
  uint32_t w = 0;
  memcpy(&w, p, (size_t)n);
  return w;
}

static inline __attribute__((always_inline)) void widen_word(uint32_t w, int doubled,
                                                             uint32_t *s) {
  uint32_t even = mcu_sxtb16(w);
  uint32_t odd = mcu_sxtb16_ror8(w);
  if (doubled) {
    even = mcu_sxtab16(even, w);
    odd = mcu_sxtab16_ror8(odd, w);
  }
  s[0] = even;
  s[1] = odd;
}

static inline __attribute__((always_inline)) void widen_rows(const int8_t *x0, const int8_t *x1,
                                                             int32_t depth, int doubled,
                                                             uint32_t *s) {
  int32_t blocks = depth >> 2;
  for (int32_t j = 0; j < blocks; ++j, s += 4) {
    widen_word(mcu_load_u32(x0 + 4 * j), doubled, s);
    widen_word(mcu_load_u32(x1 + 4 * j), doubled, s + 2);
  }
  if (depth & 3) {
    widen_word(tail_word(x0 + 4 * blocks, depth & 3), doubled, s);
    widen_word(tail_word(x1 + 4 * blocks, depth & 3), doubled, s + 2);
  }
}

/* The short requantisation of one sum (the file's header). */
static inline int8_t short_out(int32_t acc2, int32_t m, int32_t right1, int32_t round) {
  return (int8_t)mcu_ssat8_asr1(mcu_smmlar(acc2, m, round + (acc2 >> 31)) >> right1);
}

/* One channel's weight word `w` against one widened row's words s[0..1]: += dot. */
static inline int32_t row_dot(const uint32_t *s, uint32_t w, int32_t acc) {
  return mcu_smlad(mcu_sxtb16_ror8(w), s[1], mcu_smlad(mcu_sxtb16(w), s[0], acc));
}

#if MCU_SIMD_DSP
/* The DSP paths' conditions: LDM and LDRD need word-aligned addresses; whole blocks only. */
static inline int dsp_ready(const void *s, const void *w, int32_t depth) {
  return ((uintptr_t)s & 3) == 0 && ((uintptr_t)w & 3) == 0 && (depth & 3) == 0 && depth > 0;
}
#endif

#endif
