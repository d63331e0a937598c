#ifndef MCU_KERNELS_DEPTHWISE_LAYER_H
#define MCU_KERNELS_DEPTHWISE_LAYER_H

/* 3x3 depthwise layers specialised at codegen (mcugen/codegen/lower/opt_depthwise_layer.py): the
 * generated model.c defines, per layer shape, the planar path's per-channel assembly
 * (kernels/opt/depthwise_conv_2d_s8.c, "3x3, strides 1 and 2") with the shape's constants as
 * immediates, and runs the layer through mcu_depthwise_conv_2d_s8_layer with it.
 *
 * MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip) defines `name`, which runs
 * channels over a band that holds every input line of the layer (the kernel's chunk is the whole
 * image; lines are rows, or columns of a tall stride-1 SAME layer): `along` and `across` the
 * strides along and across output lines, `n` outputs a line, `lines` lines, `band` bytes from a
 * band line to the next, `step` bytes from an output to the next along a line, `skip` bytes from
 * after a line's last output to the next line's first (0 for rows). The band line of output line
 * oy starts across * oy lines on from the first, so one pointer
 * and immediate offsets reach a window's three rows; the blocks of four, two and one outputs of a
 * row are unrolled by the assembler (.rept, .if), and the outputs are stored at immediate offsets.
 * Each block's sums and requantisation are the kernel's DW3_* macros' instructions. On cores
 * without the DSP extension `name` is NULL and the kernel's own path runs. */

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/simd.h"

typedef void (*mcu_dw3_lines_fn)(void *calls);

/* The optimised kernel (mcu_depthwise_conv_2d_s8_opt) with a band of the whole image and, where
 * `lines` is not NULL and the activation range is the full int8 range, `lines` for the channels'
 * rows. */
mcu_status_t mcu_depthwise_conv_2d_s8_layer(const mcu_node_t *node, mcu_context_t *ctx,
                                            mcu_dw3_lines_fn lines);

#if MCU_SIMD_DSP

/* One output's requantisation into the byte at r4 + AT (see the kernel's DW3_OUT). */
#define MCU_DW3L_OUT(S, AT)                                                                       \
  "add lr, r10, " S ", asr #31\n\t"                                                               \
  "smmlar " S ", " S ", r9, lr\n\t"                                                               \
  "asr " S ", " S ", r11\n\t"                                                                     \
  "ssat " S ", #8, " S "\n\t"                                                                     \
  "strb " S ", [r4, #(" AT ")]\n\t"

#define MCU_DW3L_REQUANT4                                                                         \
  "ldm r0, {r9, r10, r11}\n\t" MCU_DW3L_OUT("r5", "0") MCU_DW3L_OUT("r6", "dw3_os")               \
      MCU_DW3L_OUT("r7", "2 * dw3_os") MCU_DW3L_OUT("r8", "3 * dw3_os")                           \
          "add r4, r4, #(4 * dw3_os)\n\t"
#define MCU_DW3L_REQUANT2                                                                         \
  "ldm r0, {r9, r10, r11}\n\t" MCU_DW3L_OUT("r5", "0") MCU_DW3L_OUT("r6", "dw3_os")               \
      "add r4, r4, #(2 * dw3_os)\n\t"
#define MCU_DW3L_REQUANT1                                                                         \
  "ldm r0, {r9, r10, r11}\n\t" MCU_DW3L_OUT("r5", "0") "add r4, r4, #dw3_os\n\t"

/* Band word at byte `O` of window row K (0, 1, 2): r1 + dw3_o + K * dw3_b + O. */
#define MCU_DW3L_AT(K, O) "[r1, #(dw3_o + " K " * dw3_b + " O ")]"

/* Stride 1, four outputs, filter row K with weights at W (the kernel's DW3_S1_ROW4). */
#define MCU_DW3L_S1_ROW4(K, W, S0, S1, S2, S3)                                                    \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t"                                                     \
  "smlatb r6, r12, r10, " S1 "\n\t"                                                               \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r7, lr, r10, " S2 "\n\t"                                                                 \
  "smlatb r8, lr, r10, " S3 "\n\t"                                                                \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "smlad r6, lr, r11, r6\n\t"                                                                     \
  "ldr r12, " MCU_DW3L_AT(K, "8") "\n\t"                                                          \
  "smlabt r7, r12, r11, r7\n\t"                                                                   \
  "smlad r8, r12, r11, r8\n\t"

/* Stride 2, four outputs (DW3_S2_ROW4). */
#define MCU_DW3L_S2_ROW4(K, W, S0, S1, S2, S3)                                                    \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t"                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "8") "\n\t"                                                     \
  "smlabt r6, r12, r11, r6\n\t"                                                                   \
  "smlad r7, r12, r10, " S2 "\n\t"                                                                \
  "smlad r8, lr, r10, " S3 "\n\t"                                                                 \
  "smlabt r7, lr, r11, r7\n\t"                                                                    \
  "ldr r12, " MCU_DW3L_AT(K, "16") "\n\t"                                                         \
  "smlabt r8, r12, r11, r8\n\t"

