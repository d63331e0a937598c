/* FLOOR_MOD, as TFLM reference_ops::FloorMod<float> through BinaryFunction /
 * BroadcastBinaryFunction4DSlow: fmodf, then the divisor added when the truncated remainder is
 * non-zero and its sign differs from the divisor's. */
#include "mcu/kernels/floor_mod.h"

#include <math.h>

#include "mcu/binary.h"

static float floor_mod_one(float x, float d) {
  float trunc_mod = fmodf(x, d);
  return (trunc_mod != 0.0f && ((d < 0.0f) != (trunc_mod < 0.0f))) ? trunc_mod + d : trunc_mod;
}

mcu_status_t mcu_floor_mod_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  const float *a = mcu_input(ctx, node, 0);
  const float *b = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = floor_mod_one(a[mcu_binary_offset(s.a, s.y, i)], b[mcu_binary_offset(s.b, s.y, i)]);
  }
  return MCU_OK;
}
