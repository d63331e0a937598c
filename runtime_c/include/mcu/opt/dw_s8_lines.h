#ifndef MCU_OPT_DW_S8_LINES_H
#define MCU_OPT_DW_S8_LINES_H

/* Part of the optimised depthwise kernels (kernels/opt/depthwise_conv_2d_s8*.c), included by
 * them alone: one channel's output lines over its plane of the band (dw3_call_t), in assembly on
 * DSP cores (the full int8 range) and in C (every range). */
#include <stdint.h>

#include "mcu/opt/dw_s8_planar.h"

#if MCU_SIMD_DSP
/* Registers: r0 the call, r1-r3 the rows, r4 out, r5-r8 the sums, r9-r12 and lr loads; in the
 * requantisation r9-r11 hold multiplier, round and right, r12 ch (one LDM), lr the rounding. */
#define DW3_OUT(S, AT)                                                                            \
  "add lr, r10, " S ", asr #31\n\t"                                                               \
  "smmlar " S ", " S ", r9, lr\n\t"                                                               \
  "asr " S ", " S ", r11\n\t"                                                                     \
  "ssat " S ", #8, " S "\n\t"                                                                     \
  "strb " S ", " AT "\n\t"

#define DW3_REQUANT4                                                                              \
  "ldm r0, {r9, r10, r11, r12}\n\t" DW3_OUT("r5", "[r4]") DW3_OUT("r6", "[r4, r12]")              \
      DW3_OUT("r7", "[r4, r12, lsl #1]") "add r4, r4, r12, lsl #1\n\t" DW3_OUT("r8", "[r4, r12]") \
          "add r4, r4, r12, lsl #1\n\t"
#define DW3_REQUANT2                                                                              \
  "ldm r0, {r9, r10, r11, r12}\n\t" DW3_OUT("r5", "[r4]") DW3_OUT("r6", "[r4, r12]")              \
      "add r4, r4, r12, lsl #1\n\t"
#define DW3_REQUANT1 "ldm r0, {r9, r10, r11}\n\t" DW3_OUT("r5", "[r4]")

/* Stride 1, four outputs, one filter line: line pointer P, weights at offset W; A, B by LDRD, C
 * after them; the first line's sums start from the bias in r9. */
#define DW3_S1_ROW4(P, W, S0, S1, S2, S3)                                                         \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #8\n\t" MCU_DW3_S1_AB4(S0, S1, S2, S3)                                \
  "ldr r12, [" P "]\n\t"                                                                          \
  "smlabt r7, r12, r11, r7\n\t"                                                                   \
  "smlad r8, r12, r11, r8\n\t"

/* Stride 2, four outputs: words A..E of the line, out_k += SMLAD(word_k, W01) + SMLABT(word_k+1,
 * W12); P moves on four words. */
#define DW3_S2_ROW4(P, W, S0, S1, S2, S3)                                                         \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "]\n\t"                                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldrd r12, lr, [" P ", #8]\n\t"                                                                 \
  "smlabt r6, r12, r11, r6\n\t"                                                                   \
  "smlad r7, r12, r10, " S2 "\n\t"                                                                \
  "smlad r8, lr, r10, " S3 "\n\t"                                                                 \
  "smlabt r7, lr, r11, r7\n\t"                                                                    \
  "ldr r12, [" P ", #16]!\n\t"                                                                    \
  "smlabt r8, r12, r11, r8\n\t"

/* Two outputs: stride 1 over words A, B (P moves on one word), stride 2 over A, B, C (two). */
#define DW3_S1_ROW2(P, W, S0, S1)                                                                 \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #4\n\t"                                                                 \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlatb r6, r12, r10, " S1 "\n\t"                                                                \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "smlad r6, lr, r11, r6\n\t"
#define DW3_S2_ROW2(P, W, S0, S1)                                                                 \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #8\n\t"                                                                 \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                  \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldr r12, [" P "]\n\t"                                                                          \
  "smlabt r6, r12, r11, r6\n\t"

/* One output at an even band column (either stride): SMLAD(A, W01) + SMLABT(B, W12). */
#define DW3_ROW1(P, W, S0, S1)                                                                    \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "]\n\t"                                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"

#define DW3_BLOCKS(ROW, REQUANT)                                                                  \
  "ldr r9, [r0, #16]\n\t" ROW("r1", "24", "r9", "r9", "r9", "r9")                                 \
      ROW("r2", "32", "r5", "r6", "r7", "r8") ROW("r3", "40", "r5", "r6", "r7", "r8") REQUANT
