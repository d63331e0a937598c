#ifndef MCU_KERNELS_SGD_H
#define MCU_KERNELS_SGD_H

#include "mcu/runtime.h"

/* The weight update of a training graph (mcugen/train/): SGD with momentum and weight decay on
 * one float32 parameter, with gradients accumulated over samples. Inputs: the parameter (a
 * variable), its gradient for this sample, the accumulated gradient (a variable, or omitted when
 * every sample updates), the momentum (a variable, or omitted when momentum is 0), and `apply`
 * (int32 [1]): 0 only accumulates this sample's gradient; n > 0 updates with the mean of the n
 * accumulated gradients (this one included) and clears the sum. No outputs: it writes the
 * variables. As PyTorch's SGD: g = mean + weight_decay w; m = momentum m + g (g itself without
 * momentum); w = w - lr m. */
typedef struct {
  float learning_rate;
  float momentum;
  float weight_decay;
} mcu_sgd_params_t;

mcu_eval_t mcu_sgd_f32;

/* The update of n elements, shared by McugenSgd and the backward kernels that update their
 * weights one output channel at a time (conv_2d_grad, fully_connected_grad): the same
 * operations on each element, so either gives the same bits. `g` is this sample's gradient;
 * `acc` and `mom` may be NULL; the caller has checked apply >= 0 and (acc != NULL or
 * apply <= 1), and skips the call when apply is 0 and acc is NULL. */
static inline void mcu_sgd_step(const mcu_sgd_params_t *p, float *w, const float *g, float *acc,
                                float *mom, int32_t n, int32_t apply) {
  const float count = (float)apply;
  for (int32_t i = 0; i < n; ++i) {
    float grad = g[i];
    if (acc != NULL) {
      float sum = acc[i] + grad;
      if (apply == 0) {
        acc[i] = sum;
        continue;
      }
      acc[i] = 0.0f;
      grad = sum / count;
    }
    grad = grad + p->weight_decay * w[i];
    if (mom != NULL) {
      mom[i] = p->momentum * mom[i] + grad;
      grad = mom[i];
    }
    w[i] = w[i] - p->learning_rate * grad;
  }
}

/* The update operands of a backward kernel that updates its weights itself (`update`): the sum,
 * the momentum and `apply` at inputs `first` to first + 2, and its row scratch, checked as
 * McugenSgd checks them. `run` says whether this invoke updates (or only accumulates). */
typedef struct {
  float *acc;
  float *mom;
  float *row;
  int32_t apply;
  int32_t run;
} mcu_sgd_operands_t;

static inline mcu_status_t mcu_sgd_operands(const mcu_node_t *node, mcu_context_t *ctx,
                                            int first, int32_t update, mcu_sgd_operands_t *op) {
  op->acc = (float *)mcu_input(ctx, node, first);
  op->mom = (float *)mcu_input(ctx, node, first + 1);
  op->row = mcu_scratch(ctx, node);
  op->apply = 0;
  op->run = 0;
  if (!update) {
    return MCU_OK;
  }
  const int32_t *apply = mcu_input(ctx, node, first + 2);
  MCU_ENSURE_MODEL(apply != NULL && op->row != NULL, MCU_ERR_BAD_MODEL);
  op->apply = *apply;
  MCU_ENSURE(op->apply >= 0 && (op->acc != NULL || op->apply <= 1), MCU_ERR_INPUT);
  op->run = op->apply > 0 || op->acc != NULL;
  return MCU_OK;
}

/* The parameters of the float32 backward kernel of a weighted layer (CONV_2D, whose member
 * `layer` they are besides its window, and FULLY_CONNECTED): the fused activation's range (dy
 * passes where act_min_f < y < act_max_f), whether it updates W with the SGD step `sgd`, and
 * which of the outputs db and dx it writes. */
typedef struct {
  float act_min_f;
  float act_max_f;
  int32_t update_w;
  int32_t has_db;
  int32_t has_dx;
  mcu_sgd_params_t sgd;
} mcu_grad_layer_params_t;

/* dy where the fused activation passed the forward output y, else 0. */
static inline float mcu_grad_passed(const mcu_grad_layer_params_t *p, float dy, float y) {
  return (y > p->act_min_f && y < p->act_max_f) ? dy : 0.0f;
}

/* The operands of such a kernel: dy, x, W (a variable when it trains) and y at inputs 0 to 3,
 * W's update operands from input 4, and the outputs db then dx, each present when its flag asks
 * for it (else NULL). */
typedef struct {
  const float *dy;
  const float *x;
  float *w;
  const float *y;
  float *db;
  float *dx;
  mcu_sgd_operands_t sgd;
} mcu_grad_operands_t;

static inline mcu_status_t mcu_grad_operands(const mcu_node_t *node, mcu_context_t *ctx,
                                             int32_t update_w, int32_t has_db, int32_t has_dx,
                                             mcu_grad_operands_t *g) {
  g->dy = mcu_input(ctx, node, 0);
  g->x = mcu_input(ctx, node, 1);
  g->w = (float *)mcu_input(ctx, node, 2);
  g->y = mcu_input(ctx, node, 3);
  int out = 0;
  g->db = has_db ? mcu_output(ctx, node, out++) : NULL;
  g->dx = has_dx ? mcu_output(ctx, node, out++) : NULL;
  return mcu_sgd_operands(node, ctx, 4, update_w, &g->sgd);
}

#endif
