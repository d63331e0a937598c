/* SVDF, bit-exact with TFLM's EvalIntegerSvdfReference (int8 input, int8 or int16 state) and
 * EvalFloatSvdfReference (float32). The state (input 4) is a variable: each invoke shifts it left
 * by one element, writes the feature projection of the input into the newest column of every
 * filter, then reduces it against the time weights. Same arithmetic in the same order as TFLM,
 * without its scratch buffers. */
#include "mcu/kernels/svdf.h"

#include <math.h>

#include "mcu/quant.h"

typedef struct {
  int32_t batch;
  int32_t input_size;
  int32_t filters;
  int32_t memory;
  int32_t units;
} svdf_dims_t;

static mcu_status_t svdf_dims(const mcu_node_t *node, const mcu_context_t *ctx, svdf_dims_t *d) {
  const mcu_svdf_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *feature = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *time = mcu_input_tensor(ctx, node, 2);
  const mcu_tensor_t *state = mcu_input_tensor(ctx, node, 4);
  MCU_ENSURE_MODEL(node->num_inputs == 5 && input != NULL && feature != NULL && time != NULL &&
                       state != NULL && input->ndims == 2 && feature->ndims == 2 &&
                       time->ndims == 2 && p->rank > 0,
                   MCU_ERR_BAD_MODEL);
  d->batch = input->dims[0];
  d->input_size = input->dims[1];
  d->filters = feature->dims[0];
  d->memory = time->dims[1];
  d->units = d->filters / p->rank;
  MCU_ENSURE_MODEL(feature->dims[1] == d->input_size && time->dims[0] == d->filters &&
                       d->units * p->rank == d->filters &&
                       mcu_num_elements(state) == d->batch * d->filters * d->memory &&
                       mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == d->batch * d->units,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_input(ctx, node, 3) != NULL, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* State elements are int8 or int16 (`wide`), as the time weights. */
static inline int32_t state_at(const void *s, int32_t i, int wide) {
  return wide ? ((const int16_t *)s)[i] : ((const int8_t *)s)[i];
}

static inline void state_put(void *s, int32_t i, int32_t v, int wide) {
  if (wide) {
    ((int16_t *)s)[i] = (int16_t)v;
  } else {
    ((int8_t *)s)[i] = (int8_t)v;
  }
}

/* Shift the whole state left by one element; the newest column is rewritten next. */
static void shift_state(void *state, int32_t count, int wide) {
  for (int32_t i = 0; i + 1 < count; ++i) {
    state_put(state, i, state_at(state, i + 1, wide), wide);
  }
}

/* The feature projection of the input, requantized to the state, into each filter's newest
 * element. The clamp to the state's range comes before the zero point is added, as in TFLM. */
static void feature_step(const mcu_svdf_params_t *p, const svdf_dims_t *d, const int8_t *input,
                         const int8_t *feature, void *state, int wide) {
  const int32_t lo = wide ? INT16_MIN : INT8_MIN;
  const int32_t hi = wide ? INT16_MAX : INT8_MAX;
  for (int32_t b = 0; b < d->batch; ++b) {
    const int8_t *x = input + b * d->input_size;
    for (int32_t f = 0; f < d->filters; ++f) {
      const int8_t *w = feature + f * d->input_size;
      int32_t dot = 0;
      for (int32_t c = 0; c < d->input_size; ++c) {
        dot = mcu_wrap_add_i32(dot, w[c] * (x[c] - p->input_zero_point));
      }
      dot = mcu_clamp_i32(mcu_mbqm(dot, p->feature_multiplier, p->feature_shift), lo, hi);
      int32_t newest = (b * d->filters + f) * d->memory + d->memory - 1;
      state_put(state, newest, p->state_zero_point + dot, wide);
    }
  }
}

/* Sum over the memory of one filter's state row against its time weights, as int32. The sums
 * wrap (mcu_wrap_add_i32): with int16 state and time weights a worst-case bound would reject real
 * models, and TFLM's kernel wraps there in practice. Each product fits: |w| <= 32768 times
 * |state - zero point| <= 65535. */
static int32_t time_product(const void *time, const void *state, int32_t row, int32_t f,
                            const svdf_dims_t *d, int32_t zero_point, int wide) {
  int32_t acc = 0;
  for (int32_t j = 0; j < d->memory; ++j) {
    int32_t w = state_at(time, f * d->memory + j, wide);
    acc = mcu_wrap_add_i32(acc, w * (state_at(state, row + j, wide) - zero_point));
  }
  return acc;
}

/* TFLM keeps every filter's time product and every unit's sum in scratch; each is used once, so
 * they are summed as they come, in TFLM's order (bias, then the unit's filters): no scratch. */
static mcu_status_t svdf_integer(const mcu_node_t *node, mcu_context_t *ctx, int wide) {
  const mcu_svdf_params_t *p = node->params;
  svdf_dims_t d;
  MCU_TRY(svdf_dims(node, ctx, &d));
  const void *time = mcu_input(ctx, node, 2);
  const int32_t *bias = mcu_input(ctx, node, 3);
  void *state = (void *)mcu_input(ctx, node, 4);
  int8_t *output = mcu_output(ctx, node, 0);
  shift_state(state, d.batch * d.filters * d.memory, wide);
  feature_step(p, &d, mcu_input(ctx, node, 0), mcu_input(ctx, node, 1), state, wide);
  for (int32_t b = 0; b < d.batch; ++b) {
    for (int32_t u = 0; u < d.units; ++u) {
      int32_t acc = bias[u];
      for (int32_t r = 0; r < p->rank; ++r) {
        int32_t f = u * p->rank + r;
        acc = mcu_wrap_add_i32(acc, time_product(time, state, (b * d.filters + f) * d.memory,
                                                 f, &d, p->state_zero_point, wide));
      }
      int32_t v = mcu_mbqm(acc, p->time_multiplier, p->time_shift) + p->output_zero_point;
      output[b * d.units + u] = (int8_t)mcu_clamp_i32(v, INT8_MIN, INT8_MAX);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_svdf_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  return svdf_integer(node, ctx, 0);
}

mcu_status_t mcu_svdf_int8_state16(const mcu_node_t *node, mcu_context_t *ctx) {
  return svdf_integer(node, ctx, 1);
}

/* TFLM's ActivationValFloat. */
static float activate(int32_t activation, float a) {
  switch (activation) {
    case 1:
      return a > 0.0f ? a : 0.0f;
    case 2:
      return mcu_clamp_f32(a, -1.0f, 1.0f);
    case 3:
      return mcu_clamp_f32(a, 0.0f, 6.0f);
    case 4:
      return tanhf(a);
    case 5:
      return signbit(a) ? 1.0f : 0.0f;
    default:
      return a;
  }
}

mcu_status_t mcu_svdf_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_svdf_params_t *p = node->params;
  svdf_dims_t d;
  MCU_TRY(svdf_dims(node, ctx, &d));
  const float *input = mcu_input(ctx, node, 0);
  const float *feature = mcu_input(ctx, node, 1);
  const float *time = mcu_input(ctx, node, 2);
  const float *bias = mcu_input(ctx, node, 3);
  float *state = (float *)mcu_input(ctx, node, 4);
  float *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i + 1 < d.batch * d.filters * d.memory; ++i) {
    state[i] = state[i + 1];
  }
  for (int32_t b = 0; b < d.batch; ++b) {
    for (int32_t f = 0; f < d.filters; ++f) {
      float dot = 0.0f;
      for (int32_t c = 0; c < d.input_size; ++c) {
        dot += feature[f * d.input_size + c] * input[b * d.input_size + c];
      }
      state[(b * d.filters + f) * d.memory + d.memory - 1] = dot;
    }
  }
  /* each filter's time product, then added to its unit's sum: TFLM's order, without scratch */
  for (int32_t b = 0; b < d.batch; ++b) {
    for (int32_t u = 0; u < d.units; ++u) {
      float acc = bias[u];
      for (int32_t r = 0; r < p->rank; ++r) {
        int32_t f = u * p->rank + r;
        const float *row = state + (b * d.filters + f) * d.memory;
        float product = 0.0f;
        for (int32_t j = 0; j < d.memory; ++j) {
          product += time[f * d.memory + j] * row[j];
        }
        acc += product;
      }
      output[b * d.units + u] = activate(p->activation, acc);
    }
  }
  return MCU_OK;
}
