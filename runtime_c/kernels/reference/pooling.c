/* AVERAGE_POOL_2D and MAX_POOL_2D, bit-exact with TFLM reference_integer_ops::AveragePool /
 * MaxPool (int8, int16) and reference_ops::AveragePool / MaxPool (float32). The window of each
 * output pixel is clipped to the input, so padding never contributes; averages divide by the
 * number of input elements actually inside the window. */
#include "mcu/kernels/pooling.h"

#include <float.h>

#include "mcu/pool.h"
#include "mcu/quant.h"

/* Computes one output pixel (all channels). `in` points at the pixel's batch in the input,
 * `out` at the pixel in the output. */
typedef void (*pool_pixel_fn)(const mcu_pooling_params_t *p, const mcu_pool_dims_t *d,
                              const mcu_pool_window_t *w, const void *in, void *out);

static mcu_pool_window_t pool_window(const mcu_pooling_params_t *p, const mcu_pool_dims_t *d,
                                 int32_t out_y, int32_t out_x) {
  return mcu_pool_window(d, out_y * p->stride_h - p->pad_h, out_x * p->stride_w - p->pad_w,
                         p->filter_h, p->filter_w);
}

static mcu_status_t pool_run(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes,
                             pool_pixel_fn pixel) {
  const mcu_pooling_params_t *p = node->params;
  mcu_pool_dims_t d;
  const mcu_tensor_t *input_tensor = mcu_input_tensor(ctx, node, 0);
  MCU_TRY(mcu_pool_dims(input_tensor, mcu_output_tensor(ctx, node, 0), &d));
  const uint8_t *input = mcu_input(ctx, node, 0);
  uint8_t *output = mcu_output(ctx, node, 0);
  size_t batch_bytes = (size_t)d.in_h * (size_t)d.in_w * (size_t)d.depth * elem_bytes;
  size_t pixel_bytes = (size_t)d.depth * elem_bytes;
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t oy = 0; oy < d.out_h; ++oy) {
      for (int32_t ox = 0; ox < d.out_w; ++ox) {
        mcu_pool_window_t w = pool_window(p, &d, oy, ox);
        /* never empty: the lowering checked the output size against TFLM's padding */
        MCU_ENSURE_MODEL(w.y0 < w.y1 && w.x0 < w.x1, MCU_ERR_BAD_MODEL);
        size_t out_pixel = ((size_t)b * (size_t)d.out_h + (size_t)oy) * (size_t)d.out_w + (size_t)ox;
        pixel(p, &d, &w, input + (size_t)b * batch_bytes, output + out_pixel * pixel_bytes);
      }
    }
  }
  return MCU_OK;
}

static int32_t window_count(const mcu_pool_window_t *w) {
  return (w->y1 - w->y0) * (w->x1 - w->x0);
}

static int32_t element_index(const mcu_pool_dims_t *d, int32_t y, int32_t x, int32_t c) {
  return (y * d->in_w + x) * d->depth + c;
}

/* Division rounded half away from zero, as TFLM's integer AveragePool. */
static int32_t rounded_div(int32_t acc, int32_t count) {
  return acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
}

/* The eval function `kernel` of elements `t`, and its `pixel`: one output pixel, each channel's
 * taps folded into `acc` (of `acc_t`, from `init`) by `step` (of acc and the tap's value v) in
 * row-major window order, then written as `finish` (of acc and the window's tap count). */
#define POOL_KERNEL(kernel, pixel, t, acc_t, init, step, finish)             \
  static void pixel(const mcu_pooling_params_t *p, const mcu_pool_dims_t *d, \
                    const mcu_pool_window_t *w, const void *in, void *out) { \
    const t *src = in;                                                       \
    t *dst = out;                                                            \
    const int32_t count = window_count(w);                                   \
    (void)count;                                                             \
    for (int32_t c = 0; c < d->depth; ++c) {                                 \
      acc_t acc = init;                                                      \
      for (int32_t y = w->y0; y < w->y1; ++y) {                              \
        for (int32_t x = w->x0; x < w->x1; ++x) {                            \
          const acc_t v = src[element_index(d, y, x, c)];                    \
          acc = step;                                                        \
        }                                                                    \
      }                                                                      \
      dst[c] = finish;                                                       \
    }                                                                        \
  }                                                                          \
  mcu_status_t kernel(const mcu_node_t *node, mcu_context_t *ctx) {          \
    return pool_run(node, ctx, sizeof(t), pixel);                            \
  }

#define POOL_AVG_INT(acc) mcu_clamp_i32(rounded_div(acc, count), p->act_min, p->act_max)

POOL_KERNEL(mcu_average_pool_2d_int8, avg_pixel_int8, int8_t, int32_t, 0, acc + v,
            (int8_t)POOL_AVG_INT(acc))
POOL_KERNEL(mcu_average_pool_2d_int16, avg_pixel_int16, int16_t, int32_t, 0, acc + v,
            (int16_t)POOL_AVG_INT(acc))
POOL_KERNEL(mcu_average_pool_2d_f32, avg_pixel_f32, float, float, 0.0f, acc + v,
            mcu_clamp_f32(acc / (float)count, p->act_min_f, p->act_max_f))
POOL_KERNEL(mcu_max_pool_2d_int8, max_pixel_int8, int8_t, int32_t, INT8_MIN, mcu_max_i32(acc, v),
            (int8_t)mcu_clamp_i32(acc, p->act_min, p->act_max))
POOL_KERNEL(mcu_max_pool_2d_int16, max_pixel_int16, int16_t, int32_t, INT16_MIN,
            mcu_max_i32(acc, v), (int16_t)mcu_clamp_i32(acc, p->act_min, p->act_max))
POOL_KERNEL(mcu_max_pool_2d_f32, max_pixel_f32, float, float, -FLT_MAX, v > acc ? v : acc,
            mcu_clamp_f32(acc, p->act_min_f, p->act_max_f))
