/* MAXIMUM / MINIMUM, identical to TFLM reference_ops::MaximumMinimumBroadcastSlow with its
 * MaximumOp (a > b ? a : b) and MinimumOp (a < b ? a : b). Broadcasting follows numpy. */
#include "mcu/kernels/maximum_minimum.h"

#include "mcu/binary.h"

/* One eval function per element type and operation: `name` keeps x1 when `x1 CMP x2`. */
#define MCU_MAXIMUM_MINIMUM(name, type, CMP)                                 \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {            \
    mcu_binary_shapes_t s;                                                   \
    MCU_TRY(mcu_binary_shapes(node, ctx, &s));                               \
    int32_t n = mcu_num_elements(s.y);                                       \
    const type *a = mcu_input(ctx, node, 0);                                 \
    const type *b = mcu_input(ctx, node, 1);                                 \
    type *y = mcu_output(ctx, node, 0);                                      \
    for (int32_t i = 0; i < n; ++i) {                                        \
      type x1 = a[mcu_binary_offset(s.a, s.y, i)];                           \
      type x2 = b[mcu_binary_offset(s.b, s.y, i)];                           \
      y[i] = x1 CMP x2 ? x1 : x2;                                            \
    }                                                                        \
    return MCU_OK;                                                           \
  }

MCU_MAXIMUM_MINIMUM(mcu_maximum_int8, int8_t, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_int8, int8_t, <)
MCU_MAXIMUM_MINIMUM(mcu_maximum_f32, float, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_f32, float, <)
MCU_MAXIMUM_MINIMUM(mcu_maximum_int32, int32_t, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_int32, int32_t, <)
