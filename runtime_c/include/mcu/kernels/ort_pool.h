#ifndef MCU_KERNELS_ORT_POOL_H
#define MCU_KERNELS_ORT_POOL_H

#include "mcu/ort_requant.h"
#include "mcu/runtime.h"

/* AVERAGE_POOL_2D as onnxruntime's QLinearAveragePool computes it (`--onnx-numerics ort`):
 * each tap dequantized in float32 (x_scale * (x - x_zero)), summed in float32 rows then columns,
 * divided by the number of taps inside the image, then round_half_even(sum / y_scale + y_zero)
 * with y_zero as onnxruntime's uint8 value (the stored one plus `domain`, 128), clamped. The
 * output's quantization may differ from the input's. Input [N,H,W,C], output [N,OH,OW,C]. */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t filter_w;
  int32_t filter_h;
  int32_t pad_w;
  int32_t pad_h;
  int32_t input_zero; /* as stored (int8) */
  float input_scale;
  float output_scale;
  float output_zero; /* as onnxruntime's uint8 value */
  int32_t domain;
  int32_t act_min;
  int32_t act_max;
} mcu_ort_average_pool_params_t;

mcu_status_t mcu_average_pool_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

/* MEAN over H and W of an NHWC map (GlobalAveragePool), as onnxruntime's
 * QLinearGlobalAveragePool: the exact int32 sum of (x - x_zero) over the map, times the float32
 * scale x_scale / (y_scale * H * W) (one entry of rq.scales), mcu_ort_requant. Output
 * [N,1,1,C]. */
typedef struct {
  mcu_ort_requant_t rq;
} mcu_ort_mean_params_t;

mcu_status_t mcu_mean_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

#endif
