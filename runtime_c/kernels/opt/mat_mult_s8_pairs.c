/* The int8 matrix product of mcu/mat_mult_s8.h for parameters with a `stream`, bit-exact with
 * mat_mult_s8.c's widened product and its short requantisation (that file's header says how
 * they compute). The build lays the stream out (mcugen/codegen/lower/opt_mat_mult.py
 * pair_stream).
 *
 * Parameters with a `stream` (mcu/mat_mult_s8.h: 1x1 convolutions whose depth is a multiple of
 * 4 and channels even) take the short requantisation with its constants in the order a pair of
 * channels reads them: on a DSP core one assembly routine widens each pair of rows and runs all
 * pairs of channels against it, sums, requantisation and stores in registers
 * (mcu_mat_mult_s8_pairs_dsp below).
 *
 * Weights come in the build's pair layout (opt_mat_mult.py pair_layout): per pair of channels,
 * blocks of 4 weights of the first then 4 of the second, then the first's last depth mod 4
 * weights and the second's; an odd last channel as it is. */
#include "mcu/mat_mult_s8.h"

#include "mcu/mat_mult_s8_lanes.h"
#include "mcu/simd.h"

/* The stream path's job, copied to the assembly's frame (below) as it is: the field order is
 * the frame's; the 4 words from out0 on are its own. */
typedef struct {
  const uint32_t *s, *s_end; /* the widened rows */
  const int8_t *w;           /* pair-layout weights */
  const int32_t *stream;
  int8_t *out0, *out1, *out0_end;
  uint32_t entry;
  int32_t channels;
  mcu_mat_mult_s8_rows_t rows;
} mcu_mat_mult_s8_pairs_t;

/* Pairs of channels against two widened rows with the build's stream `q` (depth a multiple of 4,
 * channels even: mcu/mat_mult_s8.h), in plain C: rows2_c's sums and short requantisation. */
static void stream_c(const int32_t *q, const uint32_t *s, const int8_t *w, int32_t channels,
                     int32_t depth, int8_t *out0, int8_t *out1) {
  for (int32_t c = 0; c < channels; c += 2, q += 10) {
    int32_t acc[4] = {q[0], q[1], q[2], q[3]};
    for (int32_t j = 0; j < depth >> 2; ++j, w += 8) {
      for (int32_t k = 0; k < 4; ++k) {
        acc[k] = row_dot(s + 4 * j + 2 * (k & 1), mcu_load_u32(w + 4 * (k >> 1)), acc[k]);
      }
    }
    for (int32_t k = 0; k < 4; ++k) {
      const int32_t *r = q + 4 + 3 * (k >> 1); /* multiplier, rounding term, shift */
      (k & 1 ? out1 : out0)[c + (k >> 1)] = short_out(acc[k], r[0], r[2], r[1]);
    }
  }
}

#if MCU_SIMD_DSP
/* The stream path on a DSP core, in assembly (all 14 registers): per pair of channels the 2x2
 * block loop (MCU_BLOCK_2X2's 14 instructions, forced to 32-bit encodings so each is 56 bytes)
 * sixteen blocks a loop, entered at block (-blocks) mod 16 by a jump computed once; then the short
 * requantisation of the 4 sums (4 instructions each: ADD of the rounding term and the sign,
 * SMMLAR, ASR, SSAT), its constants and the next pair's biases read from the stream by LDM.
 * r0 s, r1 w, r2-r5 rows' words, r6-r7 weight words, r8 temporary, r9-r12 sums, lr stream; the
 * frame holds the job (its entry word: the computed jump). */
#define MCU_PAIRS_BLOCK                    \
  "  ldmia.w r0!, {r2, r3, r4, r5}\n"      \
  "  ldrd r6, r7, [r1], #8\n"              \
  "  sxtb16 r8, r6\n"                      \
  "  smlad r9, r8, r2, r9\n"               \
  "  smlad r10, r8, r4, r10\n"             \
  "  sxtb16 r6, r6, ror #8\n"              \
  "  smlad r9, r6, r3, r9\n"               \
  "  smlad r10, r6, r5, r10\n"             \
  "  sxtb16 r8, r7\n"                      \
  "  smlad r11, r8, r2, r11\n"             \
  "  smlad r12, r8, r4, r12\n"             \
  "  sxtb16 r7, r7, ror #8\n"              \
  "  smlad r11, r7, r3, r11\n"             \
  "  smlad r12, r7, r5, r12\n"
/* Sums A (row 0) and B (row 1) of one channel: multiplier M, rounding term R, shift E. */
#define MCU_PAIRS_REQUANT(A, B, M, R, E)   \
  "  add r8, " R ", " A ", asr #31\n"      \
  "  smmlar " A ", " A ", " M ", r8\n"     \
  "  add r8, " R ", " B ", asr #31\n"      \
  "  smmlar " B ", " B ", " M ", r8\n"     \
  "  asr " A ", " A ", " E "\n"            \
  "  asr " B ", " B ", " E "\n"            \
  "  ssat " A ", #8, " A ", asr #1\n"      \
  "  ssat " B ", #8, " B ", asr #1\n"
