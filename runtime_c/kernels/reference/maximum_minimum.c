/* MAXIMUM / MINIMUM, identical to TFLM reference_ops::MaximumMinimumBroadcastSlow with its
 * MaximumOp (a > b ? a : b) and MinimumOp (a < b ? a : b). Broadcasting follows numpy. */
#include "mcu/kernels/maximum_minimum.h"

#include "mcu/binary.h"

mcu_status_t mcu_maximum_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int8_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
    int8_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 > x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_minimum_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int8_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
    int8_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 < x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_maximum_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const float *a = mcu_input(ctx, node, 0);
  const float *b = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    float x1 = a[mcu_binary_offset(s.a, s.y, i)];
    float x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 > x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_minimum_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const float *a = mcu_input(ctx, node, 0);
  const float *b = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    float x1 = a[mcu_binary_offset(s.a, s.y, i)];
    float x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 < x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_maximum_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const int32_t *a = mcu_input(ctx, node, 0);
  const int32_t *b = mcu_input(ctx, node, 1);
  int32_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
    int32_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 > x2 ? x1 : x2;
  }
  return MCU_OK;
}

mcu_status_t mcu_minimum_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  int32_t n = mcu_num_elements(s.y);
  const int32_t *a = mcu_input(ctx, node, 0);
  const int32_t *b = mcu_input(ctx, node, 1);
  int32_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
    int32_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
    y[i] = x1 < x2 ? x1 : x2;
  }
  return MCU_OK;
}
