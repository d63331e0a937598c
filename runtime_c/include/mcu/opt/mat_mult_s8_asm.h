/* The assembly blocks of the int8 matrix product's kernels (kernels/opt/mat_mult_s8.c and the
 * 1x1 convolutions conv_2d_1x1_s8_staged.c and conv_2d_1x1_s8_direct.c): strings for their
 * inline assembly, whose operands they name alike. A pair of channels' block is the words w0
 * (channel 0's k0..k3) and w1 (channel 1's) of the build's pair layout; a row's block of four
 * inputs is (k0, k2) in xe and (k1, k3) in xo, two rows' in x0e, x0o and x1e, x1o. Private to
 * those files. */
#ifndef MCU_OPT_MAT_MULT_S8_ASM_H
#define MCU_OPT_MAT_MULT_S8_ASM_H

#include "mcu/simd.h"

#if MCU_SIMD_DSP
/* One block of 2 channels (LDRD of their words at pw) x 2 rows into sums a00, a01 (channel 0,
 * rows 0 and 1), a10, a11. */
#define MCU_MACS_2X2                       \
  "ldrd %[w0], %[w1], [%[pw]], #8\n\t"     \
  "sxtb16 %[t], %[w0]\n\t"                 \
  "smlad %[a00], %[t], %[x0e], %[a00]\n\t" \
  "smlad %[a01], %[t], %[x1e], %[a01]\n\t" \
  "sxtb16 %[w0], %[w0], ror #8\n\t"        \
  "smlad %[a00], %[w0], %[x0o], %[a00]\n\t" \
  "smlad %[a01], %[w0], %[x1o], %[a01]\n\t" \
  "sxtb16 %[t], %[w1]\n\t"                 \
  "smlad %[a10], %[t], %[x0e], %[a10]\n\t" \
  "smlad %[a11], %[t], %[x1e], %[a11]\n\t" \
  "sxtb16 %[w1], %[w1], ror #8\n\t"        \
  "smlad %[a10], %[w1], %[x0o], %[a10]\n\t" \
  "smlad %[a11], %[w1], %[x1o], %[a11]\n\t"

/* One block of 1 row x 2 channels of the pair at `P` into sums A0 and A1. */
#define MCU_PAIR_1X2(P, A0, A1)                  \
  "ldrd %[w0], %[w1], [%[" P "]], #8\n\t"        \
  "sxtb16 %[t], %[w0]\n\t"                       \
  "smlad %[" A0 "], %[t], %[xe], %[" A0 "]\n\t"  \
  "sxtb16 %[w0], %[w0], ror #8\n\t"              \
  "smlad %[" A0 "], %[w0], %[xo], %[" A0 "]\n\t" \
  "sxtb16 %[t], %[w1]\n\t"                       \
  "smlad %[" A1 "], %[t], %[xe], %[" A1 "]\n\t"  \
  "sxtb16 %[w1], %[w1], ror #8\n\t"              \
  "smlad %[" A1 "], %[w1], %[xo], %[" A1 "]\n\t"

/* One block of 1 row (its word at s, loaded and split) x the 4 channels of pairs a and b into
 * sums c0..c3. */
#define MCU_BLOCK_1X4                \
  "ldr %[xo], [%[s]], #4\n\t"        \
  "sxtb16 %[xe], %[xo]\n\t"          \
  "sxtb16 %[xo], %[xo], ror #8\n\t"  \
  MCU_PAIR_1X2("a", "c0", "c1") MCU_PAIR_1X2("b", "c2", "c3")

/* The loop of 1x4 blocks of the row at S (an lvalue) up to `end`, two a pass, entered at the
 * second when the count is odd; pairs a and b, sums c0..c3, scratch xe, xo, w0, w1, t. */
#define MCU_LOOP_1X4(S)                                                                  \
  __asm__ volatile("sub %[t], %[end], %[s]\n\t"                                          \
                   "tst %[t], #4\n\t"                                                    \
                   "bne 2f\n\t"                                                          \
                   "1:\n\t" MCU_BLOCK_1X4 "2:\n\t" MCU_BLOCK_1X4                         \
                   "cmp %[s], %[end]\n\t"                                                \
                   "bne 1b\n\t"                                                          \
                   : [s] "+r"(S), [a] "+r"(a), [b] "+r"(b), [c0] "+r"(c0), [c1] "+r"(c1), \
                     [c2] "+r"(c2), [c3] "+r"(c3), [xe] "=&r"(xe), [xo] "=&r"(xo),        \
                     [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)                         \
                   : [end] "r"(end)                                                      \
                   : "memory", "cc")

/* The loop of 2x2 blocks BLOCK (one of HALF, a string: the bytes of the rows' words a block)
 * of the rows at S (an lvalue) up to `end` (in memory), two a pass, entered at the second when
 * the count is odd; the pair's words at w, sums a00..a11, scratch x0e..x1o, w0, w1, t. */
#define MCU_LOOP_2X2(S, BLOCK, HALF)                                                   \
  __asm__ volatile("ldr %[t], %[end]\n\t"                                              \
                   "sub %[t], %[t], %[s]\n\t"                                          \
                   "tst %[t], #" HALF "\n\t"                                           \
                   "bne 2f\n\t"                                                        \
                   "1:\n\t" BLOCK "2:\n\t" BLOCK                                       \
                   "ldr %[t], %[end]\n\t"                                              \
                   "cmp %[s], %[t]\n\t"                                                \
                   "bne 1b\n\t"                                                        \
                   : [s] "+r"(S), [pw] "+r"(w), [a00] "+r"(a00), [a01] "+r"(a01),       \
                     [a10] "+r"(a10), [a11] "+r"(a11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), \
                     [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [w0] "=&r"(w0), [w1] "=&r"(w1),  \
                     [t] "=&r"(t)                                                       \
                   : [end] "m"(end)                                                     \
                   : "memory", "cc")
#endif

#endif
