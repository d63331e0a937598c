/* Backward DEPTHWISE_CONV_2D (mcu/kernels/depthwise_conv_2d_grad.h), float32, any depth
 * multiplier M. One pass over the output gradient, output element (n, oy, ox, o) by element,
 * o = c*M + m reading input channel c = o / M:
 *   dz = dy where act_min < y < act_max, else 0;   db[o] += dz;
 *   for each tap (ky, kx) of its window that lies in the image, at input pixel (iy, ix):
 *     dW[0][ky][kx][o] += dz * x[n][iy][ix][c];   dx[n][iy][ix][c] += dz * W[0][ky][kx][o].
 * Taps in the padding add nothing, as they add nothing forward. dW, db and dx start at 0 and each
 * of their sums runs in that loop order (n, oy, ox, o, ky, kx), so every build gives the same
 * bits. */
#include "mcu/kernels/depthwise_conv_2d_grad.h"

#include "mcu/window.h"

/* The tensors one batch element works on; a gradient not asked for is NULL. */
typedef struct {
  const float *x;
  const float *w;
  float *dw;
  float *dx;
} dw_grad_io_t;

static mcu_status_t dw_grad_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                 mcu_window_dims_t *d) {
  const mcu_depthwise_conv_2d_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 4, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(node->num_outputs == p->has_dw + p->has_db + p->has_dx, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *dy = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *w = mcu_input_tensor(ctx, node, 2);
  const mcu_tensor_t *y = mcu_input_tensor(ctx, node, 3);
  MCU_ENSURE_MODEL(dy != NULL && y != NULL, MCU_ERR_BAD_MODEL);
  MCU_TRY(mcu_window_dims(mcu_input_tensor(ctx, node, 1), w, y, d));
  MCU_ENSURE_MODEL(w->dims[0] == 1 && d->k_c == d->out_c, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_num_elements(dy) == mcu_num_elements(y), MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->depth_multiplier > 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(d->out_c == d->in_c * p->depth_multiplier, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

static void dw_grad_clear(float *t, int32_t n) {
  if (t == NULL) {
    return;
  }
  for (int32_t i = 0; i < n; ++i) {
    t[i] = 0.0f;
  }
}

/* Output element (oy, ox, o) of one batch element, its gradient dz, into dW and dx: every tap
 * of its window (top-left input position y0, x0) inside the image. */
static void dw_grad_taps(const mcu_depthwise_conv_2d_grad_params_t *p, const mcu_window_dims_t *d,
                         const dw_grad_io_t *io, float dz, int32_t y0, int32_t x0, int32_t o) {
  const int32_t c = o / p->depth_multiplier;
  for (int32_t ky = 0; ky < d->k_h; ++ky) {
    const int32_t iy = y0 + p->win.dilation_h * ky;
    if (iy < 0 || iy >= d->in_h) {
      continue;
    }
    for (int32_t kx = 0; kx < d->k_w; ++kx) {
      const int32_t ix = x0 + p->win.dilation_w * kx;
      if (ix < 0 || ix >= d->in_w) {
        continue;
      }
      const int32_t pixel = (iy * d->in_w + ix) * d->in_c + c;
      const int32_t tap = (ky * d->k_w + kx) * d->out_c + o;
      if (io->dw != NULL) {
        io->dw[tap] += dz * io->x[pixel];
      }
      if (io->dx != NULL) {
        io->dx[pixel] += dz * io->w[tap];
      }
    }
  }
}

mcu_status_t mcu_depthwise_conv_2d_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_depthwise_conv_2d_grad_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(dw_grad_dims(node, ctx, &d));
  const float *dy = mcu_input(ctx, node, 0);
  const float *x = mcu_input(ctx, node, 1);
  const float *y = mcu_input(ctx, node, 3);
  int out = 0;
  float *dw = p->has_dw ? mcu_output(ctx, node, out++) : NULL;
  float *db = p->has_db ? mcu_output(ctx, node, out++) : NULL;
  float *dx = p->has_dx ? mcu_output(ctx, node, out++) : NULL;
  const int32_t image = d.in_h * d.in_w * d.in_c;
  dw_grad_clear(dw, d.k_h * d.k_w * d.out_c);
  dw_grad_clear(db, d.out_c);
  dw_grad_clear(dx, d.batches * image);
  dw_grad_io_t io = {x, mcu_input(ctx, node, 2), dw, dx};
  int32_t k = 0;
  for (int32_t b = 0; b < d.batches; ++b) {
    io.x = x + b * image;
    io.dx = dx != NULL ? dx + b * image : NULL;
    for (int32_t oy = 0; oy < d.out_h; ++oy) {
      for (int32_t ox = 0; ox < d.out_w; ++ox) {
        for (int32_t o = 0; o < d.out_c; ++o, ++k) {
          const float dz = (y[k] > p->act_min_f && y[k] < p->act_max_f) ? dy[k] : 0.0f;
          if (db != NULL) {
            db[o] += dz;
          }
          const int32_t y0 = oy * p->win.stride_h - p->win.pad_h, x0 = ox * p->win.stride_w - p->win.pad_w;
          dw_grad_taps(p, &d, &io, dz, y0, x0, o);
        }
      }
    }
  }
  return MCU_OK;
}
