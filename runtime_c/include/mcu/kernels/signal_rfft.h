#ifndef MCU_KERNELS_SIGNAL_RFFT_H
#define MCU_KERNELS_SIGNAL_RFFT_H

#include "mcu/runtime.h"

/* TFLM signal library's SignalRfft (custom), int16: the real FFT of each row of the input,
 * zero-padded to fft_length, as fft_length / 2 + 1 complex int16 values (re, im) per row; the
 * fixed-point kissfft TFLM uses (a complex FFT of half the length with radix 2..5 stages, each
 * dividing by its radix, then the real-input split). The tables are computed at build time with
 * kissfft's double-precision formulas. Scratch: fft_length / 2 complex int16 values. */
typedef struct {
  int32_t fft_length;            /* even, 4..32768 */
  int32_t num_stages;            /* radix stages of the complex FFT of length fft_length / 2 */
  const int32_t *stages;         /* (radix, span) per stage, outermost first; radix 2..5 */
  const int16_t *twiddles;       /* fft_length / 2 complex (re, im) */
  const int16_t *super_twiddles; /* fft_length / 4 complex: the real-input split's */
  const int16_t *leaf_index;     /* per position of the complex FFT: the input pair it starts as */
} mcu_signal_rfft_params_t;

mcu_eval_t mcu_signal_rfft_int16;

#endif
