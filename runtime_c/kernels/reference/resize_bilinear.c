/* RESIZE_BILINEAR, bit-exact with TFLM: reference_ops::ResizeBilinear for float32 (coordinates and
 * weights in float32, same operation order) and reference_ops::ResizeBilinearInteger for int8
 * (Q10 coordinates, Q20 products, double rounding: TFLITE_SINGLE_ROUNDING is off in TFLM).
 * Quantization parameters are not used: the int8 path interpolates the raw values. */
#include "mcu/kernels/resize_bilinear.h"

#include <math.h>

#include "mcu/quant.h"
#include "mcu/resize.h"

#define BL_ONE_Q10 1024 /* 1 << 10 */

/* A source coordinate and the two input rows (or columns) it falls between. */
typedef struct {
  float value;
  int32_t lo;
  int32_t hi;
} bl_coord_f32_t;

typedef struct {
  int32_t value; /* Q10 */
  int32_t lo;
  int32_t hi;
} bl_coord_q10_t;

/* ComputeInterpolationValues: float32 throughout. */
static bl_coord_f32_t bl_coord_f32(int32_t x, float scale, int32_t half_pixel, int32_t in_size) {
  bl_coord_f32_t c;
  c.value = half_pixel ? ((float)x + 0.5f) * scale - 0.5f : (float)x * scale;
  c.lo = mcu_max_i32((int32_t)floorf(c.value), 0);
  c.hi = mcu_min_i32((int32_t)ceilf(c.value), in_size - 1);
  return c;
}

/* ComputeInterpolationValuesInteger: Q10, C division (truncation toward zero). */
static bl_coord_q10_t bl_coord_q10(int32_t x, int32_t scale_10, int32_t half_pixel,
                                   int32_t in_size) {
  bl_coord_q10_t c;
  c.value = half_pixel ? x * scale_10 + scale_10 / 2 - BL_ONE_Q10 / 2 : x * scale_10;
  c.lo = mcu_max_i32(c.value / BL_ONE_Q10, 0);
  c.hi = mcu_min_i32((c.value + BL_ONE_Q10 - 1) / BL_ONE_Q10, in_size - 1);
  return c;
}

static size_t bl_offset(const mcu_resize_dims_t *d, int32_t b, int32_t y, int32_t x) {
  return (((size_t)b * (size_t)d->in_h + (size_t)y) * (size_t)d->in_w + (size_t)x) *
         (size_t)d->depth;
}

static void bl_pixel_f32(const float *in, const mcu_resize_dims_t *d, int32_t b,
                         const bl_coord_f32_t *cy, const bl_coord_f32_t *cx, float *out) {
  const float *p00 = in + bl_offset(d, b, cy->lo, cx->lo);
  const float *p10 = in + bl_offset(d, b, cy->hi, cx->lo);
  const float *p01 = in + bl_offset(d, b, cy->lo, cx->hi);
  const float *p11 = in + bl_offset(d, b, cy->hi, cx->hi);
  const float dy = cy->value - (float)cy->lo;
  const float dx = cx->value - (float)cx->lo;
  for (int32_t c = 0; c < d->depth; ++c) {
    out[c] = p00[c] * (1.0f - dy) * (1.0f - dx) + p10[c] * dy * (1.0f - dx) +
             p01[c] * (1.0f - dy) * dx + p11[c] * dy * dx;
  }
}

static void bl_pixel_int8(const int8_t *in, const mcu_resize_dims_t *d, int32_t b,
                          const bl_coord_q10_t *cy, const bl_coord_q10_t *cx, int8_t *out) {
  const int8_t *p00 = in + bl_offset(d, b, cy->lo, cx->lo);
  const int8_t *p10 = in + bl_offset(d, b, cy->hi, cx->lo);
  const int8_t *p01 = in + bl_offset(d, b, cy->lo, cx->hi);
  const int8_t *p11 = in + bl_offset(d, b, cy->hi, cx->hi);
  const int32_t wy1 = cy->value - BL_ONE_Q10 * cy->lo;
  const int32_t wy0 = BL_ONE_Q10 - wy1;
  const int32_t wx1 = cx->value - BL_ONE_Q10 * cx->lo;
  const int32_t wx0 = BL_ONE_Q10 - wx1;
  for (int32_t c = 0; c < d->depth; ++c) {
    int64_t acc = (int64_t)p00[c] * wy0 * wx0 + (int64_t)p10[c] * wy1 * wx0 +
                  (int64_t)p01[c] * wy0 * wx1 + (int64_t)p11[c] * wy1 * wx1;
    int64_t round = acc > 0 ? ((int64_t)1 << 19) : -((int64_t)1 << 19);
    out[c] = (int8_t)((acc + round) / ((int64_t)1 << 20));
  }
}

/* `name`: the eval over elements `t`, with coordinates `coord_t` from `coord` (scales `h_scale`,
 * `w_scale` of the parameters) and pixels from `pixel`; `check` is how the coordinates are
 * checked: MCU_ENSURE for float32, whose rounding at extreme ratios is not bounded at build
 * time, MCU_ENSURE_MODEL for int8 (the build's check_q10_in_bounds). */
#define BL_EVAL(name, t, coord_t, coord, h_scale, w_scale, pixel, check)    \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {           \
    const mcu_resize_bilinear_params_t *p = node->params;                   \
    mcu_resize_dims_t d;                                                    \
    MCU_TRY(mcu_resize_dims(node, ctx, &d));                                \
    const t *input = mcu_input(ctx, node, 0);                               \
    t *output = mcu_output(ctx, node, 0);                                   \
    for (int32_t b = 0; b < d.batches; ++b) {                               \
      for (int32_t y = 0; y < d.out_h; ++y) {                               \
        coord_t cy = coord(y, p->h_scale, p->half_pixel_centers, d.in_h);   \
        check(cy.lo < d.in_h && cy.hi >= 0, MCU_ERR_INTERNAL);              \
        for (int32_t x = 0; x < d.out_w; ++x) {                             \
          coord_t cx = coord(x, p->w_scale, p->half_pixel_centers, d.in_w); \
          check(cx.lo < d.in_w && cx.hi >= 0, MCU_ERR_INTERNAL);            \
          pixel(input, &d, b, &cy, &cx, output);                            \
          output += d.depth;                                                \
        }                                                                   \
      }                                                                     \
    }                                                                       \
    return MCU_OK;                                                          \
  }

BL_EVAL(mcu_resize_bilinear_f32, float, bl_coord_f32_t, bl_coord_f32, height_scale, width_scale,
        bl_pixel_f32, MCU_ENSURE)
BL_EVAL(mcu_resize_bilinear_int8, int8_t, bl_coord_q10_t, bl_coord_q10, height_scale_10,
        width_scale_10, bl_pixel_int8, MCU_ENSURE_MODEL)
