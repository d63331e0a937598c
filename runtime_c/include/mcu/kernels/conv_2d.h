#ifndef MCU_KERNELS_CONV_2D_H
#define MCU_KERNELS_CONV_2D_H

#include "mcu/ort_requant.h"
#include "mcu/requant_params.h"
#include "mcu/runtime.h"
#include "mcu/window.h"

/* CONV_2D parameters. Tensors: input [N,H,W,C], filter [O,KH,KW,C/groups], optional bias [O],
 * output [N,OH,OW,O]. Shapes are read from the tensor table; everything else is computed at build
 * time as TFLM's Prepare does. */
typedef struct {
  mcu_window_params_t win;
  mcu_requant_params_t rq;
} mcu_conv_2d_params_t;

mcu_eval_t mcu_conv_2d_int8;
/* int16 input and output (zero points 0), int8 filter; bias int64 (or none) / int32. */
mcu_eval_t mcu_conv_2d_int16;
mcu_eval_t mcu_conv_2d_int16_acc32;
mcu_eval_t mcu_conv_2d_f32;
/* Optimised variant (kernels/opt/conv_2d_1x1_s8.c): int8, 1x1 filter, stride 1, one group;
 * parameters mcu_mat_mult_s8_params_t (mcu/mat_mult_s8.h). */
mcu_eval_t mcu_conv_2d_1x1_s8_opt;
/* The same with the parameters' `stream` (pairs of channels, depth a multiple of 4). */
mcu_eval_t mcu_conv_2d_1x1_s8_pairs;
/* Its rung for memory (kernels/opt/conv_2d_1x1_s8_direct.c): pixels read as they are, a pixel at
 * a time; the short requantisation (`short_shifts`), no `stream`; no scratch (in place: the
 * reference kernel's staging). */
mcu_eval_t mcu_conv_2d_1x1_s8_direct;
/* Between the two (kernels/opt/conv_2d_1x1_s8_staged.c): the stream path's parameters, two
 * pixels of int8 inputs as scratch (the reference kernel's staging). */
mcu_eval_t mcu_conv_2d_1x1_s8_staged;

/* Parameters of the general int8 variant (kernels/opt/conv_2d_s8.c): the window of
 * mcu_conv_2d_params_t, the value that pads (the input zero point: it adds nothing once the
 * offset is applied), the activation range, and a record of MCU_CONV_REC_WORDS words per output
 * channel (mcugen/codegen/lower/opt_conv_2d.py channel_records): the bias with the input offset
 * folded in (input_offset * sum of the filter row), the multiplier, the left shift plus one,
 * the right shift, the rounding constant 2^(right - 1) (0 when right is 0) plus
 * output_offset * 2^right, and -1 when right > 0 (else 0). */
enum {
  MCU_CONV_REC_BIAS,
  MCU_CONV_REC_MULTIPLIER,
  MCU_CONV_REC_LEFT,
  MCU_CONV_REC_RIGHT,
  MCU_CONV_REC_CONSTANT,
  MCU_CONV_REC_SIGN,
  MCU_CONV_REC_WORDS
};

typedef struct {
  mcu_window_params_t win;
  int32_t pad_value; /* input zero point */
  int32_t act_min;
  int32_t act_max;
  const int32_t *channels; /* MCU_CONV_REC_WORDS per output channel */
} mcu_conv_2d_s8_params_t;

/* The general variant's parameters with onnxruntime's output stage (mcu_conv_2d_s8_ort;
 * `--onnx-numerics ort`, mcugen/codegen/lower/ort_opt.py): `conv`'s records hold only the
 * folded bias (the rest 0). */
typedef struct {
  mcu_conv_2d_s8_params_t conv;
  mcu_ort_requant_t ort;
} mcu_conv_2d_s8_ort_params_t;

/* Optimised variant (kernels/opt/conv_2d_s8.c): int8, one group, any filter, stride, dilation
 * and padding; parameters mcu_conv_2d_s8_params_t, scratch for two windows in 16-bit lanes
 * (and one in bytes when in_c is not a multiple of 4). */
mcu_eval_t mcu_conv_2d_s8_opt;
/* Its rung for memory (kernels/opt/conv_2d_s8_col.c): the same parameters and filter layout, one
 * window of bytes as scratch (the depth rounded up to a multiple of 4), widened in registers. */
mcu_eval_t mcu_conv_2d_s8_col;
/* Between them (kernels/opt/conv_2d_s8_col2.c): two windows of bytes as scratch, half
 * mcu_conv_2d_s8_opt's, widened in registers. */
mcu_eval_t mcu_conv_2d_s8_col2;
/* conv_2d_s8.c with onnxruntime's output stage: parameters mcu_conv_2d_s8_ort_params_t. */
mcu_eval_t mcu_conv_2d_s8_ort;

/* Parameters of the first-layer variant (kernels/opt/conv_2d_stem_s8.c): a filter of three
 * rows over one or three input channels, dilation 1. `weights` holds, per group of four output
 * channels (the last group padded with zero channels): their four biases, then the window's
 * `window` words of 16-bit weight pairs in the kernel's lane order, per chunk of four words
 * (the last of the rest) each channel's words, then per channel its multiplier, right shift
 * (never 0) and constant (the records of mcu_conv_2d_s8_params_t, whose left shift the build
 * folded into the weights and the bias: mcugen/codegen/lower/_conv_stem.py). The scratch holds
 * a band of `strip` output pixels' columns. */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t pad_w;
  int32_t pad_h;
  int32_t pad_word; /* the input zero point in each of four bytes */
  int32_t act_min;
  int32_t act_max;
  int32_t strip;  /* output pixels per band */
  int32_t window; /* words of a window: k_w columns */
  const int32_t *weights;
} mcu_conv_2d_stem_s8_params_t;

mcu_eval_t mcu_conv_2d_stem_s8_opt;

/* The same shapes with onnxruntime's output stage (`--onnx-numerics ort`): the band and sums,
 * the weights unshifted and the input offset folded into the biases (`stem.act_min` and
 * `stem.act_max` unused), then mcu_ort_out with `rq` (its input offset unused). */
typedef struct {
  mcu_conv_2d_stem_s8_params_t stem;
  mcu_ort_requant_t rq;
} mcu_conv_2d_stem_s8_ort_params_t;

mcu_eval_t mcu_conv_2d_stem_s8_ort;

#endif
