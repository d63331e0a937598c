#ifndef MCU_KERNELS_SIGNAL_FILTER_BANK_SQUARE_ROOT_H
#define MCU_KERNELS_SIGNAL_FILTER_BANK_SQUARE_ROOT_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalFilterBankSquareRoot (custom): the rounded integer square root of
 * each uint64 channel, shifted right by the int32 scalar input 1, as uint32. No parameters; a
 * shift outside [0, 31] (data from input 1) fails with MCU_ERR_INPUT (undefined in TFLM). */
mcu_eval_t mcu_signal_filter_bank_square_root_uint64;

#endif
