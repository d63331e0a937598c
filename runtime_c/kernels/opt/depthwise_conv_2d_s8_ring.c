/* DEPTHWISE_CONV_2D int8, 3x3, strides 1 and 2, depth multiplier 1, every right shift at least 1
 * (what depthwise_conv_2d_s8.c's planar path takes), with a small scratch: bit-exact with
 * reference/depthwise_conv_2d.c (mcu_depthwise_conv_2d_int8), in place too. The rung between the
 * fast variant and the lean one on the ladder of kernels chosen for memory
 * (mcugen/codegen/lower/opt_depthwise_ring.py).
 *
 * The fast variant widens four channels into four planes of a band; this one widens one channel
 * into one plane: `ring` input lines of `bw` int16 entries (the input offset added, 0 in the
 * padding), the lines a chunk of output lines reads, then runs the planar path's per-channel
 * blocks over them (mcu/opt/dw_s8_lines.h: SMLAD over pairs of taps, assembly on DSP cores in the
 * full int8 range, each output line's band lines a slide on from the last's in place of the fast
 * path's table), channel after channel. The next chunk's first 3 - stride lines are the last
 * ones of this chunk, moved to the band's start before its new lines come in. Lines are the
 * image's columns when the output is taller than wide and as large as the input, if three
 * columns fit the scratch budget, its rows otherwise; the chunk is the largest (up to
 * MCU_DWR_OUTPUTS outputs a call) whose scratch, `dwr_bytes`, stays within one channel plane of
 * the input (in_h * in_w bytes: the reference kernel's in-place staging), or one line.
 * `ring_layout` in opt_depthwise_ring.py makes the same choice for the plan.
 *
 * In place (batch 1, the plan put the output over the input): output channel c lands only on
 * input channel c, whose lines the band copies ahead of the outputs: output line oy (rows) ends
 * at flat pixel (oy + 1) * out_w, which must not pass the first input row the band has not
 * copied (oy * stride_h - pad_h + 3; a chunk only copies further) while rows remain; by columns
 * the shapes are equal and output column ox must lie below the first column not copied. The
 * build checks it (`in_place_ok` in opt_depthwise.py) and so does the kernel. */
#include <stddef.h>
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/opt/dw_s8_lines.h"
#include "mcu/opt/dw_s8_planar.h"
#include "mcu/quant.h"
#include "mcu/simd.h"

#define MCU_DWR_OUTPUTS 64 /* outputs per channel a call aims at: RING_OUTPUTS in Python */

typedef struct {
  const int8_t *in; /* one batch */
  int8_t *out;
  const int8_t *filter;
  const int32_t *bias; /* NULL: none */
  const mcu_depthwise_conv_2d_params_t *p;
  int32_t ch;
  int cols;                      /* lines are columns */
  dw3_side_t src, dst;           /* input and output lines */
  int32_t s_across, s_along;     /* strides across and along lines */
  int32_t pad_across, pad_along; /* padding before the first line, before a line's first pixel */
  int32_t tap_across, tap_along; /* filter bytes to the next filter line, the next tap along */
  int32_t chunk;                 /* output lines a call */
  int32_t ring;                  /* band lines: (chunk - 1) * s_across + 3 */
  int32_t bw;                    /* int16 entries a band line, even */
  int16_t *band;                 /* scratch: `ring` lines of bw entries */
  int32_t fill[5];               /* dwr_fill_lines' pixels, steps, offset and band line */
} dwr_job_t;

/* Scratch bytes of a chunk of output lines: its window's input lines. */
static int32_t dwr_bytes(int32_t chunk, int32_t s_across, int32_t bw) {
  return 2 * ((chunk - 1) * s_across + 3) * bw;
}

/* The call of the lines (dw3_call_t, whose `rows` the assembly below does not read) and where
 * each output line's band lines are: its first at `plane`, then `bytes` apart; the next output
 * line's first `slide` bytes on. */
typedef struct {
  dw3_call_t q;
  int32_t bytes; /* 92 */
  int32_t slide; /* 96 */
} dwr_call_t;

