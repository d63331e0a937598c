/* Backward CONV_2D (mcu/kernels/conv_2d_grad.h), float32, grouped or not. For output element
 * (n, oy, ox, o), dz = dy where act_min < y < act_max, else 0, and each tap (ky, kx) of its window
 * that lies in the image, at input pixel (iy, ix), adds (c0: the first input channel of o's group)
 *   db[o] += dz;   dx[n][iy][ix][c0 + i] += dz * W[o][ky][kx][i];
 *   dW[o][ky][kx][i] += dz * x[n][iy][ix][c0 + i].
 * Taps in the padding add nothing, as they add nothing forward. A first pass over the output
 * gradient, element by element in the order (n, oy, ox, o), computes db and dx; then each output
 * channel o in turn sums its dW over (n, oy, ox) into a scratch row and updates its weights. Every
 * sum starts at 0 and runs in the order written, so every build gives the same bits. */
#include "mcu/kernels/conv_2d_grad.h"

#include "mcu/window.h"

static mcu_status_t conv_grad_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                   mcu_window_dims_t *d) {
  const mcu_conv_2d_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 7, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(node->num_outputs == p->layer.has_db + p->layer.has_dx, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *dy = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *w = mcu_input_tensor(ctx, node, 2);
  const mcu_tensor_t *y = mcu_input_tensor(ctx, node, 3);
  MCU_ENSURE_MODEL(dy != NULL && y != NULL, MCU_ERR_BAD_MODEL);
  MCU_TRY(mcu_window_dims(mcu_input_tensor(ctx, node, 1), w, y, d));
  MCU_ENSURE_MODEL(w->dims[0] == d->out_c, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_num_elements(dy) == mcu_num_elements(y), MCU_ERR_BAD_MODEL);
  return mcu_window_groups(d);
}

static void conv_grad_clear(float *t, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    t[i] = 0.0f;
  }
}

/* The taps k in [0, taps) whose input position start + dilation * k lies in [0, extent): one
 * range, [*lo, *hi). */
static void conv_grad_taps(int32_t start, int32_t dilation, int32_t extent, int32_t taps,
                           int32_t *lo, int32_t *hi) {
  int32_t k = 0;
  while (k < taps && start + dilation * k < 0) {
    ++k;
  }
  *lo = k;
  while (k < taps && start + dilation * k < extent) {
    ++k;
  }
  *hi = k;
}

/* The window of output pixel (oy, ox) inside the image: its taps and its top-left position. */
typedef struct {
  int32_t ky_lo, ky_hi, kx_lo, kx_hi, y0, x0;
} conv_grad_window_t;

static void conv_grad_window(const mcu_conv_2d_grad_params_t *p, const mcu_window_dims_t *d,
                             int32_t oy, int32_t ox, conv_grad_window_t *win) {
  win->y0 = oy * p->win.stride_h - p->win.pad_h;
  win->x0 = ox * p->win.stride_w - p->win.pad_w;
  conv_grad_taps(win->y0, p->win.dilation_h, d->in_h, d->k_h, &win->ky_lo, &win->ky_hi);
  conv_grad_taps(win->x0, p->win.dilation_w, d->in_w, d->k_w, &win->kx_lo, &win->kx_hi);
}

