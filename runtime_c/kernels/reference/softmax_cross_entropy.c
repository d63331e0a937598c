/* Softmax cross-entropy and its gradient, per row z of `classes` logits with label l:
 *   loss = ln(sum_j e^(b z_j - m)) + m - b z_l, with m = max_j b z_j,
 *   d loss / d z_j = b (e^(b z_j - m) / sum - [j == l]),
 * both divided by the number of rows. The label's term is computed as -(sum of the others'
 * exponentials) / sum: p_l - 1 would cancel when p_l is near 1 and lose the digits every other
 * gradient is scaled by. exp and ln are mcu/train_math.h's, so the host and the
 * board give the same bits. A label outside [0, classes) fails the invoke (MCU_ERR_INPUT): the
 * host checks labels before it sends them. */
#include "mcu/kernels/softmax_cross_entropy.h"
#include "mcu/train_math.h"

mcu_status_t mcu_softmax_cross_entropy_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_softmax_cross_entropy_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 2, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *logits_t = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *labels_t = mcu_input_tensor(ctx, node, 1);
  MCU_ENSURE_MODEL(logits_t != NULL && labels_t != NULL && logits_t->ndims >= 1,
                   MCU_ERR_BAD_MODEL);
  const int32_t classes = logits_t->dims[logits_t->ndims - 1];
  const int32_t rows = mcu_num_elements(logits_t) / classes;
  MCU_ENSURE_MODEL(mcu_num_elements(labels_t) == rows, MCU_ERR_BAD_MODEL);
  const float *logits = mcu_input(ctx, node, 0);
  const int32_t *labels = mcu_input(ctx, node, 1);
  float *loss = mcu_output(ctx, node, 0);
  float *grad = mcu_output(ctx, node, 1);
  const float scale = 1.0f / (float)rows;
  float total = 0.0f;
  for (int32_t r = 0; r < rows; ++r) {
    const float *z = logits + r * classes;
    float *g = grad + r * classes;
    const int32_t label = labels[r];
    MCU_ENSURE(label >= 0 && label < classes, MCU_ERR_INPUT);
    float m = p->beta * z[0];
    for (int32_t j = 1; j < classes; ++j) {
      float v = p->beta * z[j];
      m = v > m ? v : m;
    }
    float sum = 0.0f, others = 0.0f;
    for (int32_t j = 0; j < classes; ++j) {
      g[j] = mcu_exp_f32(p->beta * z[j] - m);
      sum += g[j];
      others += j == label ? 0.0f : g[j];
    }
    for (int32_t j = 0; j < classes; ++j) {
      const float delta = j == label ? -others / sum : g[j] / sum;
      g[j] = p->beta * delta * scale;
    }
    total += (mcu_log_f32(sum) + m) - p->beta * z[label];
  }
  loss[0] = total * scale;
  return MCU_OK;
}
