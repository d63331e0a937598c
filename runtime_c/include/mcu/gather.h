/* Shared by the kernels that copy elements of the input in a strided order (STRIDED_SLICE,
 * TRANSPOSE): a walk over the output's axes, each with its count and its step in the input. */
#ifndef MCU_GATHER_H
#define MCU_GATHER_H

#include <string.h>

#include "mcu/runtime.h"

typedef struct {
  int ndims;
  int32_t counts[MCU_MAX_DIMS]; /* output extent per axis */
  int32_t steps[MCU_MAX_DIMS];  /* input element step per output index on each axis */
  int32_t base;                 /* input element index of the first output element */
  int32_t total;                /* output elements */
} mcu_gather_t;

/* Writes the `total` elements of `size` bytes the walk reads from `in` to `out`, in row-major
 * output order. */
static inline void mcu_gather(const mcu_gather_t *w, const uint8_t *in, uint8_t *out,
                              size_t size) {
  int32_t index[MCU_MAX_DIMS] = {0};
  int32_t src = w->base;
  for (int32_t n = 0; n < w->total; ++n) {
    memcpy(out + (size_t)n * size, in + (size_t)src * size, size);
    for (int d = w->ndims - 1; d >= 0; --d) {
      src += w->steps[d];
      if (++index[d] < w->counts[d]) {
        break;
      }
      src -= w->steps[d] * w->counts[d];
      index[d] = 0;
    }
  }
}

/* Defines the kernel `name` that gathers input 0 into output 0 along the walk `walk` (a function
 * (node, ctx, &walk) returning a status) builds, elements of its parameters' (of `params_t`)
 * `elem_bytes`. */
#define MCU_GATHER_KERNEL(name, params_t, walk)                                               \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {                             \
    const params_t *p = node->params;                                                         \
    mcu_gather_t w;                                                                           \
    MCU_TRY(walk(node, ctx, &w));                                                             \
    mcu_gather(&w, mcu_input(ctx, node, 0), mcu_output(ctx, node, 0), (size_t)p->elem_bytes); \
    return MCU_OK;                                                                            \
  }

#endif