/* db and dx: one pass over the output gradient in the order (n, oy, ox, o). */
static void conv_grad_input(const mcu_conv_2d_grad_params_t *p, const mcu_window_dims_t *d,
                            const float *dy, const float *y, const float *w, float *db,
                            float *dx) {
  const int32_t image = d->in_h * d->in_w * d->in_c;
  const int32_t filter_size = d->k_h * d->k_w * d->k_c;
  if (db != NULL) {
    conv_grad_clear(db, d->out_c);
  }
  if (dx != NULL) {
    conv_grad_clear(dx, d->batches * image);
  }
  int32_t k = 0;
  for (int32_t b = 0; b < d->batches; ++b) {
    float *dx_b = dx != NULL ? dx + b * image : NULL;
    for (int32_t oy = 0; oy < d->out_h; ++oy) {
      for (int32_t ox = 0; ox < d->out_w; ++ox) {
        conv_grad_window_t win;
        conv_grad_window(p, d, oy, ox, &win);
        for (int32_t o = 0; o < d->out_c; ++o, ++k) {
          const float dz = mcu_grad_passed(&p->layer, dy[k], y[k]);
          if (db != NULL) {
            db[o] += dz;
          }
          if (dx_b == NULL) {
            continue;
          }
          const int32_t c0 = (o / d->per_group) * d->k_c;
          for (int32_t ky = win.ky_lo; ky < win.ky_hi; ++ky) {
            const int32_t iy = win.y0 + p->win.dilation_h * ky;
            for (int32_t kx = win.kx_lo; kx < win.kx_hi; ++kx) {
              const int32_t ix = win.x0 + p->win.dilation_w * kx;
              float *to = dx_b + (iy * d->in_w + ix) * d->in_c + c0;
              const float *from = w + o * filter_size + (ky * d->k_w + kx) * d->k_c;
              for (int32_t i = 0; i < d->k_c; ++i) {
                to[i] += dz * from[i];
              }
            }
          }
        }
      }
    }
  }
}

/* dW of output channel o, summed over (n, oy, ox) into `row` (KH*KW*C/groups floats). */
static void conv_grad_weights(const mcu_conv_2d_grad_params_t *p, const mcu_window_dims_t *d,
                              const float *dy, const float *y, const float *x, int32_t o,
                              float *row) {
  const int32_t image = d->in_h * d->in_w * d->in_c;
  const int32_t c0 = (o / d->per_group) * d->k_c;
  conv_grad_clear(row, d->k_h * d->k_w * d->k_c);
  int32_t k = o;
  for (int32_t b = 0; b < d->batches; ++b) {
    const float *x_b = x + b * image;
    for (int32_t oy = 0; oy < d->out_h; ++oy) {
      for (int32_t ox = 0; ox < d->out_w; ++ox, k += d->out_c) {
        const float dz = mcu_grad_passed(&p->layer, dy[k], y[k]);
        if (dz == 0.0f) {
          continue; /* adds only zeros (x is finite): the sums keep their bits */
        }
        conv_grad_window_t win;
        conv_grad_window(p, d, oy, ox, &win);
        for (int32_t ky = win.ky_lo; ky < win.ky_hi; ++ky) {
          const int32_t iy = win.y0 + p->win.dilation_h * ky;
          for (int32_t kx = win.kx_lo; kx < win.kx_hi; ++kx) {
            const int32_t ix = win.x0 + p->win.dilation_w * kx;
            const float *from = x_b + (iy * d->in_w + ix) * d->in_c + c0;
            float *to = row + (ky * d->k_w + kx) * d->k_c;
            for (int32_t i = 0; i < d->k_c; ++i) {
              to[i] += dz * from[i];
            }
          }
        }
      }
    }
  }
}

mcu_status_t mcu_conv_2d_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_grad_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(conv_grad_dims(node, ctx, &d));
  mcu_grad_operands_t g;
  MCU_TRY(mcu_grad_operands(node, ctx, p->layer.update_w, p->layer.has_db, p->layer.has_dx,
                            &g));
  conv_grad_input(p, &d, g.dy, g.y, g.w, g.db, g.dx);
  if (!g.sgd.run) {
    return MCU_OK;
  }
  float *row = g.sgd.row;
  const int32_t filter_size = d.k_h * d.k_w * d.k_c;
  for (int32_t o = 0; o < d.out_c; ++o) {
    conv_grad_weights(p, &d, g.dy, g.y, g.x, o, row);
    const int32_t at = o * filter_size;
    mcu_sgd_step(&p->layer.sgd, g.w + at, row, g.sgd.acc != NULL ? g.sgd.acc + at : NULL,
                 g.sgd.mom != NULL ? g.sgd.mom + at : NULL, filter_size, g.sgd.apply);
  }
  return MCU_OK;
}
