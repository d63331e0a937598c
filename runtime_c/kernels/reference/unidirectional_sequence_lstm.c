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

/* sigmoid(k / 24) in unsigned Q0.16 for k = 0..255, the table TFLM's int16 logistic and tanh
 * interpolate (tests/kernels/test_unidirectional_sequence_lstm.py derives it from TFLM's int16
 * TANH and compares). */
static const uint16_t g_sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841,
    39498, 40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102,
    45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464,
    50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755,
    55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007,
    58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036,
    62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968,
    64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494,
    64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337,
    65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404,
    65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479,
    65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511,
    65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520,
    65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
    65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531,
    65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65535,
};

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

/* reference_integer_ops::Logistic on Q3.12 (multiplier 3, no shift): Q0.15. */
static int16_t sigmoid_q15(int16_t x) {
  int32_t v = (int32_t)x * 3;
  uint32_t magnitude = (uint32_t)(v < 0 ? -v : v);
  uint32_t index = magnitude >> 9;
  uint32_t result = 0x7FFFu << 10;
  if (index < 255u) {
    uint32_t lo = g_sigmoid_table[index];
    uint32_t hi = g_sigmoid_table[index + 1u];
    result = (lo << 9) + (magnitude & 0x1FFu) * (hi - lo);
  }
  result = v >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1u;
  return (int16_t)(result >> 10);
}

/* reference_integer_ops::Tanh (int16) after its input rescale (x * multiplier + round) >> shift;
 * Q0.15 out. */
static int16_t tanh_q15(int16_t x, int32_t multiplier, int32_t shift) {
  int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  int32_t v = (mcu_wrap_mul_i32(x, multiplier) + round) >> shift;
  uint32_t magnitude = (uint32_t)(v < 0 ? -v : v);
  uint32_t index = magnitude >> 8;
  int32_t result = (int32_t)(0xFFFFu << 8);
  if (index < 255u) {
    uint32_t lo = g_sigmoid_table[index];
    uint32_t hi = g_sigmoid_table[index + 1u];
    result = (int32_t)((lo << 8) + (magnitude & 0xFFu) * (hi - lo));
  }
  result = v >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(result >> 8);
}

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
  return gate == GATE_CELL ? tanh_q15(sum, 3, 0) : sigmoid_q15(sum);
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
      int16_t t = tanh_q15(c[i], p->cell_tanh_multiplier, p->cell_tanh_shift);
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
      if (p->clip) { /* std::max(std::min(clip, v), -clip) */
        v = v < p->cell_clip ? v : p->cell_clip;
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