#if MCU_SIMD_DSP
_Static_assert(offsetof(dwr_call_t, bytes) == 92 && offsetof(dwr_call_t, slide) == 96,
               "the offsets the assembly uses");

/* An output line's band lines for DW3_LINES_OF (mcu/opt/dw_s8_lines.h): from `plane` on,
 * `bytes` apart, and `plane` moved on by `slide` for the next line (in place of a table). */
#define DWR_LINE_SLIDE                                                                            \
  "ldr r1, [r0, #52]\n\t"                                                                         \
  "ldrd r12, lr, [r0, #92]\n\t"                                                                   \
  "add r2, r1, r12\n\t"                                                                           \
  "add r3, r2, r12\n\t"                                                                           \
  "add lr, r1, lr\n\t"                                                                            \
  "str lr, [r0, #52]\n\t"

__attribute__((naked)) static void dwr_lines_s1(dwr_call_t *k) {
  (void)k;
  __asm__ volatile(DW3_LINES_OF(DWR_LINE_SLIDE, DW3_S1_ROW4, DW3_S1_ROW2));
}

__attribute__((naked)) static void dwr_lines_s2(dwr_call_t *k) {
  (void)k;
  __asm__ volatile(DW3_LINES_OF(DWR_LINE_SLIDE, DW3_S2_ROW4, DW3_S2_ROW2));
}
#endif

/* Lines along columns (`cols`) or rows, of input [in_h, in_w] and output [out_h, out_w]. */
static void dwr_axes(dwr_job_t *j, int cols, int32_t in_h, int32_t in_w, int32_t out_h,
                     int32_t out_w) {
  const mcu_window_params_t *w = &j->p->win;
  const int32_t ch = j->ch;
  j->cols = cols;
  if (cols) {
    j->src = (dw3_side_t){in_w, in_h, in_w * ch, ch};
    j->dst = (dw3_side_t){out_w, out_h, out_w * ch, ch};
    j->s_across = w->stride_w, j->s_along = w->stride_h;
    j->pad_across = w->pad_w, j->pad_along = w->pad_h;
    j->tap_across = ch, j->tap_along = 3 * ch;
  } else {
    j->src = (dw3_side_t){in_h, in_w, ch, in_w * ch};
    j->dst = (dw3_side_t){out_h, out_w, ch, out_w * ch};
    j->s_across = w->stride_h, j->s_along = w->stride_w;
    j->pad_across = w->pad_h, j->pad_along = w->pad_w;
    j->tap_across = 3 * ch, j->tap_along = ch;
  }
  int32_t bw = mcu_max_i32(j->pad_along + j->src.len, j->s_along * j->dst.len + 2);
  j->bw = bw + (bw & 1);
}

/* The lines and the chunk (the top of the file), the scratch laid out and the band cleared. */
static void dwr_layout(dwr_job_t *j, int32_t in_h, int32_t in_w, int32_t out_h, int32_t out_w,
                       void *scratch) {
  const int32_t budget = in_h * in_w;
  const int tall = out_h > out_w && in_h == out_h && in_w == out_w;
  dwr_axes(j, tall, in_h, in_w, out_h, out_w);
  if (tall && dwr_bytes(1, j->s_across, j->bw) > budget) {
    dwr_axes(j, 0, in_h, in_w, out_h, out_w);
  }
  const int32_t want = mcu_min_i32(j->dst.lines, (MCU_DWR_OUTPUTS + j->dst.len - 1) / j->dst.len);
  j->chunk = 1;
  while (j->chunk < want && dwr_bytes(j->chunk + 1, j->s_across, j->bw) <= budget) {
    ++j->chunk;
  }
  j->ring = (j->chunk - 1) * j->s_across + 3;
  j->band = scratch;
  memset(j->band, 0, (size_t)j->ring * (size_t)j->bw * 2); /* the padding's entries */
  j->fill[0] = j->src.len, j->fill[1] = j->src.step, j->fill[2] = j->src.line;
  j->fill[3] = (int32_t)mcu_pack16(j->p->rq.input_offset, j->p->rq.input_offset);
  j->fill[4] = 2 * j->bw;
}

