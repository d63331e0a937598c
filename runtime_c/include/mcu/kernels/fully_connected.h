#ifndef MCU_KERNELS_FULLY_CONNECTED_H
#define MCU_KERNELS_FULLY_CONNECTED_H

#include "mcu/requant_params.h"
#include "mcu/runtime.h"

typedef struct {
  int32_t filter_offset; /* -filter zero point (0 with per-channel scales) */
  mcu_requant_params_t rq;
} mcu_fully_connected_params_t;

mcu_eval_t mcu_fully_connected_int8;
/* int16 input and output, int8 filter; bias int64 (or none) / int32 (the accumulator type). */
mcu_eval_t mcu_fully_connected_int16;
mcu_eval_t mcu_fully_connected_int16_acc32;
mcu_eval_t mcu_fully_connected_f32;
/* Optimised variant (kernels/opt/fully_connected_s8.c): int8, filter zero point 0; parameters
 * mcu_mat_mult_s8_params_t (mcu/mat_mult_s8.h). */
mcu_eval_t mcu_fully_connected_s8_opt;
/* The same for one row (batch 1): no scratch, no widened pairs linked in. */
mcu_eval_t mcu_fully_connected_s8_row;

#endif
