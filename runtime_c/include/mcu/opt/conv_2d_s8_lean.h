/* The general int8 CONV_2D's rung with no scratch (kernels/opt/conv_2d_s8_lean.c,
 * mcugen/codegen/lower/opt_conv_lean.py): below conv_2d_s8_col on the ladder of kernels chosen
 * for memory (mcugen/kernel_choice.py), above the reference kernel. Parameters
 * mcu_conv_2d_s8_params_t (mcu/kernels/conv_2d.h) with two differences: the records' bias is the
 * layer's own (the input offset, -pad_value, is added to each input instead of folded in, so
 * taps in the padding are skipped), and the filter is read as the model stores it. Never in
 * place. */
#ifndef MCU_OPT_CONV_2D_S8_LEAN_H
#define MCU_OPT_CONV_2D_S8_LEAN_H

#include "mcu/runtime.h"

mcu_eval_t mcu_conv_2d_s8_lean;

#endif