/* Two outputs: stride 1 over words A, B (DW3_S1_ROW2), stride 2 over A, B, C (DW3_S2_ROW2). */
#define MCU_DW3L_S1_ROW2(K, W, S0, S1)                                                            \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t"                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlatb r6, r12, r10, " S1 "\n\t"                                                               \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "smlad r6, lr, r11, r6\n\t"
#define MCU_DW3L_S2_ROW2(K, W, S0, S1)                                                            \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t"                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldr r12, " MCU_DW3L_AT(K, "8") "\n\t"                                                          \
  "smlabt r6, r12, r11, r6\n\t"

/* One output at an even band column, either stride (DW3_ROW1). */
#define MCU_DW3L_ROW1(K, W, S0, S1)                                                               \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t"                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlabt r5, lr, r11, r5\n\t"

/* A block: the bias into r9, the three filter rows, the requantisation. */
#define MCU_DW3L_BLOCK4(ROW)                                                                      \
  "ldr r9, [r0, #16]\n\t" ROW("0", "24", "r9", "r9", "r9", "r9")                                  \
      ROW("1", "32", "r5", "r6", "r7", "r8") ROW("2", "40", "r5", "r6", "r7", "r8")               \
          MCU_DW3L_REQUANT4
#define MCU_DW3L_BLOCK(ROW, REQUANT)                                                              \
  "ldr r9, [r0, #16]\n\t" ROW("0", "24", "r9", "r9") ROW("1", "32", "r5", "r6")                   \
      ROW("2", "40", "r5", "r6") REQUANT

/* The calls (the kernel's dw3_call_t: 16 bias2, 24.. weights, 52 plane, 56 out, 88 more, 92 in
 * all), channel after channel while `more`; per channel `lines` rows of blocks, r1 the window's
 * first band row, r2 the rows left. */
#define MCU_DW3L_BODY                                                                             \
  "push {r4-r11, lr}\n\t"                                                                         \
  "0:\n\t"                                                                                        \
  "ldr r1, [r0, #52]\n\t"                                                                         \
  "ldr r4, [r0, #56]\n\t"                                                                         \
  "movw r2, #dw3_l\n\t"                                                                           \
  "1:\n\t"                                                                                        \
  ".set dw3_o, 0\n\t"                                                                             \
  ".if dw3_s == 1\n\t"                                                                            \
  ".rept dw3_n / 4\n\t" MCU_DW3L_BLOCK4(MCU_DW3L_S1_ROW4) ".set dw3_o, dw3_o + 8\n\t"             \
  ".endr\n\t"                                                                                     \
  ".if dw3_n % 4 >= 2\n\t" MCU_DW3L_BLOCK(MCU_DW3L_S1_ROW2, MCU_DW3L_REQUANT2)                    \
  ".set dw3_o, dw3_o + 4\n\t"                                                                     \
  ".endif\n\t"                                                                                    \
  ".else\n\t"                                                                                     \
  ".rept dw3_n / 4\n\t" MCU_DW3L_BLOCK4(MCU_DW3L_S2_ROW4) ".set dw3_o, dw3_o + 16\n\t"            \
  ".endr\n\t"                                                                                     \
  ".if dw3_n % 4 >= 2\n\t" MCU_DW3L_BLOCK(MCU_DW3L_S2_ROW2, MCU_DW3L_REQUANT2)                    \
  ".set dw3_o, dw3_o + 8\n\t"                                                                     \
  ".endif\n\t"                                                                                    \
  ".endif\n\t"                                                                                    \
  ".if dw3_n % 2\n\t" MCU_DW3L_BLOCK(MCU_DW3L_ROW1, MCU_DW3L_REQUANT1) ".endif\n\t"               \
  "add r1, r1, #(dw3_a * dw3_b)\n\t"                                                              \
  ".if dw3_k > 0\n\t"                                                                              \
  "movw lr, #dw3_k\n\t"                                                                           \
  "add r4, r4, lr\n\t"                                                                            \
  ".elseif dw3_k < 0\n\t"                                                                          \
  "movw lr, #(-dw3_k)\n\t"                                                                        \
  "sub r4, r4, lr\n\t"                                                                            \
  ".endif\n\t"                                                                                    \
  "subs r2, r2, #1\n\t"                                                                           \
  "bne 1b\n\t"                                                                                    \
  "ldr lr, [r0, #88]\n\t"                                                                         \
  "add r0, r0, #92\n\t"                                                                           \
  "cmp lr, #0\n\t"                                                                                \
  "bne 0b\n\t"                                                                                    \
  "pop {r4-r11, pc}\n\t"

#define MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip)                            \
  __attribute__((naked)) static void name(void *calls) {                                          \
    (void)calls;                                                                                  \
    __asm__ volatile(".set dw3_s, " #along "\n\t.set dw3_a, " #across "\n\t.set dw3_n, " #n       \
                     "\n\t.set dw3_l, " #lines "\n\t.set dw3_b, " #band "\n\t.set dw3_os, " #step \
                     "\n\t.set dw3_k, " #skip "\n\t" MCU_DW3L_BODY);                              \
  }

#else

#define MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip)                            \
  static const mcu_dw3_lines_fn name = NULL;

#endif

#endif
