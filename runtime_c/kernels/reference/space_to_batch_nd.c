/* SPACE_TO_BATCH_ND, the loop of TFLM reference_ops::SpaceToBatchND (4-D NHWC, 3-D NHC as NH1C).
 * Padding follows TFLite: int8 pads with the output zero point, float32 with 0.0f. TFLM's own kernel
 * pads with an uninitialised byte (SpaceToBatchParams::output_offset is never set), so TFLM agrees
 * with this kernel everywhere except in padded positions. */
#include "mcu/kernels/space_to_batch_nd.h"

#include <string.h>

#include "mcu/space_batch.h"

MCU_SPACE_BATCH_SHAPES(sb_shapes, mcu_space_to_batch_nd_params_t, in, out)

static mcu_status_t sb_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes,
                           int pad_byte) {
  const mcu_space_to_batch_nd_params_t *p = node->params;
  mcu_space_batch_shape_t in, out;
  MCU_TRY(sb_shapes(node, ctx, p, &in, &out));
  const uint8_t *input = mcu_input(ctx, node, 0);
  uint8_t *output = mcu_output(ctx, node, 0);
  const size_t pixel = (size_t)in.depth * elem_bytes;
  for (int32_t ob = 0; ob < out.batch; ++ob) {
    const int32_t ib = ob % in.batch;
    const int32_t shift_w = (ob / in.batch) % p->block_w;
    const int32_t shift_h = (ob / in.batch) / p->block_w;
    for (int32_t oy = 0; oy < out.height; ++oy) {
      const int32_t iy = oy * p->block_h + shift_h - p->pad_top;
      for (int32_t ox = 0; ox < out.width; ++ox) {
        const int32_t ix = ox * p->block_w + shift_w - p->pad_left;
        uint8_t *dst = output + mcu_space_batch_offset(&out, ob, oy, ox) * elem_bytes;
        if (iy < 0 || iy >= in.height || ix < 0 || ix >= in.width) {
          memset(dst, pad_byte, pixel);
        } else {
          memcpy(dst, input + mcu_space_batch_offset(&in, ib, iy, ix) * elem_bytes, pixel);
        }
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_space_to_batch_nd_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_space_to_batch_nd_params_t *p = node->params;
  return sb_run(node, ctx, sizeof(int8_t), (int)(uint8_t)(int8_t)p->pad_value);
}

mcu_status_t mcu_space_to_batch_nd_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  return sb_run(node, ctx, sizeof(float), 0); /* all-zero bytes are 0.0f */
}
