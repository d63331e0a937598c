/* Shared by MEAN and its gradient: a tensor `whole` reduced over the dimensions of a mask into a
 * tensor `kept` that holds the kept dimensions in order, and the walk over `whole` in row-major
 * order with, for each element, the flat index of its kept coordinates. */
#ifndef MCU_REDUCE_H
#define MCU_REDUCE_H

#include "mcu/runtime.h"

typedef struct {
  int ndims;
  int32_t dims[MCU_MAX_DIMS]; /* whole's */
  int32_t mask;               /* bit i set: dimension i is reduced */
  int32_t num_whole;
  int32_t num_kept;
} mcu_reduce_t;

/* Checks that the reduced dimensions hold `num_reduced` elements and the kept ones `kept`'s. */
static inline mcu_status_t mcu_reduce_of(const mcu_tensor_t *whole, const mcu_tensor_t *kept,
                                         int32_t mask, int32_t num_reduced, mcu_reduce_t *g) {
  MCU_ENSURE_MODEL(whole != NULL && kept != NULL && num_reduced > 0, MCU_ERR_BAD_MODEL);
  g->ndims = whole->ndims;
  g->mask = mask;
  g->num_kept = 1;
  int32_t reduced = 1;
  for (int i = 0; i < g->ndims; ++i) {
    g->dims[i] = whole->dims[i];
    if ((mask >> i) & 1) {
      reduced *= whole->dims[i];
    } else {
      g->num_kept *= whole->dims[i];
    }
  }
  g->num_whole = mcu_num_elements(whole);
  MCU_ENSURE_MODEL(reduced == num_reduced, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(g->num_kept == mcu_num_elements(kept), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* Flat index into `kept` of coordinates `idx` of `whole`: the kept ones in row-major order. */
static inline int32_t mcu_reduce_kept_offset(const mcu_reduce_t *g, const int32_t *idx) {
  int32_t offset = 0;
  for (int i = 0; i < g->ndims; ++i) {
    if (((g->mask >> i) & 1) == 0) {
      offset = offset * g->dims[i] + idx[i];
    }
  }
  return offset;
}

/* Advances `idx` to the next element of `whole` in row-major order. */
static inline void mcu_reduce_next(const mcu_reduce_t *g, int32_t *idx) {
  for (int i = g->ndims - 1; i >= 0; --i) {
    if (++idx[i] < g->dims[i]) {
      return;
    }
    idx[i] = 0;
  }
}

#endif
