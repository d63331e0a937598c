/* CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with onnxruntime's output stage
 * (mcu/kernels/ort_conv.h): exact int32 sums over the window in TFLM's tap order (any order
 * gives the same integer), the bias added, then mcu_ort_requant. */
#include "mcu/kernels/ort_conv.h"

static mcu_status_t ort_bias(const mcu_node_t *node, const mcu_context_t *ctx, int32_t n,
                             const int32_t **bias) {
  *bias = NULL;
  if (node->num_inputs > 2 && node->inputs[2] >= 0) {
    MCU_ENSURE_MODEL(mcu_num_elements(mcu_input_tensor(ctx, node, 2)) == n, MCU_ERR_BAD_MODEL);
    *bias = mcu_input(ctx, node, 2);
  }
  return MCU_OK;
}

static mcu_status_t ort_channels(const mcu_ort_requant_t *rq, int32_t out_c) {
  MCU_ENSURE_MODEL(rq->num_channels == 1 || rq->num_channels == out_c, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

mcu_status_t mcu_conv_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_conv_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, &d));
  MCU_ENSURE_MODEL(mcu_input_tensor(ctx, node, 1)->dims[0] == d.out_c, MCU_ERR_BAD_MODEL);
  MCU_TRY(mcu_window_groups(&d));
  MCU_TRY(ort_channels(&p->rq, d.out_c));
  const int32_t *bias;
  MCU_TRY(ort_bias(node, ctx, d.out_c, &bias));
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  int8_t *out = mcu_output(ctx, node, 0);
  const int32_t filter_size = d.k_h * d.k_w * d.k_c;
  MCU_WINDOW_EACH_OUTPUT(&d, int8_t, input, {
    const int32_t y0 = oy * p->win.stride_h - p->win.pad_h;
    const int32_t x0 = ox * p->win.stride_w - p->win.pad_w;
    const int32_t c0 = (oc / d.per_group) * d.k_c;
    const int8_t *f = filter + oc * filter_size;
    int32_t acc = bias != NULL ? bias[oc] : 0;
    MCU_WINDOW_EACH_TAP(&d, y0, x0, p->win.dilation_h, p->win.dilation_w, {
      const int8_t *pix = in + (y * d.in_w + x) * d.in_c + c0;
      const int8_t *tap = f + (ky * d.k_w + kx) * d.k_c;
      for (int32_t ic = 0; ic < d.k_c; ++ic) {
        acc += (int32_t)tap[ic] * ((int32_t)pix[ic] + p->rq.input_offset);
      }
    });
    *out++ = (int8_t)mcu_ort_requant(&p->rq, acc, oc);
  });
  return MCU_OK;
}

mcu_status_t mcu_depthwise_conv_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_conv_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, &d));
  MCU_ENSURE_MODEL(d.k_c == d.out_c && p->depth_multiplier > 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(d.out_c == d.in_c * p->depth_multiplier, MCU_ERR_BAD_MODEL);
  MCU_TRY(ort_channels(&p->rq, d.out_c));
  const int32_t *bias;
  MCU_TRY(ort_bias(node, ctx, d.out_c, &bias));
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  int8_t *out = mcu_output(ctx, node, 0);
  MCU_WINDOW_EACH_OUTPUT(&d, int8_t, input, {
    const int32_t y0 = oy * p->win.stride_h - p->win.pad_h;
    const int32_t x0 = ox * p->win.stride_w - p->win.pad_w;
    const int32_t ic = oc / p->depth_multiplier;
    int32_t acc = bias != NULL ? bias[oc] : 0;
    MCU_WINDOW_EACH_TAP(&d, y0, x0, p->win.dilation_h, p->win.dilation_w, {
      int32_t value = (int32_t)in[(y * d.in_w + x) * d.in_c + ic] + p->rq.input_offset;
      acc += (int32_t)filter[(ky * d.k_w + kx) * d.out_c + oc] * value;
    });
    *out++ = (int8_t)mcu_ort_requant(&p->rq, acc, oc);
  });
  return MCU_OK;
}

mcu_status_t mcu_fully_connected_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_fully_connected_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *filter_t = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *output_t = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(filter_t != NULL && filter_t->ndims == 2, MCU_ERR_BAD_MODEL);
  const int32_t depth = mcu_dim(filter_t, -1);
  const int32_t out_c = mcu_dim(filter_t, -2);
  MCU_ENSURE_MODEL(out_c > 0 && mcu_dim(output_t, -1) == out_c, MCU_ERR_BAD_MODEL);
  MCU_TRY(ort_channels(&p->rq, out_c));
  const int32_t *bias;
  MCU_TRY(ort_bias(node, ctx, out_c, &bias));
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  int8_t *out = mcu_output(ctx, node, 0);
  const int32_t rows = mcu_num_elements(output_t) / out_c;
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t *row = input + r * depth;
    for (int32_t c = 0; c < out_c; ++c) {
      const int8_t *w = filter + c * depth;
      int32_t acc = bias != NULL ? bias[c] : 0;
      for (int32_t k = 0; k < depth; ++k) {
        acc += (int32_t)w[k] * ((int32_t)row[k] + p->rq.input_offset);
      }
      *out++ = (int8_t)mcu_ort_requant(&p->rq, acc, c);
    }
  }
  return MCU_OK;
}
