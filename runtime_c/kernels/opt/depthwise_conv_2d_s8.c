/* DEPTHWISE_CONV_2D int8 with depth multiplier 1 and dilation 1, any filter size, stride and
 * padding: bit-exact with reference/depthwise_conv_2d.c (mcu_depthwise_conv_2d_int8), in place
 * too. 3x3 filters at strides 1 and 2 take the planar path (one channel at a time, SMLAD over
 * neighbouring taps, assembly on DSP cores: mcu/opt/dw_s8_planar.h, _fill.h, _lines.h);
 * everything else the band (mcu/opt/dw_s8_band.h).
 *
 * Channels go four at a time (NHWC: one 32-bit word holds one pixel's four channels), one group
 * over all output pixels. The group's input rows pass through a band in the scratch: k_h rows
 * of the padded width, slot y % k_h for input row y, each entry the group's four bytes, with the
 * input zero point in the padding (and in the lanes past the last channel). Plus the input
 * offset a padding byte is 0 and adds nothing, which is what the reference's skipping of taps
 * outside the image computes; so every window, at the border or not, is the same unrolled loop
 * over the band. Per tap and four channels that loop is one load from the band, two SXTAB16 (the
 * four inputs widened, offset added) and four SMLABB / SMLATT into the four sums, plus one LDRD
 * of the weights, widened once per group into the scratch ahead of the band. Integer sums do not
 * depend on their order and the build checked that no sum leaves int32.
 *
 * Requantisation: mcu_mbqm's SaturatingRoundingDoublingHighMul of a = acc << left by a
 * multiplier M in [2^30, 2^31) is floor((a * M + 2^30) / 2^31) for both signs (its nudge and
 * truncation towards zero combine to this), which is SMMULR(2a, M) while |a| < 2^30: the
 * variant is only chosen when the build proves that bound for every channel
 * (mcugen/codegen/lower/opt_depthwise.py). Its RoundingDivideByPOT by `right` > 0 is
 * (x + 2^(right-1) - (x < 0)) >> right, exact and without overflow for |x| < 2^30.
 *
 * In place (the plan put the output over the input, batch 1): the band holds a copy of every
 * input row a window still reads, so an output may land on input the band has already copied.
 * Output row oy covers flat input pixels below (oy + 1) * out_w, and the rows not yet copied
 * start at oy * stride_h - pad_h + k_h; the build only lets the plan run the operator in place
 * when the first never passes the second while rows remain to copy (`in_place_ok` in
 * opt_depthwise.py), and the kernel checks it again. */
#include <stddef.h>
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/kernels/depthwise_layer.h"
#include "mcu/quant.h"
#include "mcu/simd.h"

/* The kernel's parts, by job (one translation unit: their static functions inline as before). */
#include "mcu/opt/dw_s8_band.h"   /* the band path, any filter */
#include "mcu/opt/dw_s8_planar.h" /* the 3x3 path's layout and types */
#include "mcu/opt/dw_s8_fill.h"   /* its band fill */
#include "mcu/opt/dw_s8_lines.h"  /* its channels' lines */

/* The calls' constants of the layer (the same for every channel): output steps, blocks, the
 * activation range. */
static void dw3_calls(const dw3_job_t *j, dw3_call_t q[4]) {
  const int32_t n = j->dst.len;
  for (int32_t i = 0; i < 4; ++i) {
    q[i].ch = j->dst.step;
    q[i].quads = n / 4 * 8 * j->s_along; /* band bytes: 4 outputs, 2 bytes an entry */
    q[i].tail = n % 4;
    q[i].out_line = j->dst.line;
    q[i].out_skip = j->dst.line - (n - n % 2) * j->dst.step; /* from the assembly's r4 */
    q[i].lo = j->p->rq.act_min;
    q[i].hi = j->p->rq.act_max;
  }
}

/* The two lanes of a filter word's even (odd) bytes, doubled: SXTB16 then SXTAB16 adds them
 * again. */
static inline uint32_t dw3_even2(uint32_t t) { return mcu_sxtab16(mcu_sxtb16(t), t); }
static inline uint32_t dw3_odd2(uint32_t t) { return mcu_sxtab16_ror8(mcu_sxtb16_ror8(t), t); }

/* Four channels' doubled weights from `filter` (their first tap; `across` bytes to the next filter
 * line, `along` to the next tap along one) into calls[0..3].w, reading each tap's word once: its
 * even bytes' lanes give channels 0 and 2 (PKHBT, PKHTB of two taps), its odd bytes' channels 1
 * and 3. About 12 instructions a channel fewer than dw3_lanes' own loop; only the layer kernels
 * link it (depthwise_layer.h), so the general kernel's code stays as small as its budget asks. */
