/* UNIDIRECTIONAL_SEQUENCE_LSTM, bit-exact with TFLM's EvalLstm: <int8, int8, int16, int32>
 * (int8 activations and weights, int16 cell state and gates, int32 biases) and <float...>.
 *
 * One step (lstm_eval.h LstmStep) on `rows` rows (the batch when time-major, else one row): the
 * forget, input and cell gates (each: input and recurrent fully connected layers at Q3.12, added
 * with int16 saturation, then sigmoid or tanh to Q0.15), cell = forget * cell + input * cell gate
 * (clipped), the output gate, hidden = tanh(cell) * output gate, copied to the output. The hidden
 * and cell states are variables: they carry over to the next invoke.
 *
 * TFLM computes each stage for the whole state vector into four scratch buffers. Element i of
 * every stage depends only on element i of the stages before it and on the hidden state of the
 * previous step, so this kernel runs all stages element by element with the same arithmetic, and
 * writes the new hidden state to the step's output slice before copying it into the state (the
 * recurrent layers must see the old one until the step ends): no scratch. */
#include "mcu/kernels/unidirectional_sequence_lstm.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "mcu/quant.h"

enum { GATE_INPUT = 0, GATE_FORGET = 1, GATE_CELL = 2, GATE_OUTPUT = 3, NUM_GATES = 4 };
enum { INPUT_HIDDEN = 18, INPUT_CELL = 19 };

typedef struct {
  int32_t batch;
  int32_t steps;
  int32_t features;
  int32_t state;
  int32_t rows; /* rows per step: the batch when time-major, else 1 */
} lstm_dims_t;

