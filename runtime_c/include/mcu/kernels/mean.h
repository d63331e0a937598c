#ifndef MCU_KERNELS_MEAN_H
#define MCU_KERNELS_MEAN_H

#include "mcu/runtime.h"

/* MEAN parameters. Tensors: input, axis (constant, folded into `reduce_mask`), output. The output
 * holds the kept dimensions in input order (keep_dims only changes its shape, not its layout).
 * Integer kernels need scratch: one int32 accumulator per output element. */
typedef struct {
  int32_t reduce_mask;   /* bit i set: input dimension i is averaged over */
  int32_t num_reduced;   /* input elements per output element */
  int32_t input_zp;      /* integer kernels only */
  int32_t output_zp;
  int32_t multiplier;    /* QuantizeMultiplier(s_in / s_out), rescaled by 1/num_reduced as TFLM */
  int32_t shift;
} mcu_mean_params_t;

mcu_eval_t mcu_mean_int8;
mcu_eval_t mcu_mean_int16;
mcu_eval_t mcu_mean_f32;

#endif
