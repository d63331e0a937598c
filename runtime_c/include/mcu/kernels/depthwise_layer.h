#ifndef MCU_KERNELS_DEPTHWISE_LAYER_H
#define MCU_KERNELS_DEPTHWISE_LAYER_H

/* 3x3 depthwise layers specialised at codegen (variant depthwise_conv_2d_s8_layer,
 * mcugen/codegen/lower/opt_depthwise.py): the generated model.c defines, once per distinct layer
 * shape, the planar path's per-channel assembly and its band fill (kernels/opt/
 * depthwise_conv_2d_s8.c, "3x3, strides 1 and 2") with the shape's constants as immediates, and
 * runs the layer through mcu_depthwise_conv_2d_s8_layer with them.
 *
 * MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip, <the fill's six>) defines `name`,
 * a mcu_dw3_layer_t whose `lines` runs channels over a band that holds every input line of the
 * layer (the kernel's chunk is the whole image; lines are rows, or columns of a tall stride-1
 * SAME layer): `along` and `across` the strides along and across output lines, `n` outputs a
 * line, `lines` lines, `band` bytes from a band line to the next, `step` bytes from an output to
 * the next along a line, `skip` bytes from after a line's last output to the next line's first
 * (0 for rows). The band line of output line oy starts across * oy lines on from the first, so
 * one pointer and immediate offsets reach a window's three lines; the blocks of four, two and one
 * outputs of a line are unrolled by the assembler (.rept, .if), the outputs stored at immediate
 * offsets. Each block's sums and requantisation are the kernel's DW3_* macros' instructions; the
 * fill is dw3_fill_lines' with its tests resolved by the assembler. On cores without the DSP
 * extension both are NULL and the kernel's own paths run. Nothing here checks the constants
 * against the tensors at run time: the build derives both from the same model. */

#include <stddef.h>
#include <stdint.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/simd.h"

/* A layer's channels over its band (the kernel's dw3_call_t array), and `lines` input lines of
 * four channels from `src` into the band's four planes from `dst` (plane 0's first image entry). */
typedef void (*mcu_dw3_lines_fn)(void *calls);
typedef void (*mcu_dw3_fill_fn)(const int8_t *src, int16_t *dst, int32_t lines, uint32_t off2);
typedef void (*mcu_dw3_weights_fn)(const int8_t *filter, int32_t across, int32_t along,
                                   void *calls);

typedef struct {
  mcu_dw3_lines_fn lines;      /* NULL: the kernel's own */
  mcu_dw3_fill_fn fill;        /* NULL: the kernel's own */
  mcu_dw3_weights_fn weights4; /* four channels' weights; NULL: the kernel's channel loop */
} mcu_dw3_layer_t;

/* The kernel's four-channel weights (depthwise_conv_2d_s8.c), linked only where a layer uses it. */
void mcu_dw3_weights4(const int8_t *filter, int32_t across, int32_t along, void *calls);

/* The optimised kernel (mcu_depthwise_conv_2d_s8_opt) with a band of the whole image and the
 * layer's own functions: `lines` where the activation range is the full int8 range, `fill` for
 * groups of four channels. */
mcu_status_t mcu_depthwise_conv_2d_s8_layer(const mcu_node_t *node, mcu_context_t *ctx,
                                            const mcu_dw3_layer_t *layer);

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

/* Stride 1, four outputs: words A (r12) and B (lr) of a row against its weights (r10, r11) into
 * the sums S0..S3 (this macro's and the kernel's DW3_S1_ROW4). */
#define MCU_DW3_S1_AB4(S0, S1, S2, S3)                                                            \
  "smlatb r6, r12, r10, " S1 "\n\t"                                                               \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r7, lr, r10, " S2 "\n\t"                                                                 \
  "smlatb r8, lr, r10, " S3 "\n\t"                                                                \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "smlad r6, lr, r11, r6\n\t"

/* Stride 1, four outputs, filter row K with weights at W (the kernel's DW3_S1_ROW4). */
#define MCU_DW3L_S1_ROW4(K, W, S0, S1, S2, S3)                                                    \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, " MCU_DW3L_AT(K, "0") "\n\t" MCU_DW3_S1_AB4(S0, S1, S2, S3)                      \
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

