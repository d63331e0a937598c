/* MAXIMUM / MINIMUM, identical to TFLM reference_ops::MaximumMinimumBroadcastSlow with its
 * MaximumOp (a > b ? a : b) and MinimumOp (a < b ? a : b). Broadcasting follows numpy. */
#include "mcu/kernels/maximum_minimum.h"

#include "mcu/binary.h"

/* One eval function per element type and operation: `name` keeps x1 when `x1 CMP x2`. */
#define MCU_MAXIMUM_MINIMUM(name, type, CMP)                         \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {    \
    MCU_BINARY_EACH(node, ctx, type, *y = x1 CMP x2 ? x1 : x2);      \
    return MCU_OK;                                                   \
  }

MCU_MAXIMUM_MINIMUM(mcu_maximum_int8, int8_t, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_int8, int8_t, <)
MCU_MAXIMUM_MINIMUM(mcu_maximum_f32, float, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_f32, float, <)
MCU_MAXIMUM_MINIMUM(mcu_maximum_int32, int32_t, >)
MCU_MAXIMUM_MINIMUM(mcu_minimum_int32, int32_t, <)
