/* PAD and PADV2, identical to TFLM reference_ops::Pad: every output element is either the input
 * element it covers or the pad value. The output is written row by row along the last dimension,
 * from the last byte to the first: every output element lies at or after the input element it
 * covers, so the kernel is also correct when the memory plan places the input at the start of
 * the output's buffer (mcugen/plan/aliasing.py): no input byte is overwritten before it is read. */
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
  MCU_ENSURE_MODEL(input != NULL && input->ndims == output->ndims, MCU_ERR_BAD_MODEL);
  /* the lowering guarantees it too; kept so the compiler sees the last dimension is set */
  MCU_ENSURE(output->ndims >= 1, MCU_ERR_BAD_MODEL);
  g->ndims = output->ndims;
  for (int i = 0; i < g->ndims; ++i) {
    g->in_dims[i] = input->dims[i];
    g->out_dims[i] = output->dims[i];
    g->before[i] = p->before[i];
    MCU_ENSURE_MODEL(p->before[i] >= 0 && p->after[i] >= 0, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL(input->dims[i] + p->before[i] + p->after[i] == output->dims[i],
                     MCU_ERR_BAD_MODEL);
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

/* Moves `idx` to the previous output row in row-major order. */
static void prev_row(const pad_geom_t *g, int32_t *idx) {
  for (int i = g->ndims - 2; i >= 0; --i) {
    if (--idx[i] >= 0) {
      return;
    }
    idx[i] = g->out_dims[i] - 1;
  }
}

/* Writes `count` pad values ending just before `end`; returns the new end. */
static uint8_t *fill_down(uint8_t *end, int32_t count, const uint8_t *value, size_t elem_bytes) {
  for (int32_t i = 0; i < count; ++i) {
    for (size_t b = elem_bytes; b > 0; --b) {
      *--end = value[b - 1];
    }
  }
  return end;
}

/* Copies `bytes` bytes ending at `src_end` to end at `end`, last byte first (end >= src_end). */
static uint8_t *copy_down(uint8_t *end, const uint8_t *src_end, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    *--end = *--src_end;
  }
  return end;
}

static mcu_status_t pad_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes,
                            const uint8_t *value) {
  pad_geom_t g;
  MCU_TRY(pad_geom(node, ctx, &g));
  const int last = g.ndims - 1;
  const int32_t out_row = g.out_dims[last];
  const int32_t in_row = g.in_dims[last];
  const int32_t after = out_row - in_row - g.before[last];
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  const int32_t rows = out_row > 0 ? mcu_num_elements(output) / out_row : 0;
  const size_t in_bytes = (size_t)mcu_num_elements(mcu_input_tensor(ctx, node, 0)) * elem_bytes;
  const uint8_t *src = (const uint8_t *)mcu_input(ctx, node, 0) + in_bytes;
  uint8_t *dst = (uint8_t *)mcu_output(ctx, node, 0) + (size_t)rows * (size_t)out_row * elem_bytes;
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int i = 0; i < last; ++i) {
    idx[i] = g.out_dims[i] - 1;
  }
  for (int32_t r = 0; r < rows; ++r) {
    if (row_inside(&g, idx)) {
      dst = fill_down(dst, after, value, elem_bytes);
      dst = copy_down(dst, src, (size_t)in_row * elem_bytes);
      src -= (size_t)in_row * elem_bytes;
      dst = fill_down(dst, g.before[last], value, elem_bytes);
    } else {
      dst = fill_down(dst, out_row, value, elem_bytes);
    }
    prev_row(&g, idx);
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