/* A naked static function (no global symbol: an exported library's symbols all carry its
 * prefix). */
__attribute__((naked)) static void mcu_mat_mult_s8_pairs_dsp(
    __attribute__((unused)) const mcu_mat_mult_s8_pairs_t *job) {
  __asm__ volatile(
        "  push {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n"
        "  sub sp, sp, #64\n"
        "  ldm r0!, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  stm sp, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  ldm r0, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  add r0, sp, #32\n"
        "  stm r0, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  ldrd r0, r1, [sp]\n"
        "  subs r8, r0, r1\n"          /* -16 blocks */
        "  ubfx r8, r8, #4, #4\n"      /* (-blocks) mod 16 */
        "  movs r9, #56\n"
        "  adr r10, 2f\n"
        "  mla r8, r8, r9, r10\n"
        "  orr r8, r8, #1\n"           /* a Thumb address */
        "  str r8, [sp, #28]\n"
        "1:\n" /* a pair of rows: widen them (doubled), x0 then x1 a block at a time */
        "  ldrd r1, r2, [sp, #36]\n"   /* x, x1 */
        "  ldr r3, [sp, #44]\n"
        "  add r3, r1, r3\n"
        "  str r3, [sp, #36]\n"
        "  ldrd r0, r3, [sp]\n"
        "4:\n"
        "  ldr r4, [r1, r2]\n"
        "  ldr r5, [r1], #4\n"
        "  sxtb16 r6, r5\n"
        "  sxtab16 r6, r6, r5\n"
        "  sxtb16 r7, r5, ror #8\n"
        "  sxtab16 r7, r7, r5, ror #8\n"
        "  sxtb16 r8, r4\n"
        "  sxtab16 r8, r8, r4\n"
        "  sxtb16 r9, r4, ror #8\n"
        "  sxtab16 r9, r9, r4, ror #8\n"
        "  stm r0!, {r6, r7, r8, r9}\n"
        "  cmp r0, r3\n"
        "  bne 4b\n"
        "  ldrd r2, r3, [sp, #48]\n"   /* out, out1 */
        "  add r3, r2, r3\n"
        "  strd r2, r3, [sp, #16]\n"
        "  ldr r4, [sp, #56]\n"        /* out_step */
        "  ldr r5, [sp, #32]\n"        /* channels */
        "  add r5, r2, r5\n"
        "  str r5, [sp, #24]\n"
        "  add r2, r2, r4\n"
        "  str r2, [sp, #48]\n"
        "  ldrd r1, lr, [sp, #8]\n"
        "  ldm lr!, {r9, r10, r11, r12}\n"
        "  ldr r0, [sp]\n"
        "  ldr pc, [sp, #28]\n"
        "2:\n" MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK
        "  ldr r8, [sp, #4]\n"
        "  cmp r0, r8\n"
        "  bne 2b\n"
        "  ldm lr!, {r2, r3, r4, r5, r6, r7}\n"
        MCU_PAIRS_REQUANT("r9", "r10", "r2", "r3", "r4")
        MCU_PAIRS_REQUANT("r11", "r12", "r5", "r6", "r7")
        "  ldrd r2, r3, [sp, #16]\n"
        "  strb r9, [r2], #1\n"
        "  strb r11, [r2], #1\n"
        "  strb r10, [r3], #1\n"
        "  strb r12, [r3], #1\n"
        "  strd r2, r3, [sp, #16]\n"
        "  ldm lr!, {r9, r10, r11, r12}\n"
        "  ldr r0, [sp]\n"
        "  ldr r8, [sp, #24]\n"
        "  cmp r2, r8\n"
        "  it ne\n"
        "  ldrne pc, [sp, #28]\n"
        "  ldr r8, [sp, #60]\n"        /* pairs of rows left */
        "  subs r8, r8, #1\n"
        "  str r8, [sp, #60]\n"
        "  bne 1b\n"
        "  add sp, sp, #64\n"
        "  pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n");
}
#undef MCU_PAIRS_BLOCK
#undef MCU_PAIRS_REQUANT

#endif

void mcu_mat_mult_s8_pairs(const mcu_mat_mult_s8_params_t *p, const mcu_mat_mult_s8_rows_t *rows,
                           const int8_t *w, int32_t channels, int32_t depth, uint32_t *scratch) {
#if MCU_SIMD_DSP
  if (dsp_ready(scratch, w, depth)) {
    mcu_mat_mult_s8_pairs_t job = {scratch, scratch + depth, w, p->stream, NULL, NULL, NULL, 0,
                                   channels, *rows};
    mcu_mat_mult_s8_pairs_dsp(&job);
    return;
  }
#endif
  const int8_t *x = rows->x;
  int8_t *out = rows->out;
  for (int32_t i = 0; i < rows->count; ++i, x += rows->x_step, out += rows->out_step) {
    widen_rows(x, x + rows->x1, depth, 1, scratch);
    stream_c(p->stream, scratch, w, channels, depth, out, out + rows->out1);
  }
}