void mcu_dw3_weights4(const int8_t *filter, int32_t across, int32_t along, void *calls) {
  dw3_call_t *q = calls;
  for (int32_t k = 0; k < 3; ++k, filter += across) {
    uint32_t t0 = mcu_load_u32(filter), t1 = mcu_load_u32(filter + along);
    uint32_t t2 = mcu_load_u32(filter + 2 * along);
    uint32_t e0 = dw3_even2(t0), e1 = dw3_even2(t1), e2 = dw3_even2(t2);
    uint32_t o0 = dw3_odd2(t0), o1 = dw3_odd2(t1), o2 = dw3_odd2(t2);
    q[0].w[2 * k] = mcu_pack16((int32_t)e0, (int32_t)e1);
    q[0].w[2 * k + 1] = mcu_pack16((int32_t)e1, (int32_t)e2);
    q[2].w[2 * k] = mcu_pack16_hi(e0, e1);
    q[2].w[2 * k + 1] = mcu_pack16_hi(e1, e2);
    q[1].w[2 * k] = mcu_pack16((int32_t)o0, (int32_t)o1);
    q[1].w[2 * k + 1] = mcu_pack16((int32_t)o1, (int32_t)o2);
    q[3].w[2 * k] = mcu_pack16_hi(o0, o1);
    q[3].w[2 * k + 1] = mcu_pack16_hi(o1, o2);
  }
}

/* Channel c + i's doubled weights (W01, W12 of each filter line) and requantisation, i < g (the
 * lanes past g are never run), one channel at a time; four channels' weights by the layer's
 * `weights4` where it has one. */
static void dw3_lanes(const dw3_job_t *j, int32_t c, int32_t g, dw3_call_t q[4]) {
  const mcu_depthwise_conv_2d_params_t *p = j->p;
  const int32_t across = j->tap_across, along = j->tap_along;
  const int fast = g == 4 && j->weights4 != NULL;
  if (fast) {
    j->weights4(j->filter + c, across, along, q);
  }
  for (int32_t i = 0; i < g; ++i) {
    const int8_t *f = j->filter + c + i;
    for (int32_t k = 0; k < 3 && !fast; ++k, f += across) {
      int32_t w0 = 2 * f[0], w1 = 2 * f[along], w2 = 2 * f[2 * along];
      q[i].w[2 * k] = mcu_pack16(w0, w1);
      q[i].w[2 * k + 1] = mcu_pack16(w1, w2);
    }
    int32_t qi = p->rq.num_channels > 1 ? c + i : 0;
    int32_t right = -p->rq.shifts[qi];
    q[i].bias2 = j->bias != NULL ? 2 * j->bias[c + i] : 0;
    q[i].multiplier = p->rq.multipliers[qi];
    q[i].right = right;
    q[i].round =
        (int32_t)(((uint32_t)1 << (right - 1)) + ((uint32_t)p->rq.output_offset << right));
  }
}

/* The band lines of output lines oy0 .. oy1 - 1 into the table (byte offsets in a plane, three
 * a line). */
DW3_INLINE void dw3_table(const dw3_job_t *j, int32_t oy0, int32_t oy1) {
  const int32_t s_h = j->s_across, bytes = 2 * j->bw;
  int32_t slot = oy0 * s_h % j->ring; /* band slot of the window's first line */
  for (int32_t oy = oy0, *t = j->rows; oy < oy1; ++oy, t += 3) {
    int32_t s1 = slot + 1 == j->ring ? 0 : slot + 1, s2 = s1 + 1 == j->ring ? 0 : s1 + 1;
    t[0] = slot * bytes, t[1] = s1 * bytes, t[2] = s2 * bytes;
    slot += s_h;
    slot = slot >= j->ring ? slot - j->ring : slot;
  }
}

/* Channels c .. c + g - 1 of every output pixel, a chunk of output lines at a time: the chunk's
 * new input lines into the band, the chunk's table of band lines (once for the layer when one
 * chunk holds every line: `dw3_setup`), then each channel over the chunk's lines. `q` holds the
 * layer's constants (`dw3_calls`). */