/* `lines` >= 1 input lines of one channel into band lines from `dst`, the input offset added:
 * f[0] pixels a line, f[1] bytes from a pixel to the next, f[2] bytes from a line's first pixel
 * to the next line's, f[3] the offset in both 16-bit lanes, f[4] bytes from a band line to the
 * next. On DSP cores a lone pixel first where the line starts mid-word (an odd padding), then
 * four pixels a pass (two words by STRD), then two, then one (two pixels: LDRSB twice, PKHBT,
 * SADD16); in C elsewhere. */
#if MCU_SIMD_DSP
__attribute__((naked)) static void dwr_fill_lines(const int8_t *src, int16_t *dst, int32_t lines,
                                                  const int32_t f[5]) {
  (void)src, (void)dst, (void)lines, (void)f;
  __asm__ volatile("push {r4-r11, lr}\n\t"
                   "ldm r3, {r4, r5, r6, r7, r8}\n\t"
                   "0:\n\t"
                   "mov r9, r0\n\t"
                   "mov r12, r1\n\t"
                   "mov lr, r4\n\t" /* pixels left */
                   "tst r12, #2\n\t"
                   "beq 1f\n\t"
                   "ldrsb r3, [r9]\n\t" /* one, where the line starts mid-word */
                   "add r9, r9, r5\n\t"
                   "sadd16 r3, r3, r7\n\t"
                   "strh r3, [r12], #2\n\t"
                   "sub lr, lr, #1\n\t"
                   "1:\n\t"
                   "subs lr, lr, #4\n\t"
                   "blt 3f\n\t"
                   "2:\n\t" /* four pixels */
                   "ldrsb r3, [r9]\n\t"
                   "ldrsb r10, [r9, r5]\n\t"
                   "add r9, r9, r5, lsl #1\n\t"
                   "pkhbt r3, r3, r10, lsl #16\n\t"
                   "ldrsb r10, [r9]\n\t"
                   "ldrsb r11, [r9, r5]\n\t"
                   "add r9, r9, r5, lsl #1\n\t"
                   "pkhbt r10, r10, r11, lsl #16\n\t"
                   "sadd16 r3, r3, r7\n\t"
                   "sadd16 r10, r10, r7\n\t"
                   "strd r3, r10, [r12], #8\n\t"
                   "subs lr, lr, #4\n\t"
                   "bge 2b\n\t"
                   "3:\n\t" /* lr = left - 4 (left 0..3): bits 1 and 0 are left's */
                   "tst lr, #2\n\t"
                   "beq 4f\n\t"
                   "ldrsb r3, [r9]\n\t"
                   "ldrsb r10, [r9, r5]\n\t"
                   "add r9, r9, r5, lsl #1\n\t"
                   "pkhbt r3, r3, r10, lsl #16\n\t"
                   "sadd16 r3, r3, r7\n\t"
                   "str r3, [r12], #4\n\t"
                   "4:\n\t"
                   "tst lr, #1\n\t"
                   "beq 5f\n\t"
                   "ldrsb r3, [r9]\n\t"
                   "sadd16 r3, r3, r7\n\t"
                   "strh r3, [r12]\n\t"
                   "5:\n\t"
                   "add r0, r0, r6\n\t"
                   "add r1, r1, r8\n\t"
                   "subs r2, r2, #1\n\t"
                   "bne 0b\n\t"
                   "pop {r4-r11, pc}\n\t");
}
#else
static void dwr_fill_lines(const int8_t *src, int16_t *dst, int32_t lines, const int32_t f[5]) {
  const int32_t n = f[0], step = f[1], line = f[2], off = (int16_t)f[3], bw = f[4] / 2;
  for (; lines > 0; --lines, src += line, dst += bw) {
    for (int32_t k = 0; k < n; ++k) {
      dst[k] = (int16_t)(src[k * step] + off);
    }
  }
}
#endif

/* Input lines y .. y + count - 1 (y >= -pad_across) of channel c into band lines from `slot` on:
 * the image's, and 0 for those outside it (the entries around the image stay 0 from
 * `dwr_layout`). */
