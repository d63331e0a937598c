#ifndef MCU_KERNELS_TRANSPOSE_CONV_H
#define MCU_KERNELS_TRANSPOSE_CONV_H

#include "mcu/requant_params.h"
#include "mcu/runtime.h"

/* TRANSPOSE_CONV parameters. Inputs: 0 output_shape (not read: the output tensor's shape is used,
 * as in TFLM), 1 filter [O,KH,KW,C], 2 input [N,H,W,C], 3 optional bias [O]; output [N,OH,OW,O].
 * The int8 kernel accumulates in an int32 scratch buffer of the output's element count, the
 * int16 x int8 ones (zero points 0, offsets unused) in an int64 one; their bias is int64
 * (mcu_transpose_conv_int16) or int16 (mcu_transpose_conv_int16_bias16, widened as TFLM does). */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t pad_w; /* ComputePaddingHeightWidth over the output size */
  int32_t pad_h;
  mcu_requant_params_t rq;
} mcu_transpose_conv_params_t;

mcu_eval_t mcu_transpose_conv_int8;
mcu_eval_t mcu_transpose_conv_int16;
mcu_eval_t mcu_transpose_conv_int16_bias16;
mcu_eval_t mcu_transpose_conv_f32;

#endif