static void dw3_group(const dw3_job_t *j, int32_t c, int32_t g, dw3_call_t q[4]) {
  dw3_lanes(j, c, g, q);
  const mcu_depthwise_conv_2d_params_t *p = j->p;
  const int32_t s_h = j->s_across, pad_h = j->pad_across, half = j->bw / 2;
  const int full = p->rq.act_min == -128 && p->rq.act_max == 127;
  int32_t next = -pad_h; /* the first input line not in the band yet */
  for (int32_t oy0 = 0; oy0 < j->dst.lines; oy0 += j->chunk) {
    int32_t oy1 = mcu_min_i32(oy0 + j->chunk, j->dst.lines);
    int32_t last = (oy1 - 1) * s_h - pad_h + 2;
    dw3_fill(j, mcu_max_i32(next, oy0 * s_h - pad_h), last, c, g);
    next = last + 1;
    if (j->chunk < j->dst.lines) {
      dw3_table(j, oy0, oy1);
    }
    for (int32_t i = 0; i < g; ++i) {
      q[i].rows = j->rows;
      q[i].plane = (uintptr_t)(j->band + i * j->ring * half);
      q[i].out = (uintptr_t)(j->out + oy0 * j->dst.line + c + i);
      q[i].lines = oy1 - oy0;
      q[i].more = i + 1 < g;
    }
#if MCU_SIMD_DSP
    if (full) { /* the group's channels in one call */
      j->lines(&q[0]);
      continue;
    }
#endif
    for (int32_t i = 0; i < g; ++i) {
      dw3_lines_c(&q[i], j->dst.len, j->s_along, full);
    }
  }
}

/* The layers this path takes (dw3_fits in opt_depthwise.py): 3x3, strides 1 or 2, every right
 * shift at least 1. */
static int dw3_fits(const mcu_depthwise_conv_2d_params_t *p, int32_t k_h, int32_t k_w) {
  if (k_h != 3 || k_w != 3 || p->win.stride_h < 1 || p->win.stride_h > 2 || p->win.stride_w < 1 ||
      p->win.stride_w > 2) {
    return 0;
  }
  for (int32_t i = 0; i < p->rq.num_channels; ++i) {
    if (p->rq.shifts[i] > -1) {
      return 0;
    }
  }
  return 1;
}

/* Lines are columns when the output is taller than wide and as large as the input (stride 1,
 * SAME: output column ox then lands on input column ox, and the layer may still run in place),
 * rows otherwise. */
static int dw3_by_columns(const dw_job_t *g) {
  return g->out_h > g->out_w && g->in_h == g->out_h && g->in_w == g->out_w;
}

/* The planar path runs every layer that fits, lines of any length (blocks of four, two, one). */
static int dw3_takes(const dw_job_t *g) { return dw3_fits(g->p, g->k_h, g->k_w); }

/* Rows as lines, or columns when the output is taller than wide; `layer`: the layer's own
 * assembly, which wants one chunk of every line. */
static void dw3_setup(dw3_job_t *j, const dw_job_t *g, void *scratch,
                      const mcu_dw3_layer_t *layer) {
  const mcu_depthwise_conv_2d_params_t *p = g->p;
  const int32_t ch = g->ch;
  const dw3_side_t rows_in = {g->in_h, g->in_w, ch, g->in_w * ch};
  const dw3_side_t rows_out = {g->out_h, g->out_w, ch, g->out_w * ch};
  const dw3_side_t cols_in = {g->in_w, g->in_h, g->in_w * ch, ch};
  const dw3_side_t cols_out = {g->out_w, g->out_h, g->out_w * ch, ch};
  j->in = g->in;
  j->out = g->out;
  j->filter = g->filter;
  j->bias = g->bias;
  j->p = p;
  j->ch = ch;
  if (dw3_by_columns(g)) {
    j->src = cols_in, j->dst = cols_out;
    j->s_across = p->win.stride_w, j->s_along = p->win.stride_h;
    j->pad_across = p->win.pad_w, j->pad_along = p->win.pad_h;
    j->tap_across = ch, j->tap_along = 3 * ch;
  } else {
    j->src = rows_in, j->dst = rows_out;
    j->s_across = p->win.stride_h, j->s_along = p->win.stride_w;
    j->pad_across = p->win.pad_h, j->pad_along = p->win.pad_w;
    j->tap_across = 3 * ch, j->tap_along = ch;
  }
  int32_t want = (MCU_DW3_OUTPUTS + j->dst.len - 1) / j->dst.len;
  j->chunk = layer != NULL ? j->dst.lines : mcu_min_i32(j->dst.lines, want);
  j->weights4 = layer != NULL ? layer->weights4 : NULL;
#if MCU_SIMD_DSP
  j->fill = layer != NULL ? layer->fill : NULL;
  j->lines = layer != NULL && layer->lines != NULL ? layer->lines
             : j->s_along == 1                   ? dw3_lines_s1
                                                 : dw3_lines_s2;
#endif
  j->ring = (j->chunk - 1) * j->s_across + 3;
  int32_t bw = mcu_max_i32(j->pad_along + j->src.len, j->s_along * j->dst.len + 2);
  j->bw = bw + (bw & 1);
  j->rows = scratch;
  j->band = (uint32_t *)(j->rows + 3 * j->chunk);
  memset(j->band, 0, (size_t)j->ring * (size_t)j->bw * 8); /* the padding's entries */
  if (j->chunk == j->dst.lines) {
    dw3_table(j, 0, j->chunk);
  }
}