static void dwr_fill(const dwr_job_t *j, int32_t y, int32_t count, int32_t slot, int32_t c) {
  const int32_t bw = j->bw;
  int32_t first = y, end = y + count;
  if (y < 0 || end > j->src.lines) { /* the first or the last lines of the layer */
    first = mcu_max_i32(y, 0), end = mcu_min_i32(end, j->src.lines);
    for (int32_t l = y; l < y + count; ++l) {
      if (l < first || l >= end) {
        memset(j->band + (slot + l - y) * bw, 0, (size_t)bw * 2);
      }
    }
    if (first >= end) {
      return;
    }
  }
  dwr_fill_lines(j->in + first * j->src.line + c, j->band + (slot + first - y) * bw + j->pad_along,
                 end - first, j->fill);
}

/* The call's constants of the layer: output steps, blocks, the activation range. */
static void dwr_call(const dwr_job_t *j, dwr_call_t *call) {
  dw3_call_t *q = &call->q;
  const int32_t n = j->dst.len;
  memset(call, 0, sizeof *call);
  q->ch = j->dst.step;
  q->quads = n / 4 * 8 * j->s_along; /* band bytes: 4 outputs, 2 bytes an entry */
  q->tail = n % 4;
  q->out_line = j->dst.line;
  q->out_skip = j->dst.line - (n - n % 2) * j->dst.step; /* from the assembly's r4 */
  q->lo = j->p->rq.act_min;
  q->hi = j->p->rq.act_max;
  q->more = 0;
  call->bytes = 2 * j->bw;
  call->slide = j->s_across * call->bytes;
}

/* Channel c's doubled weights (W01, W12 of each filter line) and requantisation. */
static void dwr_lane(const dwr_job_t *j, int32_t c, dw3_call_t *q) {
  const mcu_depthwise_conv_2d_params_t *p = j->p;
  const int8_t *f = j->filter + c;
  for (int32_t k = 0; k < 3; ++k, f += j->tap_across) {
    int32_t w0 = 2 * f[0], w1 = 2 * f[j->tap_along], w2 = 2 * f[2 * j->tap_along];
    q->w[2 * k] = mcu_pack16(w0, w1);
    q->w[2 * k + 1] = mcu_pack16(w1, w2);
  }
  int32_t qi = p->rq.num_channels > 1 ? c : 0;
  int32_t right = -p->rq.shifts[qi];
  q->bias2 = j->bias != NULL ? 2 * j->bias[c] : 0;
  q->multiplier = p->rq.multipliers[qi];
  q->right = right;
  q->round = (int32_t)(((uint32_t)1 << (right - 1)) + ((uint32_t)p->rq.output_offset << right));
}

/* Every channel of one batch, one at a time, a chunk of output lines per call. The band holds
 * the chunk's input lines from its first window's first line on; the next chunk's first 3 -
 * s_across lines are this one's last, moved to the band's start (whole words: bw is even) before
 * its new lines come in. */
