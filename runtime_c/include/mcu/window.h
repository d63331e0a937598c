/* Shared by the 2-D window kernels (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, their gradients
 * and optimised variants): the sizes of an NHWC input, a [., KH, KW, KC] filter and an NHWC
 * output, read from the tensor table and checked 4-D and of one batch size; for grouped
 * convolutions, the output channels per group; whether a tap lies in the image; and the loops
 * over a window's taps and over the output's elements. What the
 * filter's first dimension and depth must be differs per operator: each kernel checks its own. */
#ifndef MCU_WINDOW_H
#define MCU_WINDOW_H

#include "mcu/runtime.h"

typedef struct {
  int32_t batches;
  int32_t in_h;
  int32_t in_w;
  int32_t in_c;
  int32_t k_h;
  int32_t k_w;
  int32_t k_c; /* the filter's depth: in_c / groups for CONV_2D, out_c for a depthwise one */
  int32_t out_h;
  int32_t out_w;
  int32_t out_c;
  int32_t per_group; /* output channels per group: set by mcu_window_groups only */
} mcu_window_dims_t;

/* The window of CONV_2D, DEPTHWISE_CONV_2D, their gradients and optimised variants, computed at
 * build time as TFLM's Prepare does: the member `win` of their parameters. */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t dilation_w;
  int32_t dilation_h;
  int32_t pad_w; /* ComputePaddingHeightWidth: padding before, extra after is implicit */
  int32_t pad_h;
} mcu_window_params_t;

static inline mcu_status_t mcu_window_dims(const mcu_tensor_t *in, const mcu_tensor_t *filter,
                                           const mcu_tensor_t *out, mcu_window_dims_t *d) {
  MCU_ENSURE_MODEL(in != NULL && filter != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  d->batches = in->dims[0];
  d->in_h = in->dims[1];
  d->in_w = in->dims[2];
  d->in_c = in->dims[3];
  d->k_h = filter->dims[1];
  d->k_w = filter->dims[2];
  d->k_c = filter->dims[3];
  d->out_h = out->dims[1];
  d->out_w = out->dims[2];
  d->out_c = out->dims[3];
  MCU_ENSURE_MODEL(out->dims[0] == d->batches, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* mcu_window_dims of a one-output node: input `in`, filter `filter`, output 0. */
static inline mcu_status_t mcu_window_node_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                                int in, int filter, mcu_window_dims_t *d) {
  MCU_ENSURE_MODEL(node->num_inputs > in && node->num_inputs > filter && node->num_outputs == 1,
                   MCU_ERR_BAD_MODEL);
  return mcu_window_dims(mcu_input_tensor(ctx, node, in), mcu_input_tensor(ctx, node, filter),
                         mcu_output_tensor(ctx, node, 0), d);
}

/* The optional bias, input `index`: absent, or one value per output channel. */
static inline mcu_status_t mcu_window_bias(const mcu_node_t *node, const mcu_context_t *ctx,
                                           int index, const mcu_window_dims_t *d) {
  const mcu_tensor_t *bias = node->num_inputs > index ? mcu_input_tensor(ctx, node, index) : NULL;
  MCU_ENSURE_MODEL(bias == NULL || mcu_num_elements(bias) == d->out_c, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* The start of the eval of a window kernel whose input, filter and optional bias are inputs 0,
 * 1 and 2: its parameters `p` (of `params_t`), its sizes `d`, read and checked by `dims` (a call
 * that fills `d` and returns a status), and its operands `input` and `out` (of `in_t`), `filter`
 * (of `filt_t`) and `bias` (of `bias_t`, NULL when absent). */
#define MCU_WINDOW_KERNEL(params_t, dims, in_t, filt_t, bias_t)               \
  const params_t *p = node->params;                                           \
  mcu_window_dims_t d;                                                        \
  MCU_TRY(dims);                                                              \
  const in_t *input = mcu_input(ctx, node, 0);                                \
  const filt_t *filter = mcu_input(ctx, node, 1);                             \
  const bias_t *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL; \
  in_t *out = mcu_output(ctx, node, 0)

/* A convolution's groups: the filter's depth divides the input's, the groups divide the output
 * channels; sets per_group. */
static inline mcu_status_t mcu_window_groups(mcu_window_dims_t *d) {
  MCU_ENSURE_MODEL(d->k_c > 0 && d->in_c % d->k_c == 0, MCU_ERR_BAD_MODEL);
  const int32_t groups = d->in_c / d->k_c;
  MCU_ENSURE_MODEL(d->out_c % groups == 0, MCU_ERR_BAD_MODEL);
  d->per_group = d->out_c / groups;
  return MCU_OK;
}

/* Whether input position (y, x) lies in the image (a tap outside is padding). */
static inline int mcu_window_inside(const mcu_window_dims_t *d, int32_t y, int32_t x) {
  return y >= 0 && y < d->in_h && x >= 0 && x < d->in_w;
}

/* Runs the statement given last for each tap (ky, kx) of the window whose top-left input position
 * is (y0, x0) that lies in the image, in TFLM's order (rows, then columns), with (y, x) its input
 * position; taps in the padding are skipped. */
#define MCU_WINDOW_EACH_TAP(d, y0, x0, dilation_h, dilation_w, ...) \
  for (int32_t ky = 0; ky < (d)->k_h; ++ky) {                       \
    int32_t y = (y0) + (dilation_h) * ky;                           \
    for (int32_t kx = 0; kx < (d)->k_w; ++kx) {                     \
      int32_t x = (x0) + (dilation_w) * kx;                         \
      if (mcu_window_inside(d, y, x)) {                             \
        __VA_ARGS__;                                                \
      }                                                             \
    }                                                               \
  }

/* Runs the statement given last for each output element in order (batch, row oy, column ox,
 * channel oc), with `in` the batch's input (of `in_t`). */
#define MCU_WINDOW_EACH_OUTPUT(d, in_t, input, ...)                  \
  for (int32_t b = 0; b < (d)->batches; ++b) {                       \
    const in_t *in = (input) + b * (d)->in_h * (d)->in_w * (d)->in_c; \
    for (int32_t oy = 0; oy < (d)->out_h; ++oy) {                    \
      for (int32_t ox = 0; ox < (d)->out_w; ++ox) {                  \
        for (int32_t oc = 0; oc < (d)->out_c; ++oc) {                \
          __VA_ARGS__;                                               \
        }                                                            \
      }                                                              \
    }                                                                \
  }

#endif
