/* CONV_2D int8 with a 1x1 filter, stride 1 and one group, bit-exact with reference/conv_2d.c,
 * with the reference kernel's staging as its scratch: two pixels of int8 inputs (2 in_c bytes;
 * conv_2d_1x1_s8.c widens them into 16-bit lanes, twice that). The rung between conv_2d_1x1_s8
 * and conv_2d_1x1_s8_direct on the ladder of kernels chosen for memory (mcugen/kernel_choice.py),
 * for the parameters of conv_2d_1x1_s8's stream path (mcu/mat_mult_s8.h `stream`: depth a
 * multiple of 4, channels even, the short requantisation; the same parameters and pair-layout
 * weights as that path). The two pixels are copied into the scratch interleaved a word at a time
 * (word 2j + s holds inputs 4j..4j+3 of pixel s), then each pair of channels runs against them:
 * one LDRD of the two pixels' words, SXTB16 / SXTB16 ROR 8 of them and of the channels' two
 * weight words in registers, 8 SMLAD: 16 multiply-adds in 18 instructions, two blocks a loop
 * (assembly on a DSP core, plain C elsewhere); the sums start at the undoubled biases (the
 * stream's are doubled for the widened inputs) and are doubled for the short requantisation
 * (mat_mult_s8.c's header). An odd last pixel is paired with itself.
 *
 * The copy holds everything a pair's products read, so it is also the staging for running in
 * place, in conv_2d_1x1_s8.c's order: with no more outputs than inputs from the first pair on,
 * else from the last pair back; either way no pixel not yet copied is overwritten. */
#include "mcu/kernels/conv_2d.h"
#include "mcu/mat_mult_s8.h"
#include "mcu/opt/mat_mult_s8_asm.h"
#include "mcu/simd.h"

/* The short requantisation of the undoubled sum `acc`: multiplier `m`, rounding term `round`,
 * shift `right1` (mat_mult_s8.c's header). */
static inline int8_t short_out(int32_t acc, int32_t m, int32_t round, int32_t right1) {
  int32_t acc2 = (int32_t)((uint32_t)acc << 1);
  return (int8_t)mcu_ssat8_asr1(mcu_smmlar(acc2, m, round + (acc2 >> 31)) >> right1);
}

#if MCU_SIMD_DSP
/* One block: the two pixels' words, then the pair of channels' words. */
#define STAGED_BLOCK                                \
  "ldrd %[x0e], %[x1e], [%[s]], #8\n\t"             \
  "sxtb16 %[x0o], %[x0e], ror #8\n\t"               \
  "sxtb16 %[x0e], %[x0e]\n\t"                       \
  "sxtb16 %[x1o], %[x1e], ror #8\n\t"               \
  "sxtb16 %[x1e], %[x1e]\n\t"                       \
  MCU_MACS_2X2
#endif

/* Every pair of channels against the staged pixels `x` (depth / 4 blocks of two words): sums
 * s[2 * channel + pixel] from the stream `q`'s biases, then the outputs out0[c], out1[c]. */
static void pairs(const int32_t *q, const uint32_t *x, const int8_t *w, int32_t channels,
                  int32_t depth, int8_t *out0, int8_t *out1) {
  const uint32_t *end = x + (depth >> 1);
  for (int32_t c = 0; c < channels; c += 2, q += 10) {
    int32_t a00 = q[0] >> 1, a01 = q[1] >> 1, a10 = q[2] >> 1, a11 = q[3] >> 1;
    const uint32_t *s = x;
#if MCU_SIMD_DSP
    if (((uintptr_t)w & 3) == 0) {
      uint32_t x0e, x0o, x1e, x1o, w0, w1, t;
      MCU_LOOP_2X2(s, STAGED_BLOCK, "8");
    }
#endif
    for (; s != end; s += 2, w += 8) { /* plain C: other cores, unaligned weights */
      uint32_t wa = mcu_load_u32(w), wb = mcu_load_u32(w + 4);
      uint32_t x0e = mcu_sxtb16(s[0]), x0o = mcu_sxtb16_ror8(s[0]);
      uint32_t x1e = mcu_sxtb16(s[1]), x1o = mcu_sxtb16_ror8(s[1]);
      a00 = mcu_smlad(mcu_sxtb16_ror8(wa), x0o, mcu_smlad(mcu_sxtb16(wa), x0e, a00));
      a01 = mcu_smlad(mcu_sxtb16_ror8(wa), x1o, mcu_smlad(mcu_sxtb16(wa), x1e, a01));
      a10 = mcu_smlad(mcu_sxtb16_ror8(wb), x0o, mcu_smlad(mcu_sxtb16(wb), x0e, a10));
      a11 = mcu_smlad(mcu_sxtb16_ror8(wb), x1o, mcu_smlad(mcu_sxtb16(wb), x1e, a11));
    }
    /* each channel's multiplier, rounding term and shift; out1 first (it is out0 for an odd
     * last pixel paired with itself) */
    out1[c] = short_out(a01, q[4], q[5], q[6]);
    out0[c] = short_out(a00, q[4], q[5], q[6]);
    out1[c + 1] = short_out(a11, q[7], q[8], q[9]);
    out0[c + 1] = short_out(a10, q[7], q[8], q[9]);
  }
}
#if MCU_SIMD_DSP
#undef STAGED_BLOCK
#endif

mcu_status_t mcu_conv_2d_1x1_s8_staged(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  mcu_pointwise_t d;
  MCU_TRY(mcu_pointwise_dims(node, ctx, &d));
  int32_t in_c = d.in_c, out_c = d.out_c, pixels = d.pixels;
  MCU_ENSURE_MODEL(p->stream != NULL && (in_c & 3) == 0 && (out_c & 1) == 0, MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  uint32_t *x = mcu_scratch(ctx, node); /* two pixels: 2 in_c bytes, word-aligned */
  MCU_ENSURE(x != NULL, MCU_ERR_BAD_MODEL);
  int32_t back = out_c > in_c; /* in place: from the last pair back */
  /* a concatenation's channel slice: pixels `out_s` apart, never over the input */
  int32_t out_s = mcu_output_stride(node, out_c);
  MCU_ENSURE_MODEL(out_s == out_c || (const void *)output != (const void *)input,
                   MCU_ERR_BAD_MODEL);
  for (int32_t i = 0; i < pixels; i += 2) {
    int32_t two = pixels - i >= 2;
    /* the pair's first pixel: the pairs from the front or the back, then an odd one left */
    int32_t k = two ? (back ? pixels - i - 2 : i) : (back ? 0 : pixels - 1);
    const int8_t *x0 = input + k * in_c;
    const int8_t *x1 = two ? x0 + in_c : x0;
    for (int32_t j = 0; j < in_c >> 2; ++j) {
      x[2 * j] = mcu_load_u32(x0 + 4 * j);
      x[2 * j + 1] = mcu_load_u32(x1 + 4 * j);
    }
    int8_t *out0 = output + k * out_s;
    pairs(p->stream, x, weights, out_c, in_c, out0, two ? out0 + out_s : out0);
  }
  return MCU_OK;
}
