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
  MCU_BINARY_EACH(node, ctx, float, *y = floor_mod_one(x1, x2));
  return MCU_OK;
}
