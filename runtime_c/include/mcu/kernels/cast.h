#ifndef MCU_KERNELS_CAST_H
#define MCU_KERNELS_CAST_H

#include "mcu/runtime.h"

/* CAST between the integer types int8, int16, int32 and uint32 (any pair), as C conversions:
 * the value modulo 2^bits of the output type. The types are read from the tensor table. */
mcu_eval_t mcu_cast_int;

#endif
