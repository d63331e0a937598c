/* PAD and PADV2, identical to TFLM reference_ops::Pad: every output element is either the input
 * element it covers or the pad value. The output is written row by row along the last dimension. */
#include "mcu/kernels/pad.h"

typedef struct {
  int ndims;
  int32_t in_dims[MCU_MAX_DIMS];
  int32_t out_dims[MCU_MAX_DIMS];
  int32_t before[MCU_MAX_DIMS];
} pad_geom_t;

static mcu_status_t pad_geom(const mcu_node_t *node, const mcu_context_t *ctx, pad_geom_t *g) {
  const mcu_pad_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE(input != NULL && input->ndims == output->ndims && output->ndims >= 1,
             MCU_ERR_BAD_MODEL);
  g->ndims = output->ndims;
  for (int i = 0; i < g->ndims; ++i) {
    g->in_dims[i] = input->dims[i];
    g->out_dims[i] = output->dims[i];
    g->before[i] = p->before[i];
    MCU_ENSURE(p->before[i] >= 0 && p->after[i] >= 0, MCU_ERR_BAD_MODEL);
    MCU_ENSURE(input->dims[i] + p->before[i] + p->after[i] == output->dims[i], MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

/* Whether output row `idx` (coordinates of all but the last dimension) covers input data. */
static int row_inside(const pad_geom_t *g, const int32_t *idx) {
  for (int i = 0; i < g->ndims - 1; ++i) {
    if (idx[i] < g->before[i] || idx[i] >= g->before[i] + g->in_dims[i]) {
      return 0;
    }
  }
  return 1;
}

/* Advances `idx` to the next output row in row-major order. */
static void next_row(const pad_geom_t *g, int32_t *idx) {
  for (int i = g->ndims - 2; i >= 0; --i) {
    if (++idx[i] < g->out_dims[i]) {
      return;
    }
    idx[i] = 0;
  }
}

static uint8_t *fill(uint8_t *dst, int32_t count, const uint8_t *value, size_t elem_bytes) {
  for (int32_t i = 0; i < count; ++i) {
    for (size_t b = 0; b < elem_bytes; ++b) {
      *dst++ = value[b];
    }
  }
  return dst;
}

static uint8_t *copy(uint8_t *dst, const uint8_t *src, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    dst[i] = src[i];
  }
  return dst + bytes;
}

static mcu_status_t pad_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes,
                            const uint8_t *value) {
  pad_geom_t g;
  MCU_TRY(pad_geom(node, ctx, &g));
  const int last = g.ndims - 1;
  const int32_t out_row = g.out_dims[last];
  const int32_t in_row = g.in_dims[last];
  const int32_t after = out_row - in_row - g.before[last];
  const int32_t rows = out_row > 0 ? mcu_num_elements(mcu_output_tensor(ctx, node, 0)) / out_row : 0;
  const uint8_t *src = mcu_input(ctx, node, 0);
  uint8_t *dst = mcu_output(ctx, node, 0);
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t r = 0; r < rows; ++r) {
    if (row_inside(&g, idx)) {
      dst = fill(dst, g.before[last], value, elem_bytes);
      dst = copy(dst, src, (size_t)in_row * elem_bytes);
      src += (size_t)in_row * elem_bytes;
      dst = fill(dst, after, value, elem_bytes);
    } else {
      dst = fill(dst, out_row, value, elem_bytes);
    }
    next_row(&g, idx);
  }
  return MCU_OK;
}

/* The PADV2 pad-value input, or NULL for PAD. */
static const void *pad_value_input(const mcu_node_t *node, const mcu_context_t *ctx) {
  return node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
}

mcu_status_t mcu_pad_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_pad_params_t *p = node->params;
  const int8_t *given = pad_value_input(node, ctx);
  int8_t value = given != NULL ? *given : (int8_t)p->pad_value;
  return pad_run(node, ctx, sizeof value, (const uint8_t *)&value);
}

mcu_status_t mcu_pad_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_pad_params_t *p = node->params;
  const int16_t *given = pad_value_input(node, ctx);
  int16_t value = given != NULL ? *given : (int16_t)p->pad_value;
  return pad_run(node, ctx, sizeof value, (const uint8_t *)&value);
}

mcu_status_t mcu_pad_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_pad_params_t *p = node->params;
  const int32_t *given = pad_value_input(node, ctx);
  int32_t value = given != NULL ? *given : p->pad_value;
  return pad_run(node, ctx, sizeof value, (const uint8_t *)&value);
}

mcu_status_t mcu_pad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const float *given = pad_value_input(node, ctx);
  float value = given != NULL ? *given : 0.0f;
  return pad_run(node, ctx, sizeof value, (const uint8_t *)&value);
}
