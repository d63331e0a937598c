/* MAXIMUM / MINIMUM, identical to TFLM reference_ops::MaximumMinimumBroadcastSlow with its
 * MaximumOp (a > b ? a : b) and MinimumOp (a < b ? a : b). Broadcasting follows numpy. */
#include "mcu/kernels/maximum_minimum.h"

#include "mcu/quant.h"

typedef struct {
  const mcu_tensor_t *a;
  const mcu_tensor_t *b;
  const mcu_tensor_t *y;
  int32_t n;
} minmax_shapes_t;

static mcu_status_t minmax_shapes(const mcu_node_t *node, const mcu_context_t *ctx,
                                  minmax_shapes_t *s) {
  MCU_ENSURE(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  s->a = mcu_input_tensor(ctx, node, 0);
  s->b = mcu_input_tensor(ctx, node, 1);
  s->y = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE(s->a != NULL && s->b != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE(mcu_broadcasts_to(s->a->dims, s->a->ndims, s->y->dims, s->y->ndims) &&
                 mcu_broadcasts_to(s->b->dims, s->b->ndims, s->y->dims, s->y->ndims),
             MCU_ERR_BAD_MODEL);
  s->n = mcu_num_elements(s->y);
  return MCU_OK;
}

static int32_t minmax_offset(const mcu_tensor_t *in, const mcu_tensor_t *y, int32_t flat) {
  return mcu_broadcast_offset(in->dims, in->ndims, y->dims, y->ndims, flat);
}

mcu_status_t mcu_maximum_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  minmax_shapes_t s;
  MCU_TRY(minmax_shapes(node, ctx, &s));
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < s.n; ++i) {
    int8_t x1 = a[minmax_offset(s.a, s.y, i)];
    int8_t x2 = b[minmax_offset(s.b, s.y, i)];
    y[i] = x1 > x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_minimum_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  minmax_shapes_t s;
  MCU_TRY(minmax_shapes(node, ctx, &s));
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < s.n; ++i) {
    int8_t x1 = a[minmax_offset(s.a, s.y, i)];
    int8_t x2 = b[minmax_offset(s.b, s.y, i)];
    y[i] = x1 < x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_maximum_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  minmax_shapes_t s;
  MCU_TRY(minmax_shapes(node, ctx, &s));
  const float *a = mcu_input(ctx, node, 0);
  const float *b = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < s.n; ++i) {
    float x1 = a[minmax_offset(s.a, s.y, i)];
    float x2 = b[minmax_offset(s.b, s.y, i)];
    y[i] = x1 > x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_minimum_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  minmax_shapes_t s;
  MCU_TRY(minmax_shapes(node, ctx, &s));
  const float *a = mcu_input(ctx, node, 0);
  const float *b = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < s.n; ++i) {
    float x1 = a[minmax_offset(s.a, s.y, i)];
    float x2 = b[minmax_offset(s.b, s.y, i)];
    y[i] = x1 < x2 ? x1 : x2;
  }
  return MCU_OK;
}
