#ifndef MCU_OPT_DW_S8_FILL_H
#define MCU_OPT_DW_S8_FILL_H

/* Part of kernels/opt/depthwise_conv_2d_s8.c, included by it alone: the planar path's band fill
 * of four channels (assembly on DSP cores, C elsewhere). */
#include <stdint.h>
#include <string.h>

#include "mcu/opt/dw_s8_band.h"
#include "mcu/opt/dw_s8_planar.h"

#if MCU_SIMD_DSP
/* The fill's arguments besides the first line's source, entry and length. */
typedef struct {
  int32_t step;     /* 0: bytes from a pixel to the next */
  int32_t plane;    /* 4: bytes from a plane to the next */
  uint32_t off2;    /* 8: the input offset in both lanes */
  int32_t lines;    /* 12: lines left (the assembly counts it down) */
  int32_t src_line; /* 16: bytes from a source line to the next */
  int32_t dst_line; /* 20: bytes from a band line to the next */
} dw3_fill_t;

/* f->lines >= 1 lines of n >= 1 pixels' four channels, the first from `src` into plane 0's
 * entry `dst` and the three planes after it, each line: a lone pixel first when dst is not
 * word-aligned (an odd left padding), then four pixels a pass (dw3_put twice, two words a plane by
 * STRD), then a pair (dw3_put), then a lone last pixel (dw3_put1). The line's src, dst, n and f
 * wait on the stack. */
__attribute__((naked)) static void dw3_fill_lines(const int8_t *src, int16_t *dst, int32_t n,
                                                  dw3_fill_t *f) {
  (void)src, (void)dst, (void)n, (void)f;
  __asm__ volatile("push {r4-r11, lr}\n\t"
                   "push {r0-r3}\n\t"
                   "0:\n\t"
                   "ldm r3, {r3, r4, r5}\n\t"
                   "add r6, r1, r4\n\t"
                   "add r7, r6, r4\n\t"
                   "add r8, r7, r4\n\t"
                   "tst r1, #2\n\t"
                   "beq 1f\n\t"
                   "ldr r9, [r0]\n\t"
                   "add r0, r0, r3\n\t"
                   "sxtab16 r10, r5, r9\n\t"
                   "sxtab16 r11, r5, r9, ror #8\n\t"
                   "strh r10, [r1], #2\n\t"
                   "strh r11, [r6], #2\n\t"
                   "lsr r10, r10, #16\n\t"
                   "lsr r11, r11, #16\n\t"
                   "strh r10, [r7], #2\n\t"
                   "strh r11, [r8], #2\n\t"
                   "subs r2, r2, #1\n\t"
                   "1:\n\t"
                   "subs r2, r2, #4\n\t"
                   "blt 3f\n\t"
                   "2:\n\t"
                   "ldr r4, [r0]\n\t"
                   "ldr r9, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r10, r9, r4, asr #16\n\t"
                   "pkhbt r4, r4, r9, lsl #16\n\t"
                   "ldr r9, [r0]\n\t"
                   "ldr r11, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r12, r11, r9, asr #16\n\t"
                   "pkhbt r9, r9, r11, lsl #16\n\t"
                   "sxtab16 r11, r5, r4\n\t"
                   "sxtab16 lr, r5, r9\n\t"
                   "strd r11, lr, [r1], #8\n\t"
                   "sxtab16 r11, r5, r4, ror #8\n\t"
                   "sxtab16 lr, r5, r9, ror #8\n\t"
                   "strd r11, lr, [r6], #8\n\t"
                   "sxtab16 r11, r5, r10\n\t"
                   "sxtab16 lr, r5, r12\n\t"
                   "strd r11, lr, [r7], #8\n\t"
                   "sxtab16 r11, r5, r10, ror #8\n\t"
                   "sxtab16 lr, r5, r12, ror #8\n\t"
                   "strd r11, lr, [r8], #8\n\t"
                   "subs r2, r2, #4\n\t"
                   "bge 2b\n\t"
                   "3:\n\t"
                   "tst r2, #2\n\t" /* r2 = n_left - 4 (n_left 0..3): bit 1 is n_left's */
                   "beq 4f\n\t"
                   "ldr r4, [r0]\n\t"
                   "ldr r9, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r10, r9, r4, asr #16\n\t"
                   "pkhbt r4, r4, r9, lsl #16\n\t"
                   "sxtab16 r11, r5, r4\n\t"
                   "str r11, [r1], #4\n\t"
                   "sxtab16 r11, r5, r4, ror #8\n\t"
                   "str r11, [r6], #4\n\t"
                   "sxtab16 r11, r5, r10\n\t"
                   "str r11, [r7], #4\n\t"
                   "sxtab16 r11, r5, r10, ror #8\n\t"
                   "str r11, [r8], #4\n\t"
                   "4:\n\t"
                   "tst r2, #1\n\t"
                   "beq 5f\n\t"
                   "ldr r9, [r0]\n\t"
                   "sxtab16 r10, r5, r9\n\t"
                   "sxtab16 r11, r5, r9, ror #8\n\t"
                   "strh r10, [r1]\n\t"
                   "strh r11, [r6]\n\t"
                   "lsr r10, r10, #16\n\t"
                   "lsr r11, r11, #16\n\t"
                   "strh r10, [r7]\n\t"
                   "strh r11, [r8]\n\t"
                   "5:\n\t"
                   "ldm sp, {r0-r3}\n\t"
                   "ldrd r4, r5, [r3, #16]\n\t"
                   "add r0, r0, r4\n\t"
                   "add r1, r1, r5\n\t"
                   "strd r0, r1, [sp]\n\t"
                   "ldr r4, [r3, #12]\n\t"
                   "subs r4, r4, #1\n\t"
                   "str r4, [r3, #12]\n\t"
                   "bne 0b\n\t"
                   "add sp, sp, #16\n\t"
                   "pop {r4-r11, pc}\n\t");
}
#endif