/* The end of a channel's lines (flags from the count's SUBS): the next line, else, while the
 * call's `more` (at 88), the next call (dw3_call_t, 92 bytes), else the return. Shared with the
 * kernel's DW3_LINES. */
#define MCU_DW3_LINES_END \
  "bne 1b\n\t"           \
  "ldr lr, [r0, #88]\n\t" \
  "add r0, r0, #92\n\t"   \
  "cmp lr, #0\n\t"        \
  "bne 0b\n\t"            \
  "pop {r4-r11, pc}\n\t"

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
  MCU_DW3_LINES_END

/* The fill (the kernel's dw3_fill_lines with the line's shape as constants): r0 the source,
 * r1, r6, r7, r8 the four planes' entries, r2 the lines left, r5 the offset in both lanes; per
 * line a lone pixel where the image starts mid-word, blocks of four pixels, a pair, a lone last. */
#define MCU_DW3F_ONE                                                                              \
  "ldr r9, [r0]\n\t"                                                                              \
  "add r0, r0, #dw3f_s\n\t"                                                                       \
  "sxtab16 r10, r5, r9\n\t"                                                                       \
  "sxtab16 r11, r5, r9, ror #8\n\t"                                                               \
  "strh r10, [r1], #2\n\t"                                                                        \
  "strh r11, [r6], #2\n\t"                                                                        \
  "lsr r10, r10, #16\n\t"                                                                         \
  "lsr r11, r11, #16\n\t"                                                                         \
  "strh r10, [r7], #2\n\t"                                                                        \
  "strh r11, [r8], #2\n\t"
#define MCU_DW3F_FOUR                                                                             \
  "ldr r4, [r0]\n\t"                                                                              \
  "ldr r9, [r0, #dw3f_s]\n\t"                                                                     \
  "pkhtb r10, r9, r4, asr #16\n\t"                                                                \
  "pkhbt r4, r4, r9, lsl #16\n\t"                                                                 \
  "ldr r9, [r0, #(2 * dw3f_s)]\n\t"                                                               \
  "ldr r11, [r0, #(3 * dw3f_s)]\n\t"                                                              \
  "add r0, r0, #(4 * dw3f_s)\n\t"                                                                 \
  "pkhtb r12, r11, r9, asr #16\n\t"                                                               \
  "pkhbt r9, r9, r11, lsl #16\n\t"                                                                \
  "sxtab16 r11, r5, r4\n\t"                                                                       \
  "sxtab16 lr, r5, r9\n\t"                                                                        \
  "strd r11, lr, [r1], #8\n\t"                                                                    \
  "sxtab16 r11, r5, r4, ror #8\n\t"                                                               \
  "sxtab16 lr, r5, r9, ror #8\n\t"                                                                \
  "strd r11, lr, [r6], #8\n\t"                                                                    \
  "sxtab16 r11, r5, r10\n\t"                                                                      \
  "sxtab16 lr, r5, r12\n\t"                                                                       \
  "strd r11, lr, [r7], #8\n\t"                                                                    \
  "sxtab16 r11, r5, r10, ror #8\n\t"                                                              \
  "sxtab16 lr, r5, r12, ror #8\n\t"                                                               \
  "strd r11, lr, [r8], #8\n\t"
#define MCU_DW3F_TWO                                                                              \
  "ldr r4, [r0]\n\t"                                                                              \
  "ldr r9, [r0, #dw3f_s]\n\t"                                                                     \
  "add r0, r0, #(2 * dw3f_s)\n\t"                                                                 \
  "pkhtb r10, r9, r4, asr #16\n\t"                                                                \
  "pkhbt r4, r4, r9, lsl #16\n\t"                                                                 \
  "sxtab16 r11, r5, r4\n\t"                                                                       \
  "str r11, [r1], #4\n\t"                                                                         \
  "sxtab16 r11, r5, r4, ror #8\n\t"                                                               \
  "str r11, [r6], #4\n\t"                                                                         \
  "sxtab16 r11, r5, r10\n\t"                                                                      \
  "str r11, [r7], #4\n\t"                                                                         \
  "sxtab16 r11, r5, r10, ror #8\n\t"                                                              \
  "str r11, [r8], #4\n\t"
