/* PRELU, bit-exact with TFLM reference_ops::BroadcastPrelu4DSlow (int8) and
 * BroadcastPrelu4DSlowFloat (float32). Broadcasting follows numpy. */
#include "mcu/kernels/prelu.h"

#include "mcu/quant.h"

typedef struct {
  const mcu_tensor_t *x;
  const mcu_tensor_t *alpha;
  const mcu_tensor_t *y;
} prelu_shapes_t;

static mcu_status_t prelu_shapes(const mcu_node_t *node, const mcu_context_t *ctx,
                                 prelu_shapes_t *s) {
  MCU_ENSURE(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  s->x = mcu_input_tensor(ctx, node, 0);
  s->alpha = mcu_input_tensor(ctx, node, 1);
  s->y = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE(s->x != NULL && s->alpha != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE(mcu_broadcasts_to(s->x->dims, s->x->ndims, s->y->dims, s->y->ndims) &&
                 mcu_broadcasts_to(s->alpha->dims, s->alpha->ndims, s->y->dims, s->y->ndims),
             MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

static int32_t prelu_offset(const mcu_tensor_t *in, const mcu_tensor_t *y, int32_t flat) {
  return mcu_broadcast_offset(in->dims, in->ndims, y->dims, y->ndims, flat);
}

static int8_t prelu_one_int8(int8_t x, int8_t alpha, const mcu_prelu_params_t *p) {
  int32_t input = p->input_offset + x;
  int32_t out;
  if (input >= 0) {
    out = mcu_mbqm(input, p->identity_multiplier, p->identity_shift);
  } else {
    out = mcu_mbqm(input * (p->alpha_offset + alpha), p->alpha_multiplier, p->alpha_shift);
  }
  return (int8_t)mcu_clamp_i32(out + p->output_offset, INT8_MIN, INT8_MAX);
}

mcu_status_t mcu_prelu_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_prelu_params_t *p = node->params;
  prelu_shapes_t s;
  MCU_TRY(prelu_shapes(node, ctx, &s));
  const int8_t *x = mcu_input(ctx, node, 0);
  const int8_t *alpha = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = prelu_one_int8(x[prelu_offset(s.x, s.y, i)], alpha[prelu_offset(s.alpha, s.y, i)], p);
  }
  return MCU_OK;
}

mcu_status_t mcu_prelu_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  prelu_shapes_t s;
  MCU_TRY(prelu_shapes(node, ctx, &s));
  const float *x = mcu_input(ctx, node, 0);
  const float *alpha = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    float v = x[prelu_offset(s.x, s.y, i)];
    y[i] = v >= 0.0f ? v : v * alpha[prelu_offset(s.alpha, s.y, i)];
  }
  return MCU_OK;
}