/* In place, output row oy must not reach input rows the band has not copied while some remain
 * (see the top of the file). */
static int in_place_ok(const dw_job_t *j) {
  if (dw3_takes(j) && dw3_by_columns(j)) {
    /* the 3x3 path by columns: output column ox over input column ox, copied while columns
     * below ox * stride_w - pad_w + 3 are */
    for (int32_t ox = 0; ox < j->out_w; ++ox) {
      int32_t copied = ox * j->p->win.stride_w - j->p->win.pad_w + 3;
      if (copied < j->in_w && ox >= copied) {
        return 0;
      }
    }
    return 1;
  }
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    int32_t copied = oy * j->p->win.stride_h - j->p->win.pad_h + j->k_h; /* rows below are in the band */
    if (copied < j->in_h && (oy + 1) * j->out_w > copied * j->in_w) {
      return 0;
    }
  }
  return 1;
}

static void run(const dw_job_t *j) {
  for (int32_t c = 0; c < j->ch; c += 4) {
    group(j, c, j->ch - c < 4 ? j->ch - c : 4);
  }
}

/* The kernel; `layer` (NULL: none) runs a 3x3 layer over a band of the whole image. */
static mcu_status_t dw_eval(const mcu_node_t *node, mcu_context_t *ctx,
                            const mcu_dw3_layer_t *layer) {
  const mcu_depthwise_conv_2d_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && filter != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  dw_job_t j = {mcu_input(ctx, node, 0),
                mcu_output(ctx, node, 0),
                mcu_input(ctx, node, 1),
                node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL,
                p,
                in->dims[1],
                in->dims[2],
                in->dims[3],
                filter->dims[1],
                filter->dims[2],
                out->dims[1],
                out->dims[2],
                p->win.pad_w,
                0,
                NULL,
                NULL};
  int32_t batches = in->dims[0];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == j.ch && filter->dims[3] == j.ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->depth_multiplier == 1 && p->win.dilation_h == 1 && p->win.dilation_w == 1,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.k_h <= MCU_DW_MAX_ROWS, MCU_ERR_BAD_MODEL);
  MCU_REQUANT_CHECK(p->rq, j.ch);
  MCU_ENSURE_MODEL(j.pad_w >= 0 && p->win.pad_h >= 0, MCU_ERR_BAD_MODEL);
  /* the band row: padding, the image, and what the last window reads past it */
  j.band_w = mcu_max_i32(j.pad_w + j.in_w, (j.out_w - 1) * p->win.stride_w + j.k_w);
  j.wide = mcu_scratch(ctx, node);
  MCU_ENSURE(j.wide != NULL, MCU_ERR_BAD_MODEL);
  j.band = j.wide + 2 * j.k_h * j.k_w;
  if ((const void *)j.out == (const void *)j.in) {
    /* always checked: the path is chosen at run time, by the addresses the allocator gave */
    MCU_ENSURE(batches == 1 && in_place_ok(&j), MCU_ERR_BAD_MODEL);
  }
  if (dw3_takes(&j)) {
    dw3_job_t d;
    dw3_setup(&d, &j, j.wide, layer);
    dw3_call_t q[4];
    dw3_calls(&d, q);
    for (int32_t b = 0; b < batches; ++b) {
      for (int32_t c = 0; c < d.ch; c += 4) {
        dw3_group(&d, c, mcu_min_i32(d.ch - c, 4), q);
      }
      d.in += j.in_h * j.in_w * j.ch;
      d.out += j.out_h * j.out_w * j.ch;
    }
    return MCU_OK;
  }
  for (int32_t b = 0; b < batches; ++b) {
    run(&j);
    j.in += j.in_h * j.in_w * j.ch;
    j.out += j.out_h * j.out_w * j.ch;
  }
  return MCU_OK;
}

mcu_status_t mcu_depthwise_conv_2d_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  return dw_eval(node, ctx, NULL);
}

mcu_status_t mcu_depthwise_conv_2d_s8_layer(const mcu_node_t *node, mcu_context_t *ctx,
                                            const mcu_dw3_layer_t *layer) {
  return dw_eval(node, ctx, layer);
}
