/* CAST, bit-exact with TFLM's cast.cc copyCast (static_cast<To>(From)) between int8, int16, int32
 * and uint32: every such value is exact in int64, and converting that int64 to the output type
 * keeps it modulo 2^bits, as static_cast does on TFLM's two's-complement targets. */
#include "mcu/kernels/cast.h"

static int64_t load(const void *data, uint8_t type, int32_t i) {
  switch (type) {
    case MCU_INT8: return ((const int8_t *)data)[i];
    case MCU_INT16: return ((const int16_t *)data)[i];
    case MCU_INT32: return ((const int32_t *)data)[i];
    default: return ((const uint32_t *)data)[i];
  }
}

static void store(void *data, uint8_t type, int32_t i, int64_t v) {
  switch (type) {
    case MCU_INT8: ((int8_t *)data)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case MCU_INT16: ((int16_t *)data)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case MCU_INT32: ((int32_t *)data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    default: ((uint32_t *)data)[i] = (uint32_t)(uint64_t)v; break;
  }
}

static int is_cast_type(uint8_t type) {
  return type == MCU_INT8 || type == MCU_INT16 || type == MCU_INT32 || type == MCU_UINT32;
}

mcu_status_t mcu_cast_int(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *xt = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *yt = mcu_output_tensor(ctx, node, 0);
  int32_t n = mcu_num_elements(yt);
  MCU_ENSURE_MODEL(mcu_num_elements(xt) == n, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(is_cast_type(xt->type) && is_cast_type(yt->type), MCU_ERR_UNSUPPORTED);
  const void *x = mcu_input(ctx, node, 0);
  void *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    store(y, yt->type, i, load(x, xt->type, i));
  }
  return MCU_OK;
}
