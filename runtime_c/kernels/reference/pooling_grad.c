/* Backward AVERAGE_POOL_2D and MAX_POOL_2D (mcu/kernels/pooling_grad.h), float32:
 *   dz = dy where act_min < y < act_max, else 0;
 *   average: dx[tap] += dz[window] / count(window), for each in-image tap of each window;
 *   max: dx[argmax(window)] += dz[window], the argmax being the tap the forward kernel keeps
 *   (the first strictly larger than everything before it, in row-major window order; ties go to
 *   the first such tap, and a window of values all at or below -FLT_MAX to its first tap).
 * dx is zeroed, then windows are visited in output order (batch, row, column, channel) and each
 * window's taps in row-major order, so every build adds in the same order and gives the same bits. */
#include "mcu/kernels/pooling_grad.h"

#include <float.h>

#include "mcu/pool.h"
#include "mcu/quant.h"

/* Adds one output pixel's gradient (all channels) to dx. `dy` and `y` point at the pixel, `x`
 * (NULL for the average) and `dx` at the pixel's image. */
typedef void (*grad_pixel_fn)(const mcu_pooling_grad_params_t *p, const mcu_pool_dims_t *d,
                              const mcu_pool_window_t *w, const float *dy, const float *y,
                              const float *x, float *dx);

static mcu_status_t grad_dims(const mcu_node_t *node, const mcu_context_t *ctx, int has_x,
                              mcu_pool_dims_t *d) {
  const mcu_tensor_t *dy = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *y = mcu_input_tensor(ctx, node, 1 + has_x);
  const mcu_tensor_t *dx = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(dy != NULL && y != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_num_elements(y) == mcu_num_elements(dy), MCU_ERR_BAD_MODEL);
  if (has_x) {
    const mcu_tensor_t *x = mcu_input_tensor(ctx, node, 1);
    MCU_ENSURE_MODEL(x != NULL && mcu_num_elements(x) == mcu_num_elements(dx), MCU_ERR_BAD_MODEL);
  }
  return mcu_pool_dims(dx, dy, d);
}

static mcu_pool_window_t grad_window(const mcu_pooling_grad_params_t *p, const mcu_pool_dims_t *d,
                                 int32_t out_y, int32_t out_x) {
  return mcu_pool_window(d, out_y * p->stride_h - p->pad_h, out_x * p->stride_w - p->pad_w,
                         p->filter_h, p->filter_w);
}

static int32_t tap_index(const mcu_pool_dims_t *d, int32_t y, int32_t x, int32_t c) {
  return (y * d->in_w + x) * d->depth + c;
}

/* dy where the fused activation let the forward value through, else 0. */
static float passed(const mcu_pooling_grad_params_t *p, float dy, float y) {
  return (y > p->act_min_f && y < p->act_max_f) ? dy : 0.0f;
}

static void avg_pixel(const mcu_pooling_grad_params_t *p, const mcu_pool_dims_t *d,
                      const mcu_pool_window_t *w, const float *dy, const float *y, const float *x,
                      float *dx) {
  (void)x;
  const float count = (float)((w->y1 - w->y0) * (w->x1 - w->x0));
  for (int32_t c = 0; c < d->depth; ++c) {
    const float share = passed(p, dy[c], y[c]) / count;
    for (int32_t ty = w->y0; ty < w->y1; ++ty) {
      for (int32_t tx = w->x0; tx < w->x1; ++tx) {
        dx[tap_index(d, ty, tx, c)] += share;
      }
    }
  }
}

static void max_pixel(const mcu_pooling_grad_params_t *p, const mcu_pool_dims_t *d,
                      const mcu_pool_window_t *w, const float *dy, const float *y, const float *x,
                      float *dx) {
  for (int32_t c = 0; c < d->depth; ++c) {
    int32_t best = tap_index(d, w->y0, w->x0, c);
    float max = -FLT_MAX;
    for (int32_t ty = w->y0; ty < w->y1; ++ty) {
      for (int32_t tx = w->x0; tx < w->x1; ++tx) {
        const int32_t i = tap_index(d, ty, tx, c);
        if (x[i] > max) {
          max = x[i];
          best = i;
        }
      }
    }
    dx[best] += passed(p, dy[c], y[c]);
  }
}

static mcu_status_t grad_run(const mcu_node_t *node, mcu_context_t *ctx, int has_x,
                             grad_pixel_fn pixel) {
  const mcu_pooling_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 2 + has_x && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  mcu_pool_dims_t d;
  MCU_TRY(grad_dims(node, ctx, has_x, &d));
  const float *dy = mcu_input(ctx, node, 0);
  const float *x = has_x ? (const float *)mcu_input(ctx, node, 1) : NULL;
  const float *y = mcu_input(ctx, node, 1 + has_x);
  float *dx = mcu_output(ctx, node, 0);
  const int32_t image = d.in_h * d.in_w * d.depth;
  for (int32_t i = 0; i < d.batches * image; ++i) {
    dx[i] = 0.0f;
  }
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t oy = 0; oy < d.out_h; ++oy) {
      for (int32_t ox = 0; ox < d.out_w; ++ox) {
        mcu_pool_window_t w = grad_window(p, &d, oy, ox);
        /* never empty: the lowering checked the output size against TFLM's padding */
        MCU_ENSURE_MODEL(w.y0 < w.y1 && w.x0 < w.x1, MCU_ERR_BAD_MODEL);
        const int32_t at = ((b * d.out_h + oy) * d.out_w + ox) * d.depth;
        const float *image_x = x != NULL ? x + b * image : NULL;
        pixel(p, &d, &w, dy + at, y + at, image_x, dx + b * image);
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_average_pool_2d_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  return grad_run(node, ctx, 0, avg_pixel);
}

mcu_status_t mcu_max_pool_2d_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  return grad_run(node, ctx, 1, max_pixel);
}
