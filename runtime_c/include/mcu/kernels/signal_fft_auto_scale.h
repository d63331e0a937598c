#ifndef MCU_KERNELS_SIGNAL_FFT_AUTO_SCALE_H
#define MCU_KERNELS_SIGNAL_FFT_AUTO_SCALE_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalFftAutoScale (custom): shifts the int16 input left by the most bits
 * its largest magnitude allows. Outputs: 0 the scaled values (int16), 1 the shift (int32 scalar).
 * No parameters. */
mcu_eval_t mcu_signal_fft_auto_scale_int16;

#endif
