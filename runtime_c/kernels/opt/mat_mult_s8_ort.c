/* FULLY_CONNECTED and 1x1 CONV_2D with onnxruntime's output stage (`--onnx-numerics ort`):
 * the optimised int8 matrix product (mat_mult_s8.c through fully_connected_s8.c and
 * conv_2d_1x1_s8.c, their shapes, scratch and in-place rules) with each sum handed to
 * mcu_ort_requant (mcu/ort_requant.h) instead of TFLM's requantisation. The sums are the
 * reference kernels' (reference/ort_conv.c) exactly: the input offset folded into the bias is
 * the same integer (mcugen/codegen/lower/ort_opt.py checks it fits int32), so the outputs are
 * byte for byte theirs. The entries run the product on a copy of the node whose parameters
 * are an mcu_mat_mult_s8_out_t (mcu/mat_mult_s8.h) carrying the output function. */
#include "mcu/kernels/conv_2d.h"
#include "mcu/kernels/fully_connected.h"
#include "mcu/kernels/ort_conv.h"
#include "mcu/mat_mult_s8.h"

/* The parameters the product runs with: the build's, the output function, and the output
 * stage's constants, computed once a layer. */
typedef struct {
  mcu_mat_mult_s8_out_t hooked;
  mcu_ort_out_t out;
} ort_params_t;

static int8_t ort_out(const mcu_mat_mult_s8_out_t *self, int32_t acc, int32_t c) {
  return (int8_t)mcu_ort_out(&((const ort_params_t *)self)->out, acc, c);
}

/* `run` on a copy of `node` whose parameters are those. */
static mcu_status_t with_ort_out(const mcu_node_t *node, mcu_context_t *ctx, mcu_eval_fn run) {
  const mcu_mat_mult_s8_ort_params_t *p = node->params;
  const mcu_mat_mult_s8_params_t *product = &p->product;
  MCU_ENSURE_MODEL(p->scales != NULL && product->shifts == NULL &&
                       product->short_shifts == NULL && product->stream == NULL,
                   MCU_ERR_BAD_MODEL);
  const mcu_ort_requant_t rq = {0,
                                product->output_offset,
                                product->act_min,
                                product->act_max,
                                product->num_channels,
                                p->scales};
  ort_params_t params = {{*product, ort_out}, mcu_ort_out_of(&rq)};
  mcu_node_t copy = *node;
  copy.params = &params.hooked.product;
  return run(&copy, ctx);
}

mcu_status_t mcu_fully_connected_s8_row_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  return with_ort_out(node, ctx, mcu_fully_connected_s8_row);
}

mcu_status_t mcu_fully_connected_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  return with_ort_out(node, ctx, mcu_fully_connected_s8_opt);
}

mcu_status_t mcu_conv_2d_1x1_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  return with_ort_out(node, ctx, mcu_conv_2d_1x1_s8_opt);
}