static void dwr_run(const dwr_job_t *j, dwr_call_t *call) {
  const int32_t s = j->s_across, pad = j->pad_across, keep = 3 - s;
  const int32_t moved = keep * j->bw / 2; /* words */
  const int full = j->p->rq.act_min == -128 && j->p->rq.act_max == 127;
  uint32_t *band = (uint32_t *)j->band;
  const uint32_t *kept = band + (j->ring - keep) * j->bw / 2;
  dw3_call_t *q = &call->q;
  for (int32_t c = 0; c < j->ch; ++c) {
    dwr_lane(j, c, q);
    for (int32_t oy0 = 0; oy0 < j->dst.lines; oy0 += j->chunk) {
      const int32_t oy1 = mcu_min_i32(oy0 + j->chunk, j->dst.lines);
      const int32_t y = oy0 * s - pad, count = (oy1 - oy0 - 1) * s + 3; /* window lines */
      int32_t from = y, slot = 0;
      if (oy0 > 0) {
        int32_t k = 0;
        for (; k + 2 <= moved; k += 2) {
          band[k] = kept[k], band[k + 1] = kept[k + 1];
        }
        if (k < moved) {
          band[k] = kept[k];
        }
        from += keep, slot = keep;
      }
      if (from >= 0 && y + count <= j->src.lines) { /* every line in the image */
        dwr_fill_lines(j->in + from * j->src.line + c, j->band + slot * j->bw + j->pad_along,
                       count - slot, j->fill);
      } else {
        dwr_fill(j, from, count - slot, slot, c);
      }
      q->plane = (uintptr_t)band;
      q->out = (uintptr_t)(j->out + oy0 * j->dst.line + c);
#if MCU_SIMD_DSP
      if (full) {
        q->lines = oy1 - oy0;
        (j->s_along == 1 ? dwr_lines_s1 : dwr_lines_s2)(call);
        continue;
      }
#endif
      const int32_t rows[3] = {0, call->bytes, 2 * call->bytes}; /* one output line's */
      q->rows = rows;
      q->lines = 1;
      for (int32_t oy = oy0; oy < oy1; ++oy) {
        dw3_lines_c(q, j->dst.len, j->s_along, full);
        q->plane += (uintptr_t)call->slide;
        q->out += (uintptr_t)j->dst.line;
      }
    }
  }
}

/* The shapes the build sends here (planar_fits in opt_depthwise.py). */
static int dwr_fits(const mcu_depthwise_conv_2d_params_t *p) {
  const mcu_window_params_t *w = &p->win;
  if (w->stride_h < 1 || w->stride_h > 2 || w->stride_w < 1 || w->stride_w > 2) {
    return 0;
  }
  if (w->dilation_h != 1 || w->dilation_w != 1 || w->pad_h < 0 || w->pad_w < 0) {
    return 0;
  }
  for (int32_t i = 0; i < p->rq.num_channels; ++i) {
    if (p->rq.shifts[i] > -1) {
      return 0;
    }
  }
  return p->depth_multiplier == 1;
}

/* In place: every output line lies below the first input line the band has not copied, while
 * lines remain (the top of the file). */
static int dwr_in_place_ok(const dwr_job_t *j, int32_t in_w, int32_t out_w) {
  for (int32_t o = 0; o < j->dst.lines; ++o) {
    int32_t copied = o * j->s_across - j->pad_across + 3; /* lines below are in the band */
    if (copied >= j->src.lines) {
      continue;
    }
    if (j->cols ? o >= copied : (o + 1) * out_w > copied * in_w) {
      return 0;
    }
  }
  return 1;
}

mcu_status_t mcu_depthwise_conv_2d_s8_ring(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_depthwise_conv_2d_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && filter != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  const int32_t batches = in->dims[0], in_h = in->dims[1], in_w = in->dims[2], ch = in->dims[3];
  const int32_t out_h = out->dims[1], out_w = out->dims[2];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == ch && filter->dims[3] == ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(filter->dims[1] == 3 && filter->dims[2] == 3 && dwr_fits(p), MCU_ERR_BAD_MODEL);
  MCU_REQUANT_CHECK(p->rq, ch);
  void *scratch = mcu_scratch(ctx, node);
  MCU_ENSURE(scratch != NULL, MCU_ERR_BAD_MODEL);
  dwr_job_t j;
  j.in = mcu_input(ctx, node, 0);
  j.out = mcu_output(ctx, node, 0);
  j.filter = mcu_input(ctx, node, 1);
  j.bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
  j.p = p;
  j.ch = ch;
  dwr_layout(&j, in_h, in_w, out_h, out_w, scratch);
  if ((const void *)j.out == (const void *)j.in) {
    MCU_ENSURE(batches == 1 && dwr_in_place_ok(&j, in_w, out_w), MCU_ERR_BAD_MODEL);
  }
  dwr_call_t q;
  dwr_call(&j, &q);
  for (int32_t b = 0; b < batches; ++b) {
    dwr_run(&j, &q);
    j.in += in_h * in_w * ch;
    j.out += out_h * out_w * ch;
  }
  return MCU_OK;
}
