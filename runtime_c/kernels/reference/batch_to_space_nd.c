/* BATCH_TO_SPACE_ND, bit-exact with TFLM reference_ops::BatchToSpaceND (4-D NHWC, 3-D NHC as
 * NH1C): pure data movement; cropped input pixels are skipped. */
#include "mcu/kernels/batch_to_space_nd.h"

#include <string.h>

typedef struct {
  int32_t batch;
  int32_t height;
  int32_t width;
  int32_t depth;
} bs_shape_t;

/* NHWC, or NHC extended to NH1C as ExtendShapeBatchToSpace does. */
static bs_shape_t bs_shape(const mcu_tensor_t *t) {
  bs_shape_t s = {t->dims[0], t->dims[1], 1, t->dims[t->ndims - 1]};
  if (t->ndims == 4) {
    s.width = t->dims[2];
  }
  return s;
}

static size_t bs_offset(const bs_shape_t *s, int32_t b, int32_t y, int32_t x) {
  return (((size_t)b * (size_t)s->height + (size_t)y) * (size_t)s->width + (size_t)x) *
         (size_t)s->depth;
}

static mcu_status_t bs_shapes(const mcu_node_t *node, const mcu_context_t *ctx,
                              const mcu_batch_to_space_nd_params_t *p, bs_shape_t *in,
                              bs_shape_t *out) {
  const mcu_tensor_t *ti = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *to = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(ti != NULL && (ti->ndims == 3 || ti->ndims == 4), MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(to->ndims == ti->ndims, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->block_h > 0 && p->block_w > 0, MCU_ERR_BAD_MODEL);
  *in = bs_shape(ti);
  *out = bs_shape(to);
  MCU_ENSURE_MODEL(out->batch > 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->depth == out->depth, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->batch == out->batch * p->block_h * p->block_w, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

static mcu_status_t bs_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes) {
  const mcu_batch_to_space_nd_params_t *p = node->params;
  bs_shape_t in, out;
  MCU_TRY(bs_shapes(node, ctx, p, &in, &out));
  const uint8_t *input = mcu_input(ctx, node, 0);
  uint8_t *output = mcu_output(ctx, node, 0);
  const size_t pixel = (size_t)in.depth * elem_bytes;
  for (int32_t ib = 0; ib < in.batch; ++ib) {
    const int32_t ob = ib % out.batch;
    const int32_t spatial = ib / out.batch;
    for (int32_t iy = 0; iy < in.height; ++iy) {
      const int32_t oy = iy * p->block_h + spatial / p->block_w - p->crop_top;
      if (oy < 0 || oy >= out.height) {
        continue;
      }
      for (int32_t ix = 0; ix < in.width; ++ix) {
        const int32_t ox = ix * p->block_w + spatial % p->block_w - p->crop_left;
        if (ox < 0 || ox >= out.width) {
          continue;
        }
        memcpy(output + bs_offset(&out, ob, oy, ox) * elem_bytes,
               input + bs_offset(&in, ib, iy, ix) * elem_bytes, pixel);
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_batch_to_space_nd_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  return bs_run(node, ctx, sizeof(int8_t));
}

mcu_status_t mcu_batch_to_space_nd_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  return bs_run(node, ctx, sizeof(float));
}
