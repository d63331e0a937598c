/* QUANTIZE, bit-exact with TFLM reference_ops::AffineQuantize (float input) and
 * reference_ops::Requantize (integer input). */
#include "mcu/kernels/quantize.h"

#include <math.h>

#include "mcu/quant.h"

/* Inclusive value range of an integer tensor type; false for other types. */
static int type_range(uint8_t type, int32_t *lo, int32_t *hi) {
  switch (type) {
    case MCU_INT8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return 1;
    case MCU_UINT8:
      *lo = 0;
      *hi = UINT8_MAX;
      return 1;
    case MCU_INT16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return 1;
    case MCU_INT32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return 1;
    default:
      return 0;
  }
}

static int32_t load_int(const void *data, uint8_t type, int32_t i) {
  switch (type) {
    case MCU_INT8:
      return ((const int8_t *)data)[i];
    case MCU_UINT8:
      return ((const uint8_t *)data)[i];
    case MCU_INT16:
      return ((const int16_t *)data)[i];
    default:
      return ((const int32_t *)data)[i];
  }
}

/* Stores `v`, already clamped to the type's range. */
static void store_int(void *data, uint8_t type, int32_t i, int32_t v) {
  switch (type) {
    case MCU_INT8:
      ((int8_t *)data)[i] = (int8_t)v;
      break;
    case MCU_UINT8:
      ((uint8_t *)data)[i] = (uint8_t)v;
      break;
    case MCU_INT16:
      ((int16_t *)data)[i] = (int16_t)v;
      break;
    default:
      ((int32_t *)data)[i] = v;
      break;
  }
}

static mcu_status_t same_size(const mcu_node_t *node, const mcu_context_t *ctx, int32_t *size) {
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL, MCU_ERR_BAD_MODEL);
  *size = mcu_num_elements(input);
  MCU_ENSURE_MODEL(*size == mcu_num_elements(output), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* TfLiteRound(x / scale) in float, then + zero point and clamp. Values beyond the int32 range
 * and NaN (undefined in the C++ reference) saturate, and NaN maps to the zero point, as the
 * reference does on Arm cores (VCVT saturates and maps NaN to 0). */
static int32_t quantize_one(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi) {
  float r = roundf(x / scale);
  float r_lo = (float)(lo - zero_point);
  float r_hi = (float)(hi - zero_point);
  if (r != r) {
    r = 0.0f;
  } else if (r < r_lo) {
    r = r_lo;
  } else if (r > r_hi) {
    r = r_hi;
  }
  return mcu_clamp_i32((int32_t)r + zero_point, lo, hi);
}

mcu_status_t mcu_quantize_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_quantize_params_t *p = node->params;
  int32_t size = 0;
  MCU_TRY(same_size(node, ctx, &size));
  uint8_t out_type = mcu_output_tensor(ctx, node, 0)->type;
  int32_t lo = 0;
  int32_t hi = 0;
  int out_is_integer = type_range(out_type, &lo, &hi);
  MCU_ENSURE_MODEL(mcu_input_tensor(ctx, node, 0)->type == MCU_FLOAT32, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL((out_type == MCU_INT8 || out_type == MCU_INT16) && out_is_integer,
                   MCU_ERR_UNSUPPORTED);
  const float *input = mcu_input(ctx, node, 0);
  void *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < size; ++i) {
    store_int(output, out_type, i, quantize_one(input[i], p->scale, p->output_zero_point, lo, hi));
  }
  return MCU_OK;
}

mcu_status_t mcu_quantize_requantize(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_quantize_params_t *p = node->params;
  int32_t size = 0;
  MCU_TRY(same_size(node, ctx, &size));
  uint8_t in_type = mcu_input_tensor(ctx, node, 0)->type;
  uint8_t out_type = mcu_output_tensor(ctx, node, 0)->type;
  int32_t lo = 0;
  int32_t hi = 0;
  int in_is_integer = type_range(in_type, &lo, &hi);
  int out_is_integer = type_range(out_type, &lo, &hi); /* lo, hi: the output's range */
  MCU_ENSURE_MODEL(in_is_integer && out_is_integer, MCU_ERR_UNSUPPORTED);
  const void *input = mcu_input(ctx, node, 0);
  void *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < size; ++i) {
    /* int32 wrap-around as the C++ reference computes it */
    int32_t centered = (int32_t)((uint32_t)load_int(input, in_type, i) -
                                 (uint32_t)p->input_zero_point);
    int64_t v = (int64_t)mcu_mbqm(centered, p->multiplier, p->shift) + p->output_zero_point;
    v = v < lo ? lo : (v > hi ? hi : v);
    store_int(output, out_type, i, (int32_t)v);
  }
  return MCU_OK;
}