/* Input column x's channels c .. c + g - 1 (the zero point outside the image and past g). */
static inline uint32_t dw3_pixel(const dw3_job_t *j, const int8_t *row, int32_t x, int32_t g,
                                 uint32_t zero) {
  uint32_t word = zero;
  if (x >= 0 && x < j->src.len) {
    if (g == 4) {
      return mcu_load_u32(row + x * j->src.step);
    }
    memcpy(&word, row + x * j->src.step, (size_t)g); /* little-endian: lane i is byte i */
  }
  return word;
}

/* One pixel's four channels (word p) widened into entry `at` of the four planes (`pw` entries
 * apart): plane k gets channel k. */
static inline void dw3_put1(int16_t *at, int32_t pw, uint32_t p, uint32_t off2) {
  uint32_t even = mcu_sxtab16(off2, p), odd = mcu_sxtab16_ror8(off2, p);
  at[0] = (int16_t)even;
  at[pw] = (int16_t)odd;
  at[2 * pw] = (int16_t)(even >> 16);
  at[3 * pw] = (int16_t)(odd >> 16);
}

#if !MCU_SIMD_DSP
/* One line of len pixels' four channels into band line `dst` from entry pad on (dw3_fill_lines'
 * work in C). */
static void dw3_fill_line_c(const int8_t *src, uint32_t *dst, int32_t pad, int32_t len,
                            int32_t ch, int32_t pw, uint32_t off2) {
  int32_t n = len; /* columns left */
  uint32_t *at = dst + pad / 2;
  if (pad & 1) {
    dw3_put1((int16_t *)at + 1, 2 * pw, mcu_load_u32(src), off2);
    --n, src += ch, ++at;
  }
  for (; n >= 2; n -= 2, ++at, src += 2 * ch) {
    dw3_put(at, pw, mcu_load_u32(src), mcu_load_u32(src + ch), off2);
  }
  if (n > 0) {
    dw3_put1((int16_t *)at, 2 * pw, mcu_load_u32(src), off2);
  }
}
#endif

/* Input lines y0 .. y1 (y0 >= -pad) of channels c .. c + g - 1 into their band slots: entry
 * pad + x of a plane line holds column x. The entries around the image stay 0 (`dw3_setup`
 * clears the band, and lines outside the image are stored 0, unless the band holds every line
 * of the layer: then their slots never hold another line and stay as cleared); the fields are
 * read into locals once (the band's stores may alias them). Four channels: a lone column where
 * the image starts or ends mid-word, the pairs between (on DSP cores the image's lines that
 * follow each other in the ring in one assembly call). */
__attribute__((noinline)) static void dw3_fill(const dw3_job_t *j, int32_t y0, int32_t y1,
                                               int32_t c, int32_t g) {
  const int32_t half = j->bw / 2, ring = j->ring, pw = ring * half, pad = j->pad_along;
  const int32_t len = j->src.len, ch = j->src.step, lines = j->src.lines, step = j->src.line;
  const int whole = j->chunk == j->dst.lines; /* the ring never wraps */
  const uint32_t zero = repeat4(-j->p->rq.input_offset);
  const uint32_t off2 = mcu_pack16(j->p->rq.input_offset, j->p->rq.input_offset);
  const uint32_t blank = mcu_sxtab16(off2, zero); /* 0, opaque to the compiler (no memset) */
  int32_t slot = (y0 + j->pad_across) % ring;
  for (int32_t y = y0; y <= y1;) {
    uint32_t *dst = j->band + slot * half;
    const int8_t *row = j->in + y * step + c;
    int32_t run = 1; /* lines this pass */
    if (y < 0 || y >= lines) { /* (row is not read) */
      for (int32_t k = 0; k < half && !whole; ++k) {
        dst[k] = blank, dst[k + pw] = blank, dst[k + 2 * pw] = blank, dst[k + 3 * pw] = blank;
      }
    } else if (g < 4) { /* the last group: every entry, the missing channels' lanes the zero
                           point's */
      for (int32_t k = 0, x = -pad; k < half; ++k, x += 2) {
        dw3_put(dst + k, pw, dw3_pixel(j, row, x, g, zero), dw3_pixel(j, row, x + 1, g, zero),
                off2);
      }
    } else { /* the image's lines up to y1 or the ring's end, in one pass */
      run = mcu_min_i32(mcu_min_i32(y1, lines - 1) - y + 1, ring - slot);
#if MCU_SIMD_DSP
      if (j->fill != NULL) {
        j->fill(row, (int16_t *)dst + pad, run, off2);
      } else {
        dw3_fill_t f = {ch, 4 * pw, off2, run, step, 2 * j->bw};
        dw3_fill_lines(row, (int16_t *)dst + pad, len, &f);
      }
#else
      for (int32_t l = 0; l < run; ++l, row += step, dst += half) {
        dw3_fill_line_c(row, dst, pad, len, ch, pw, off2);
      }
#endif
    }
    y += run;
    slot += run;
    slot = slot >= ring ? slot - ring : slot;
  }
}

#endif /* MCU_OPT_DW_S8_FILL_H */
