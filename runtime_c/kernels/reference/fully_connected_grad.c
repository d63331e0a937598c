/* Backward FULLY_CONNECTED (mcu/kernels/fully_connected_grad.h), float32, rows = the batch:
 *   dz = dy where act_min < y < act_max, else 0;
 *   dx[r][i] = sum_o dz[r][o] W[o][i];  db[o] = sum_r dz[r][o];  dW[o][i] = sum_r dz[r][o] x[r][i]
 * in that order, dW row by row into the update. Each sum runs in the index order written, so
 * every build gives the same bits. */
#include "mcu/kernels/fully_connected_grad.h"

mcu_status_t mcu_fully_connected_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fully_connected_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 7, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(node->num_outputs == p->has_db + p->has_dx, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *w_t = mcu_input_tensor(ctx, node, 2);
  const mcu_tensor_t *y_t = mcu_input_tensor(ctx, node, 3);
  MCU_ENSURE_MODEL(w_t != NULL && y_t != NULL && w_t->ndims == 2, MCU_ERR_BAD_MODEL);
  const int32_t outs = w_t->dims[0], ins = w_t->dims[1];
  const int32_t rows = mcu_num_elements(y_t) / outs;
  mcu_grad_operands_t g;
  MCU_TRY(mcu_grad_operands(node, ctx, p->update_w, p->has_db, p->has_dx, &g));
  if (g.dx != NULL) {
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t i = 0; i < ins; ++i) {
        float total = 0.0f;
        for (int32_t o = 0; o < outs; ++o) {
          total += mcu_grad_passed(p, g.dy[r * outs + o], g.y[r * outs + o]) * g.w[o * ins + i];
        }
        g.dx[r * ins + i] = total;
      }
    }
  }
  if (g.db != NULL) {
    for (int32_t o = 0; o < outs; ++o) {
      float total = 0.0f;
      for (int32_t r = 0; r < rows; ++r) {
        total += mcu_grad_passed(p, g.dy[r * outs + o], g.y[r * outs + o]);
      }
      g.db[o] = total;
    }
  }
  if (!g.sgd.run) {
    return MCU_OK;
  }
  float *row = g.sgd.row;
  for (int32_t o = 0; o < outs; ++o) {
    for (int32_t i = 0; i < ins; ++i) {
      float total = 0.0f;
      for (int32_t r = 0; r < rows; ++r) {
        total += mcu_grad_passed(p, g.dy[r * outs + o], g.y[r * outs + o]) * g.x[r * ins + i];
      }
      row[i] = total;
    }
    mcu_sgd_step(&p->sgd, g.w + o * ins, row, g.sgd.acc != NULL ? g.sgd.acc + o * ins : NULL,
                 g.sgd.mom != NULL ? g.sgd.mom + o * ins : NULL, ins, g.sgd.apply);
  }
  return MCU_OK;
}
