/* DEPTHWISE_CONV_2D int8 with onnxruntime's output stage (`--onnx-numerics ort`): the band path
 * of depthwise_conv_2d_s8.c (mcu/opt/dw_s8_band.h: depth multiplier 1, dilation 1, at most 16
 * filter rows, any stride and padding, four channels at a time) with each sum handed to
 * mcu_ort_out (mcu/ort_requant.h) instead of TFLM's requantisation. The sums are
 * reference/ort_conv.c's exactly (the input offset added to every tap, the padding the input
 * zero point, which adds nothing), so the outputs are byte for byte the ort reference kernel's.
 * In place when the band stays ahead of the outputs (mcugen/codegen/lower/ort_opt.py lets the
 * plan do it only then; checked again here). */
#include "mcu/kernels/ort_conv.h"
#include "mcu/opt/dw_s8_band.h"

/* Output row oy ends at flat pixel (oy + 1) * out_w, before the first input row the band has
 * not copied yet (oy * stride_h - pad_h + k_h) while rows remain to copy. */
static int band_ahead(const dw_job_t *j) {
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    int32_t next = oy * j->p->win.stride_h - j->p->win.pad_h + j->k_h;
    if (next < j->in_h && (oy + 1) * j->out_w > next * j->in_w) {
      return 0;
    }
  }
  return 1;
}

mcu_status_t mcu_depthwise_conv_2d_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_conv_params_t *o = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && filter != NULL && o->rq.scales != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  const int32_t batches = in->dims[0], ch = in->dims[3];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == ch && filter->dims[3] == ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(o->depth_multiplier == 1 && o->win.dilation_h == 1 && o->win.dilation_w == 1,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(o->rq.num_channels == 1 || o->rq.num_channels == ch, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(filter->dims[1] <= MCU_DW_MAX_ROWS && o->win.pad_w >= 0 && o->win.pad_h >= 0,
                   MCU_ERR_BAD_MODEL);
  /* what the band reads of TFLM's parameters: the window and the input offset (and one
   * placeholder multiplier and shift, never used) */
  static const int32_t placeholder[1] = {0};
  mcu_depthwise_conv_2d_params_t p = {o->win, 1, {0}};
  p.rq.input_offset = o->rq.input_offset;
  p.rq.num_channels = 1;
  p.rq.multipliers = placeholder;
  p.rq.shifts = placeholder;
  dw_ort_job_t job = {
      .job = {.in = mcu_input(ctx, node, 0),
              .out = mcu_output(ctx, node, 0),
              .filter = mcu_input(ctx, node, 1),
              .bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL,
              .p = &p,
              .in_h = in->dims[1],
              .in_w = in->dims[2],
              .ch = ch,
              .k_h = filter->dims[1],
              .k_w = filter->dims[2],
              .out_h = out->dims[1],
              .out_w = out->dims[2],
              .pad_w = o->win.pad_w,
              .wide = mcu_scratch(ctx, node)},
      .out = mcu_ort_out_of(&o->rq),
  };
  dw_job_t *j = &job.job;
  MCU_ENSURE(j->wide != NULL, MCU_ERR_BAD_MODEL);
  /* the band row: padding, the image, and what the last window reads past it */
  j->band_w = mcu_max_i32(j->pad_w + j->in_w, (j->out_w - 1) * o->win.stride_w + j->k_w);
  j->band = j->wide + 2 * j->k_h * j->k_w;
  if ((const void *)j->out == (const void *)j->in) {
    MCU_ENSURE(batches == 1 && band_ahead(j), MCU_ERR_BAD_MODEL);
  }
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t c = 0; c < ch; c += 4) {
      group_ort(&job, c, ch - c < 4 ? ch - c : 4);
    }
    j->in += j->in_h * j->in_w * ch;
    j->out += j->out_h * j->out_w * ch;
  }
  return MCU_OK;
}