#define DW3_BLOCK(ROW, REQUANT)                                                                   \
  "ldr r9, [r0, #16]\n\t" ROW("r1", "24", "r9", "r9") ROW("r2", "32", "r5", "r6")                 \
      ROW("r3", "40", "r5", "r6") REQUANT

/* A line's three band lines into r1, r2, r3: from the table (byte offsets into `plane`). */
#define DW3_LINE_TABLE                                                                            \
  "ldr lr, [r0, #48]\n\t"                                                                         \
  "ldm lr!, {r1, r2, r3}\n\t"                                                                     \
  "str lr, [r0, #48]\n\t"                                                                         \
  "ldr lr, [r0, #52]\n\t"                                                                         \
  "add r1, r1, lr\n\t"                                                                            \
  "add r2, r2, lr\n\t"                                                                            \
  "add r3, r3, lr\n\t"

/* A channel's lines (dw3_call_t), then the next channel's while `more`: per line its three band
 * lines (LINE: DW3_LINE_TABLE, or a kernel's own), blocks of four while four outputs remain,
 * then one of two, then one (the line's last, at an even column, which leaves r4 where it is);
 * the output pointer r4 goes on from line to line by `out_skip`. */
#define DW3_LINES_OF(LINE, ROW4, ROW2)                                                            \
  "push {r4-r11, lr}\n\t"                                                                         \
  "0:\n\t"                                                                                        \
  "ldr r4, [r0, #56]\n\t"                                                                         \
  "1:\n\t" LINE "ldr lr, [r0, #60]\n\t"                                                           \
  "add lr, r1, lr\n\t"                                                                            \
  "str lr, [r0, #20]\n\t"                                                                         \
  "cmp r1, lr\n\t"                                                                                \
  "beq 3f\n\t"                                                                                    \
  "2:\n\t" DW3_BLOCKS(ROW4, DW3_REQUANT4) "ldr lr, [r0, #20]\n\t"                                 \
  "cmp r1, lr\n\t"                                                                                \
  "bne 2b\n\t"                                                                                    \
  "3:\n\t"                                                                                        \
  "ldr lr, [r0, #64]\n\t"                                                                         \
  "cmp lr, #2\n\t"                                                                                \
  "blt 4f\n\t" DW3_BLOCK(ROW2, DW3_REQUANT2) "ldr lr, [r0, #64]\n\t"                              \
  "4:\n\t"                                                                                        \
  "tst lr, #1\n\t"                                                                                \
  "beq 5f\n\t" DW3_BLOCK(DW3_ROW1, DW3_REQUANT1) "5:\n\t"                                         \
  "ldr lr, [r0, #84]\n\t"                                                                         \
  "add r4, r4, lr\n\t"                                                                            \
  "ldr lr, [r0, #72]\n\t"                                                                         \
  "subs lr, lr, #1\n\t"                                                                           \
  "str lr, [r0, #72]\n\t"                                                                         \
  MCU_DW3_LINES_END
#define DW3_LINES(ROW4, ROW2) DW3_LINES_OF(DW3_LINE_TABLE, ROW4, ROW2)

__attribute__((naked, unused)) static void dw3_lines_s1(void *k) {
  (void)k;
  __asm__ volatile(DW3_LINES(DW3_S1_ROW4, DW3_S1_ROW2));
}

__attribute__((naked, unused)) static void dw3_lines_s2(void *k) {
  (void)k;
  __asm__ volatile(DW3_LINES(DW3_S2_ROW4, DW3_S2_ROW2));
}
#endif

