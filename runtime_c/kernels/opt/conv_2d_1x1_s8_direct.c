/* CONV_2D int8 with a 1x1 filter, stride 1 and one group, its pixels read as they are (int8, no
 * widened copy), bit-exact with reference/conv_2d.c: the rung below conv_2d_1x1_s8 on the
 * ladder of kernels chosen for memory (mcugen/kernel_choice.py), for layers with the matrix
 * product's short requantisation (mcu/mat_mult_s8.h `short_shifts`; mcugen/codegen/lower/
 * opt_mat_mult.py). conv_2d_1x1_s8.c widens two pixels into 16-bit lanes in its scratch; this one
 * takes a pixel at a time against four channels (two pairs of the build's pair layout), SXTB16
 * and SXTB16 ROR 8 of each input and weight word in registers: 16 multiply-adds in 21
 * instructions, two blocks a loop, then the short requantisation of the four sums in registers
 * (the sum starts at the undoubled bias and is doubled at the end, as mat_mult_s8.c's single
 * row), the group's constants read in order from the build's `stream` (mcu/mat_mult_s8.h).
 * Unaligned weights and cores without the DSP extension take the same in C; depths not a
 * multiple of 4 (no stream) and channels past the last group of four take mcu_mat_mult_s8_row
 * (the same sums and requantisation, from `bias`, `multipliers` and `short_shifts`, which the
 * build leaves out when the stream covers every channel).
 *
 * Scratch: none; in place (the plan put the output over the input, with the reference kernel's
 * staging of two pixels as scratch, conv_2d.py conv_staging_bytes) each pixel is copied into it
 * before its outputs are written, from the first pixel on when there are no more output than
 * input channels, else from the last back (mcu/mat_mult_s8.h mcu_pointwise_pixels). */
#include "mcu/kernels/conv_2d.h"
#include "mcu/mat_mult_s8.h"
#include "mcu/opt/mat_mult_s8_asm.h"
#include "mcu/simd.h"

/* The short requantisation of the undoubled sum `acc` (mat_mult_s8.c's header): multiplier `m`,
 * rounding term `round` = (2 output_offset + 1) << right1, shift `right1`. */
static inline int8_t short_out(int32_t acc, int32_t m, int32_t round, int32_t right1) {
  int32_t acc2 = (int32_t)((uint32_t)acc << 1);
  return (int8_t)mcu_ssat8_asr1(mcu_smmlar(acc2, m, round + (acc2 >> 31)) >> right1);
}

/* Groups of four channels of pixel `x` (depth a multiple of 4) with the build's stream `q`, in
 * plain C: the assembly's sums and requantisation. */
static void quads_c(const int32_t *q, const int8_t *x, const int8_t *w, int32_t groups,
                    int32_t depth, int8_t *out) {
  for (int32_t i = 0; i < groups; ++i, q += 16, out += 4, w += 4 * depth) {
    int32_t acc[4] = {q[0], q[1], q[2], q[3]};
    for (int32_t j = 0; j < depth; j += 4) {
      uint32_t xw = mcu_load_u32(x + j);
      uint32_t xe = mcu_sxtb16(xw), xo = mcu_sxtb16_ror8(xw);
      for (int32_t k = 0; k < 4; ++k) { /* pair k >> 1 (2 depth words on), channel k & 1 */
        uint32_t wk = mcu_load_u32(w + (k >> 1) * 2 * depth + 2 * j + 4 * (k & 1));
        acc[k] = mcu_smlad(mcu_sxtb16_ror8(wk), xo, mcu_smlad(mcu_sxtb16(wk), xe, acc[k]));
      }
    }
    for (int32_t k = 0; k < 4; ++k) {
      out[k] = short_out(acc[k], q[4 + 3 * k], q[5 + 3 * k], q[6 + 3 * k]);
    }
  }
}

#if MCU_SIMD_DSP
/* Groups of four channels of pixel `x` (depth a multiple of 4, weights word-aligned) with the
 * build's stream `q` (mcu/mat_mult_s8.h): 16 words a group. */
static void quads_dsp(const int32_t *q, const int8_t *x, const int8_t *w, int32_t groups,
                  int32_t depth, int8_t *out) {
  const int8_t *end = x + depth;
  const int8_t *a = w; /* the group's first pair, then its second */
  for (int32_t i = 0; i < groups; ++i, q += 16, out += 4) {
    uint32_t xe, xo, w0, w1, t;
    const int8_t *s = x;
    const int8_t *b = a + 2 * depth;
    int32_t c0 = q[0], c1 = q[1], c2 = q[2], c3 = q[3];
    MCU_LOOP_1X4(s);
    a = b; /* the next group's first pair */
    out[0] = short_out(c0, q[4], q[5], q[6]);
    out[1] = short_out(c1, q[7], q[8], q[9]);
    out[2] = short_out(c2, q[10], q[11], q[12]);
    out[3] = short_out(c3, q[13], q[14], q[15]);
  }
}
#endif

/* Every output channel of pixel `x`: the groups of four from the stream (the build gives one only
 * for depths that are multiples of 4), the rest from `bias`, `multipliers` and `short_shifts`. */
static void pixel(const mcu_mat_mult_s8_params_t *p, const int8_t *x, const int8_t *w,
                  int32_t channels, int32_t depth, int8_t *out) {
  int32_t c = 0;
  if (p->stream != NULL) {
#if MCU_SIMD_DSP
    if (((uintptr_t)w & 3) == 0 && depth > 0) {
      quads_dsp(p->stream, x, w, channels >> 2, depth, out);
    } else {
      quads_c(p->stream, x, w, channels >> 2, depth, out);
    }
#else
    quads_c(p->stream, x, w, channels >> 2, depth, out);
#endif
    c = channels & ~3;
  }
  if (c == 0) {
    mcu_mat_mult_s8_row(p, x, w, channels, depth, out);
  } else if (c < channels) { /* the last channels: their parameters from c on */
    int32_t per = p->num_channels > 1;
    mcu_mat_mult_s8_params_t rest = *p;
    rest.bias += c;
    rest.multipliers += per ? c : 0;
    rest.short_shifts += per ? c : 0;
    rest.num_channels = per ? channels - c : 1;
    mcu_mat_mult_s8_row(&rest, x, w + c * depth, channels - c, depth, out + c);
  }
}

mcu_status_t mcu_conv_2d_1x1_s8_direct(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  mcu_pointwise_t d;
  MCU_TRY(mcu_pointwise_dims(node, ctx, &d));
  /* the stream's groups need whole words of inputs; channels past them need the arrays */
  int groups_only = p->stream != NULL && (d.out_c & 3) == 0;
  MCU_ENSURE_MODEL(p->stream == NULL || (d.in_c & 3) == 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(groups_only || p->short_shifts != NULL, MCU_ERR_BAD_MODEL);
  return mcu_pointwise_pixels(node, ctx, &d, pixel);
}
