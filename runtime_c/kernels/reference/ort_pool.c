/* AVERAGE_POOL_2D and MEAN over H, W with onnxruntime's arithmetic (mcu/kernels/ort_pool.h). */
#include "mcu/kernels/ort_pool.h"

#include <math.h>

#include "mcu/pool.h"
#include "mcu/quant.h"

mcu_status_t mcu_average_pool_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_average_pool_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  mcu_pool_dims_t d;
  MCU_TRY(mcu_pool_dims(mcu_input_tensor(ctx, node, 0), mcu_output_tensor(ctx, node, 0), &d));
  const int8_t *input = mcu_input(ctx, node, 0);
  int8_t *out = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < d.batches; ++b) {
    const int8_t *in = input + b * d.in_h * d.in_w * d.depth;
    for (int32_t oy = 0; oy < d.out_h; ++oy) {
      for (int32_t ox = 0; ox < d.out_w; ++ox) {
        mcu_pool_window_t w = mcu_pool_window(&d, oy * p->stride_h - p->pad_h,
                                              ox * p->stride_w - p->pad_w, p->filter_h,
                                              p->filter_w);
        const int32_t count = (w.y1 - w.y0) * (w.x1 - w.x0);
        MCU_ENSURE(count > 0, MCU_ERR_BAD_MODEL);
        for (int32_t c = 0; c < d.depth; ++c) {
          float sum = 0.0f;
          for (int32_t y = w.y0; y < w.y1; ++y) {
            for (int32_t x = w.x0; x < w.x1; ++x) {
              int32_t q = (int32_t)in[(y * d.in_w + x) * d.depth + c] - p->input_zero;
              float real = p->input_scale * (float)q;
              sum += real;
            }
          }
          float average = sum / (float)count;
          float scaled = average / p->output_scale;
          int32_t rounded = (int32_t)nearbyintf(scaled + p->output_zero) - p->domain;
          *out++ = (int8_t)mcu_clamp_i32(rounded, p->act_min, p->act_max);
        }
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_mean_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_mean_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *x = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *y = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(x != NULL && x->ndims == 4 && y->ndims == 4, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(y->dims[0] == x->dims[0] && y->dims[3] == x->dims[3], MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(y->dims[1] == 1 && y->dims[2] == 1, MCU_ERR_BAD_MODEL);
  const int32_t pixels = x->dims[1] * x->dims[2];
  const int32_t depth = x->dims[3];
  const int8_t *in = mcu_input(ctx, node, 0);
  int8_t *out = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < x->dims[0]; ++b) {
    const int8_t *map = in + b * pixels * depth;
    for (int32_t c = 0; c < depth; ++c) {
      int32_t acc = 0;
      for (int32_t i = 0; i < pixels; ++i) {
        acc += (int32_t)map[i * depth + c] + p->rq.input_offset;
      }
      *out++ = (int8_t)mcu_ort_requant(&p->rq, acc, 0);
    }
  }
  return MCU_OK;
}