/* A register move by a constant that may pass an ADD's immediate (MOVW into lr). */
#define MCU_DW3F_MOVE(REG, BY)                                                                    \
  ".if " BY " > 0\n\tmovw lr, #(" BY ")\n\tadd " REG ", " REG ", lr\n\t"                          \
  ".elseif " BY " < 0\n\tmovw lr, #(-(" BY "))\n\tsub " REG ", " REG ", lr\n\t.endif\n\t"
#define MCU_DW3F_BODY                                                                             \
  "push {r4-r11, lr}\n\t"                                                                         \
  "mov r5, r3\n\t"                                                                                 \
  "movw lr, #dw3f_pw\n\t"                               \
  "add r6, r1, lr\n\t"                                                                            \
  "add r7, r6, lr\n\t"                                                                            \
  "add r8, r7, lr\n\t"                                                                            \
  "0:\n\t"                                                                                        \
  ".if dw3f_odd\n\t" MCU_DW3F_ONE ".endif\n\t"                                                    \
  ".rept (dw3f_n - dw3f_odd) / 4\n\t" MCU_DW3F_FOUR ".endr\n\t"                                   \
  ".if (dw3f_n - dw3f_odd) % 4 >= 2\n\t" MCU_DW3F_TWO ".endif\n\t"                                \
  ".if (dw3f_n - dw3f_odd) % 2\n\t" MCU_DW3F_ONE ".endif\n\t" MCU_DW3F_MOVE("r0", "dw3f_src")      \
      MCU_DW3F_MOVE("r1", "dw3f_dst") MCU_DW3F_MOVE("r6", "dw3f_dst")                             \
          MCU_DW3F_MOVE("r7", "dw3f_dst") MCU_DW3F_MOVE("r8", "dw3f_dst") "subs r2, r2, #1\n\t"  \
                                                                          "bne 0b\n\t"            \
                                                                          "pop {r4-r11, pc}\n\t"

/* `name`: the layer's two functions; the fill's constants: `fs` source bytes from a pixel to the
 * next along a line, `fn` pixels a line, `fodd` 1 where the image starts mid-word (an odd
 * padding), `fpw` bytes from a plane to the next, `fsrc` source bytes from after a line to the
 * next line, `fdst` band bytes from after a line's entries to the next line's. */
#define MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip, fs, fn, fodd, fpw, fsrc,   \
                      fdst)                                                                       \
  __attribute__((naked)) static void name##_lines(void *calls) {                                  \
    (void)calls;                                                                                  \
    __asm__ volatile(".set dw3_s, " #along "\n\t.set dw3_a, " #across "\n\t.set dw3_n, " #n       \
                     "\n\t.set dw3_l, " #lines "\n\t.set dw3_b, " #band "\n\t.set dw3_os, " #step \
                     "\n\t.set dw3_k, " #skip "\n\t" MCU_DW3L_BODY);                              \
  }                                                                                               \
  __attribute__((naked)) static void name##_fill(const int8_t *src, int16_t *dst, int32_t count,  \
                                                 uint32_t off2) {                                 \
    (void)src, (void)dst, (void)count, (void)off2;                                                \
    __asm__ volatile(".set dw3f_s, " #fs "\n\t.set dw3f_n, " #fn "\n\t.set dw3f_odd, " #fodd       \
                     "\n\t.set dw3f_pw, " #fpw "\n\t.set dw3f_src, " #fsrc                        \
                     "\n\t.set dw3f_dst, " #fdst "\n\t" MCU_DW3F_BODY);                           \
  }                                                                                               \
  static const mcu_dw3_layer_t name[1] = {{name##_lines, name##_fill, mcu_dw3_weights4}};

#else

#define MCU_DW3_LAYER(name, along, across, n, lines, band, step, skip, fs, fn, fodd, fpw, fsrc,   \
                      fdst)                                                                       \
  static const mcu_dw3_layer_t name[1] = {{NULL, NULL, NULL}};

#endif

#endif