static mcu_status_t lstm_dims(const mcu_node_t *node, const mcu_context_t *ctx, lstm_dims_t *d) {
  const mcu_unidirectional_sequence_lstm_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *hidden = mcu_input_tensor(ctx, node, INPUT_HIDDEN);
  const mcu_tensor_t *cell = mcu_input_tensor(ctx, node, INPUT_CELL);
  MCU_ENSURE_MODEL(node->num_inputs == 24 && input != NULL && hidden != NULL && cell != NULL &&
                       input->ndims == 3 && hidden->ndims == 2,
                   MCU_ERR_BAD_MODEL);
  d->steps = input->dims[p->time_major ? 0 : 1];
  d->batch = input->dims[p->time_major ? 1 : 0];
  d->features = input->dims[2];
  d->state = hidden->dims[1];
  d->rows = p->time_major ? d->batch : 1;
  MCU_ENSURE_MODEL(mcu_num_elements(hidden) == d->batch * d->state &&
                       mcu_num_elements(cell) == d->batch * d->state &&
                       mcu_num_elements(mcu_output_tensor(ctx, node, 0)) ==
                           d->batch * d->steps * d->state,
                   MCU_ERR_BAD_MODEL);
  for (int i = 1; i <= 8; ++i) {
    const mcu_tensor_t *w = mcu_input_tensor(ctx, node, i);
    MCU_ENSURE_MODEL(w != NULL && w->ndims == 2 && w->dims[0] == d->state &&
                         w->dims[1] == (i <= 4 ? d->features : d->state),
                     MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL(mcu_input_tensor(ctx, node, 11 + (i <= 4 ? i : i - 4)) != NULL,
                     MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

/* ---- int8 x int8 -> int16 ---- */

typedef struct {
  const mcu_unidirectional_sequence_lstm_params_t *p;
  lstm_dims_t d;
  const int8_t *weights[8]; /* inputs 1-8 */
  const int32_t *bias[NUM_GATES];
} lstm_int8_t;

/* Output unit `c` of fully connected layer `layer` (0-7: weights input 1 + layer) on one row
 * `x` of `depth` values, to int16 at the gates' Q3.12 scale. */
static int16_t fc_q12(const lstm_int8_t *k, int layer, const int8_t *x, int32_t depth,
                      int32_t x_offset, const int32_t *bias, int32_t c) {
  const int8_t *w = k->weights[layer] + c * depth;
  const int32_t w_offset = k->p->weight_offsets[layer];
  int32_t acc = 0;
  for (int32_t i = 0; i < depth; ++i) {
    acc += (w[i] + w_offset) * (x[i] + x_offset);
  }
  if (bias != NULL) {
    acc += bias[c];
  }
  acc = mcu_mbqm(acc, k->p->fc_multipliers[layer], k->p->fc_shifts[layer]);
  return (int16_t)mcu_clamp_i32(acc, INT16_MIN, INT16_MAX);
}

/* Gate `gate` of unit `c` of row `r`: both layers added with int16 saturation, then the gate's
 * nonlinearity (tanh for the cell gate, at TFLM's fixed Q3.12 input: multiplier 3, no shift). */
static int16_t gate_int8(const lstm_int8_t *k, int gate, const int8_t *x, const int8_t *h,
                         int32_t r, int32_t c) {
  int32_t in = fc_q12(k, gate, x + r * k->d.features, k->d.features, k->p->input_offset,
                      k->bias[gate], c);
  int32_t rec = fc_q12(k, 4 + gate, h + r * k->d.state, k->d.state, k->p->hidden_offset, NULL, c);
  int16_t sum = (int16_t)mcu_clamp_i32(in + rec, INT16_MIN, INT16_MAX);
  int32_t v = mcu_sigmoid_table_input(sum, 0, 0); /* Q3.12: TFLM's multiplier 3, no shift */
  return gate == GATE_CELL ? mcu_tanh_q15(v, k->p->sigmoid_table)
                           : mcu_sigmoid_q15(v, k->p->sigmoid_table);
}

/* reference_integer_ops::MulElementwise of two Q0.15 or cell-state values, before its clamp. */
static int32_t mul_q(int32_t a, int32_t b, int32_t multiplier, int32_t shift) {
  return mcu_mbqm(a * b, multiplier, shift);
}

static void step_int8(const lstm_int8_t *k, const int8_t *x, int8_t *h, int16_t *c, int8_t *out) {
  const mcu_unidirectional_sequence_lstm_params_t *p = k->p;
  for (int32_t r = 0; r < k->d.rows; ++r) {
    for (int32_t u = 0; u < k->d.state; ++u) {
      const int32_t i = r * k->d.state + u;
      int16_t forget = gate_int8(k, GATE_FORGET, x, h, r, u);
      int16_t input = gate_int8(k, GATE_INPUT, x, h, r, u);
      int16_t cell = gate_int8(k, GATE_CELL, x, h, r, u);
      int32_t kept = mcu_clamp_i32(mul_q(forget, c[i], p->forget_multiplier, p->forget_shift),
                                   INT16_MIN, INT16_MAX);
      int32_t added = mcu_clamp_i32(mul_q(input, cell, p->gated_multiplier, p->gated_shift),
                                    INT16_MIN, INT16_MAX);
      int32_t sum = mcu_clamp_i32(kept + added, INT16_MIN, INT16_MAX);
      if (p->clip) {
        sum = mcu_clamp_i32(sum, -p->cell_clip_q, p->cell_clip_q);
      }
      c[i] = (int16_t)sum;
      int16_t output_gate = gate_int8(k, GATE_OUTPUT, x, h, r, u);
      int32_t scaled = mcu_sigmoid_table_input(c[i], p->cell_tanh_multiplier, p->cell_tanh_shift);
      int16_t t = mcu_tanh_q15(scaled, p->sigmoid_table);
      int32_t v = p->hidden_zero_point + mul_q(t, output_gate, p->hidden_multiplier,
                                               p->hidden_shift);
      out[i] = (int8_t)mcu_clamp_i32(v, INT8_MIN, INT8_MAX);
    }
  }
  memcpy(h, out, (size_t)(k->d.rows * k->d.state));
}

mcu_status_t mcu_lstm_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  lstm_int8_t k;
  k.p = node->params;
  MCU_TRY(lstm_dims(node, ctx, &k.d));
  for (int i = 0; i < 8; ++i) {
    k.weights[i] = mcu_input(ctx, node, 1 + i);
  }
  for (int g = 0; g < NUM_GATES; ++g) {
    k.bias[g] = mcu_input(ctx, node, 12 + g);
  }
  const int8_t *x = mcu_input(ctx, node, 0);
  int8_t *h = (int8_t *)mcu_input(ctx, node, INPUT_HIDDEN);
  int16_t *c = (int16_t *)mcu_input(ctx, node, INPUT_CELL);
  int8_t *out = mcu_output(ctx, node, 0);
  const lstm_dims_t *d = &k.d;
  for (int32_t b = 0; b < (k.p->time_major ? 1 : d->batch); ++b) {
    for (int32_t t = 0; t < d->steps; ++t) {
      int32_t row = b * d->steps + t; /* time-major: b == 0, a step covers the batch */
      step_int8(&k, x + row * d->rows * d->features, h + b * d->state, c + b * d->state,
                out + row * d->rows * d->state);
    }
  }
  return MCU_OK;
}

/* ---- float32 ---- */

typedef struct {
  lstm_dims_t d;
  const float *weights[8];
  const float *bias[NUM_GATES];
} lstm_f32_t;

/* reference_ops::FullyConnected, unit `c` of one row, no activation (clamped to the float
 * range). */
static float fc_f32(const lstm_f32_t *k, int layer, const float *x, int32_t depth,
                    const float *bias, int32_t c) {
  const float *w = k->weights[layer] + c * depth;
  float total = 0.0f;
  for (int32_t i = 0; i < depth; ++i) {
    total += x[i] * w[i];
  }
  float b = bias != NULL ? bias[c] : 0.0f;
  return mcu_clamp_f32(total + b, -FLT_MAX, FLT_MAX);
}

static float gate_f32(const lstm_f32_t *k, int gate, const float *x, const float *h, int32_t r,
                      int32_t c) {
  float in = fc_f32(k, gate, x + r * k->d.features, k->d.features, k->bias[gate], c);
  float sum = in + fc_f32(k, 4 + gate, h + r * k->d.state, k->d.state, NULL, c);
  return gate == GATE_CELL ? tanhf(sum) : mcu_sigmoid_f32(sum);
}

static void step_f32(const lstm_f32_t *k, const mcu_unidirectional_sequence_lstm_params_t *p,
                     const float *x, float *h, float *c, float *out) {
  for (int32_t r = 0; r < k->d.rows; ++r) {
    for (int32_t u = 0; u < k->d.state; ++u) {
      const int32_t i = r * k->d.state + u;
      float forget = gate_f32(k, GATE_FORGET, x, h, r, u);
      float input = gate_f32(k, GATE_INPUT, x, h, r, u);
      float cell = gate_f32(k, GATE_CELL, x, h, r, u);
      float kept = mcu_clamp_f32(forget * c[i], -FLT_MAX, FLT_MAX);
      float v = kept + mcu_clamp_f32(input * cell, -FLT_MAX, FLT_MAX);
      if (p->clip) { /* TFLM's Clipping, as its build behaves: a NaN cell stays NaN */
        v = v > p->cell_clip ? p->cell_clip : v;
        v = v < -p->cell_clip ? -p->cell_clip : v;
      }
      c[i] = v;
      float output_gate = gate_f32(k, GATE_OUTPUT, x, h, r, u);
      out[i] = mcu_clamp_f32(tanhf(c[i]) * output_gate, -FLT_MAX, FLT_MAX);
    }
  }
  memcpy(h, out, (size_t)(k->d.rows * k->d.state) * sizeof(float));
}

mcu_status_t mcu_lstm_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_unidirectional_sequence_lstm_params_t *p = node->params;
  lstm_f32_t k;
  MCU_TRY(lstm_dims(node, ctx, &k.d));
  for (int i = 0; i < 8; ++i) {
    k.weights[i] = mcu_input(ctx, node, 1 + i);
  }
  for (int g = 0; g < NUM_GATES; ++g) {
    k.bias[g] = mcu_input(ctx, node, 12 + g);
  }
  const float *x = mcu_input(ctx, node, 0);
  float *h = (float *)mcu_input(ctx, node, INPUT_HIDDEN);
  float *c = (float *)mcu_input(ctx, node, INPUT_CELL);
  float *out = mcu_output(ctx, node, 0);
  const lstm_dims_t *d = &k.d;
  for (int32_t b = 0; b < (p->time_major ? 1 : d->batch); ++b) {
    for (int32_t t = 0; t < d->steps; ++t) {
      int32_t row = b * d->steps + t;
      step_f32(&k, p, x + row * d->rows * d->features, h + b * d->state, c + b * d->state,
               out + row * d->rows * d->state);
    }
  }
  return MCU_OK;
}