/* One output line of one channel: lines r0, r1, r2 of its plane (band column 0), weights w[6]. */
DW3_INLINE void dw3_row(const uint32_t *r0, const uint32_t *r1, const uint32_t *r2,
                        const uint32_t *w, const dw3_call_t *q, int8_t *out, int32_t ch,
                        int32_t n, int32_t stride, const int full) {
  const uint32_t a01 = w[0], a12 = w[1], b01 = w[2], b12 = w[3], c01 = w[4], c12 = w[5];
  int32_t x = 0;
  if (stride == 1) {
    for (; x + 4 <= n; x += 4, r0 += 2, r1 += 2, r2 += 2) {
      int32_t s0 = q->bias2, s1 = q->bias2, s2 = q->bias2, s3 = q->bias2;
      uint32_t a = r0[0], b = r0[1], c = r0[2];
      s0 = mcu_smlabt(b, a12, mcu_smlad(a, a01, s0));
      s1 = mcu_smlad(b, a12, mcu_smlatb(a, a01, s1));
      s2 = mcu_smlabt(c, a12, mcu_smlad(b, a01, s2));
      s3 = mcu_smlad(c, a12, mcu_smlatb(b, a01, s3));
      a = r1[0], b = r1[1], c = r1[2];
      s0 = mcu_smlabt(b, b12, mcu_smlad(a, b01, s0));
      s1 = mcu_smlad(b, b12, mcu_smlatb(a, b01, s1));
      s2 = mcu_smlabt(c, b12, mcu_smlad(b, b01, s2));
      s3 = mcu_smlad(c, b12, mcu_smlatb(b, b01, s3));
      a = r2[0], b = r2[1], c = r2[2];
      s0 = mcu_smlabt(b, c12, mcu_smlad(a, c01, s0));
      s1 = mcu_smlad(b, c12, mcu_smlatb(a, c01, s1));
      s2 = mcu_smlabt(c, c12, mcu_smlad(b, c01, s2));
      s3 = mcu_smlad(c, c12, mcu_smlatb(b, c01, s3));
      out[0] = (int8_t)dw3_out(q, s0, full);
      out[ch] = (int8_t)dw3_out(q, s1, full);
      out[2 * ch] = (int8_t)dw3_out(q, s2, full);
      out[3 * ch] = (int8_t)dw3_out(q, s3, full);
      out += 4 * ch;
    }
  } else {
    for (; x + 4 <= n; x += 4, r0 += 4, r1 += 4, r2 += 4) {
      int32_t s0 = q->bias2, s1 = q->bias2, s2 = q->bias2, s3 = q->bias2;
      const uint32_t *rr[3] = {r0, r1, r2};
      for (int32_t k = 0; k < 3; ++k) {
        const uint32_t *r = rr[k];
        uint32_t w01 = w[2 * k], w12 = w[2 * k + 1];
        s0 = mcu_smlabt(r[1], w12, mcu_smlad(r[0], w01, s0));
        s1 = mcu_smlabt(r[2], w12, mcu_smlad(r[1], w01, s1));
        s2 = mcu_smlabt(r[3], w12, mcu_smlad(r[2], w01, s2));
        s3 = mcu_smlabt(r[4], w12, mcu_smlad(r[3], w01, s3));
      }
      out[0] = (int8_t)dw3_out(q, s0, full);
      out[ch] = (int8_t)dw3_out(q, s1, full);
      out[2 * ch] = (int8_t)dw3_out(q, s2, full);
      out[3 * ch] = (int8_t)dw3_out(q, s3, full);
      out += 4 * ch;
    }
  }
  /* the last outputs one by one, over int16 entries (a stride-1 window may start mid-word) */
  const int16_t *h[3] = {(const int16_t *)r0, (const int16_t *)r1, (const int16_t *)r2};
  for (int32_t i = 0; x < n; ++x, ++i, out += ch) {
    int32_t s = q->bias2;
    for (int32_t k = 0; k < 3; ++k) {
      const int16_t *e = h[k] + i * stride;
      s += e[0] * mcu_lo16(w[2 * k]) + e[1] * mcu_hi16(w[2 * k]) + e[2] * mcu_hi16(w[2 * k + 1]);
    }
    out[0] = (int8_t)dw3_out(q, s, full);
  }
}

/* One channel's lines in C (the clamped range, and every range on cores without DSP). */
__attribute__((noinline)) static void dw3_lines_c(const dw3_call_t *q, int32_t n, int32_t stride,
                                                  const int full) {
  const int32_t *rows = q->rows;
  int8_t *out = (int8_t *)q->out;
  for (int32_t l = 0; l < q->lines; ++l, rows += 3, out += q->out_line) {
    const uint32_t *r0 = (const uint32_t *)(q->plane + (uintptr_t)rows[0]);
    const uint32_t *r1 = (const uint32_t *)(q->plane + (uintptr_t)rows[1]);
    const uint32_t *r2 = (const uint32_t *)(q->plane + (uintptr_t)rows[2]);
#if MCU_SIMD_DSP /* the assembly runs the full range */
    (void)full;
#else
    if (full) {
      dw3_row(r0, r1, r2, q->w, q, out, q->ch, n, stride, 1);
      continue;
    }
#endif
    dw3_row(r0, r1, r2, q->w, q, out, q->ch, n, stride, 0);
  }
}

#endif /* MCU_OPT_DW_S8_LINES_H */
