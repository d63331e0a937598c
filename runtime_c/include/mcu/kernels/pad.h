#ifndef MCU_KERNELS_PAD_H
#define MCU_KERNELS_PAD_H

#include "mcu/runtime.h"

/* PAD and PADV2 parameters. Tensors: input, paddings (constant, folded into `before`/`after`),
 * optional scalar pad value (PADV2, read at run time), output. Ranks of input and output agree. */
typedef struct {
  int32_t pad_value;     /* without a pad-value input: int8 output zero point, else 0 */
  const int32_t *before; /* elements added before each dimension, one per dimension */
  const int32_t *after;  /* elements added after each dimension */
} mcu_pad_params_t;

mcu_eval_t mcu_pad_int8;
mcu_eval_t mcu_pad_int16;
mcu_eval_t mcu_pad_int32;
mcu_eval_t mcu_pad_f32;

#endif
