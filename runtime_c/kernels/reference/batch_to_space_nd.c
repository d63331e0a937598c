/* BATCH_TO_SPACE_ND, bit-exact with TFLM reference_ops::BatchToSpaceND (4-D NHWC, 3-D NHC as
 * NH1C): pure data movement; cropped input pixels are skipped. */
#include "mcu/kernels/batch_to_space_nd.h"

#include <string.h>

#include "mcu/space_batch.h"

MCU_SPACE_BATCH_SHAPES(bs_shapes, mcu_batch_to_space_nd_params_t, out, in)

static mcu_status_t bs_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes) {
  const mcu_batch_to_space_nd_params_t *p = node->params;
  mcu_space_batch_shape_t in, out;
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
        memcpy(output + mcu_space_batch_offset(&out, ob, oy, ox) * elem_bytes,
               input + mcu_space_batch_offset(&in, ib, iy, ix) * elem_bytes, pixel);
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
