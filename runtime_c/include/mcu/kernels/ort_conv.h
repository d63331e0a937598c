#ifndef MCU_KERNELS_ORT_CONV_H
#define MCU_KERNELS_ORT_CONV_H

#include "mcu/mat_mult_s8.h"
#include "mcu/ort_requant.h"
#include "mcu/runtime.h"
#include "mcu/window.h"

/* CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with onnxruntime's output stage
 * (mcu/ort_requant.h; `--onnx-numerics ort`): the same integer sums as the reference kernels,
 * then a float32 scale rounded half to even. Tensors as the reference kernels' (int8, NHWC,
 * filters OHWI / 1HW(C*M) / [O, K], int32 bias). They never run in place (their lowering says
 * so). */
typedef struct {
  mcu_window_params_t win;
  int32_t depth_multiplier; /* DEPTHWISE_CONV_2D only */
  mcu_ort_requant_t rq;
} mcu_ort_conv_params_t;

typedef struct {
  mcu_ort_requant_t rq;
} mcu_ort_fully_connected_params_t;

mcu_status_t mcu_conv_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);
mcu_status_t mcu_depthwise_conv_2d_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);
mcu_status_t mcu_fully_connected_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

/* Optimised variants with the same output stage (mcugen/codegen/lower/ort_opt.py), in place
 * where their TFLite twins run in place. The int8 matrix product (kernels/opt/mat_mult_s8_ort.c)
 * for FULLY_CONNECTED (one row: _row_ort) and 1x1 CONV_2D of stride 1: the product's parameters
 * (`shifts`, `short_shifts` and `stream` NULL, the input offset folded into `bias`) and the
 * scales (x_scale * w_scale / y_scale, one or one per output channel). */
typedef struct {
  mcu_mat_mult_s8_params_t product;
  const float *scales;
} mcu_mat_mult_s8_ort_params_t;

mcu_eval_t mcu_fully_connected_s8_ort;
mcu_eval_t mcu_fully_connected_s8_row_ort;
mcu_eval_t mcu_conv_2d_1x1_s8_ort;
/* The general CONV_2D's: mcu/kernels/conv_2d.h (mcu_conv_2d_s8_ort). DEPTHWISE_CONV_2D of depth
 * multiplier 1 and dilation 1, at most 16 filter rows (kernels/opt/depthwise_conv_2d_s8_ort.c,
 * the band path of depthwise_conv_2d_s8.c; parameters mcu_ort_conv_params_t): */
mcu_eval_t mcu_depthwise_conv_2d_s8_ort;

/* A first layer's CONV_2D: mcu/kernels/conv_2d.h (mcu_conv_2d_stem_s8_ort). */

#endif
