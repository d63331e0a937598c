#ifndef MCU_KERNELS_UNIDIRECTIONAL_SEQUENCE_LSTM_H
#define MCU_KERNELS_UNIDIRECTIONAL_SEQUENCE_LSTM_H

#include "mcu/runtime.h"

/* UNIDIRECTIONAL_SEQUENCE_LSTM, the standard LSTM (TFLM's kernel). Inputs as TFLite numbers
 * them: 0 input (batch, time, features) or time-major (time, batch, features); 1-4
 * input-to-{input, forget, cell, output} weights (state, features); 5-8 recurrent-to-{...}
 * weights (state, state); 12-15 the gates' biases; 18 hidden state and 19 cell state, variables
 * the kernel updates (batch x state). No scratch (TFLM's kernel takes four state-sized buffers). */
typedef struct {
  int32_t time_major;
  int32_t clip;        /* 1: clip the cell state to +-cell_clip after each update */
  float cell_clip;     /* float32 */
  int32_t cell_clip_q; /* int8: the clip in cell-state units, as TFLM truncates it to int16 */
  int32_t input_offset;      /* -input zero point */
  int32_t hidden_offset;     /* -hidden state zero point (the recurrent layers' input) */
  int32_t hidden_zero_point; /* the hidden state's output offset */
  /* the 8 fully connected layers, in input order (weights 1-8): -weights zero point and the
   * multiplier to the gates' fixed Q3.12 scale */
  const int32_t *weight_offsets;
  const int32_t *fc_multipliers;
  const int32_t *fc_shifts;
  int32_t forget_multiplier; /* forget gate * cell state -> cell state */
  int32_t forget_shift;
  int32_t gated_multiplier; /* input gate * cell gate -> cell state */
  int32_t gated_shift;
  int32_t hidden_multiplier; /* tanh(cell state) * output gate -> hidden state (int8) */
  int32_t hidden_shift;
  /* the int16 tanh's input rescale for the cell state's scale (mcu_sigmoid_table_input) */
  int32_t cell_tanh_multiplier;
  int32_t cell_tanh_shift;
  const uint16_t *sigmoid_table; /* sigmoid(i / 24) in Q0.16: the int16 sigmoid and tanh */
} mcu_unidirectional_sequence_lstm_params_t;

/* int8 input, weights, hidden state and output; int16 cell state; int32 biases */
mcu_eval_t mcu_lstm_int8;
mcu_eval_t mcu_lstm_f32;

#endif
