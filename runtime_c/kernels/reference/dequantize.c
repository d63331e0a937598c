/* DEQUANTIZE, bit-exact with TFLM reference_ops::Dequantize: float(double(scale) * (q - zp)).
 * The double product of a float and an integer below 2^24 in magnitude is exact, so one float
 * multiplication (correctly rounded) gives the same float without double arithmetic. */
#include "mcu/kernels/dequantize.h"

static void dequantize_int8(const int8_t *in, float *out, int32_t size,
                            const mcu_dequantize_params_t *p) {
  for (int32_t i = 0; i < size; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

static void dequantize_uint8(const uint8_t *in, float *out, int32_t size,
                             const mcu_dequantize_params_t *p) {
  for (int32_t i = 0; i < size; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

static void dequantize_int16(const int16_t *in, float *out, int32_t size,
                             const mcu_dequantize_params_t *p) {
  for (int32_t i = 0; i < size; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

mcu_status_t mcu_dequantize(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_dequantize_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && output->type == MCU_FLOAT32, MCU_ERR_BAD_MODEL);
  int32_t size = mcu_num_elements(input);
  MCU_ENSURE_MODEL(size == mcu_num_elements(output), MCU_ERR_BAD_MODEL);
  const void *in = mcu_input(ctx, node, 0);
  float *out = mcu_output(ctx, node, 0);
  switch (input->type) {
    case MCU_INT8:
      dequantize_int8(in, out, size, p);
      return MCU_OK;
    case MCU_UINT8:
      dequantize_uint8(in, out, size, p);
      return MCU_OK;
    case MCU_INT16:
      dequantize_int16(in, out, size, p);
      return MCU_OK;
    default:
      return MCU_ERR_UNSUPPORTED;
  }
}
