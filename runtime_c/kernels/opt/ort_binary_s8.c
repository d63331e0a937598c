/* ADD and MUL with onnxruntime's numerics (`--onnx-numerics ort`), optimised: the reference
 * kernels' (reference/ort_elementwise.c) element values, mcu_ort_add_value and
 * mcu_ort_mul_value (mcu/kernels/ort_elementwise.h), the same float operations in the same
 * order, so the floats rounded are theirs. Two things differ, neither in the result:
 * - the walk: an operand of the output's shape is read at the output's index, one of its
 *   trailing dimensions (a channel vector, a scalar: numpy broadcasting repeats it whole) at that
 *   index modulo its size, in runs of its size; the reference computes a broadcast offset for
 *   every element, which cost the ResNet's ADDs and MUL about 150 instructions an element on
 *   the F767 twin. Any other broadcast walks as the reference does.
 * - the rounding: mcu_ort_round_narrow (mcu/ort_requant.h: VRINTR on the M7, the 1.5 * 2^23
 *   shifter elsewhere), nearbyintf's result wherever |value| < 2^22; the build
 *   (mcugen/codegen/lower/ort_binary_opt.py) proved |value| < 2^21 for every operand pair. The
 *   clamp is on the integer, as the reference's, before the domain is taken off (the range
 *   moved by it), and MUL's domain is folded into its zero points: the same integers.
 * In place: output element i is written after both its operands are read, and only the operand
 * of the output's shape can share the output's bytes. */
#include "mcu/binary.h"
#include "mcu/kernels/ort_elementwise.h"
#include "mcu/ort_requant.h"

/* The period of operand `x` in the output's row-major order: its element count when its
 * dimensions, leading 1s aside, are the output's last ones (its element at output index i is
 * then i modulo that count), else 0. */
static int32_t period_of(const mcu_tensor_t *x, const mcu_tensor_t *y) {
  int32_t first = 0;
  while (first < x->ndims && x->dims[first] == 1) {
    ++first;
  }
  int32_t rest = x->ndims - first;
  if (rest > y->ndims) {
    return 0;
  }
  for (int32_t k = 0; k < rest; ++k) {
    if (x->dims[first + k] != y->dims[y->ndims - rest + k]) {
      return 0;
    }
  }
  return mcu_num_elements(x);
}

/* The loops' constants: `p` with MUL's domain folded into its zero points (x + 0 - (z - d) is
 * the integer x + d - z), and the activation range with the domain added, so that the clamp
 * comes before taking it off. */
typedef struct {
  mcu_ort_binary_params_t p;
  int32_t domain;
  int32_t lo;
  int32_t hi;
} consts_t;

static inline __attribute__((always_inline)) consts_t consts_of(const mcu_ort_binary_params_t *p,
                                                                int is_mul) {
  consts_t k = {*p, p->domain, p->act_min + p->domain, p->act_max + p->domain};
  if (is_mul) {
    k.p.zero_a -= p->domain;
    k.p.zero_b -= p->domain;
    k.p.domain = 0;
  }
  return k;
}

/* One output element: `is_mul` is a constant at each call, so each loop compiles for its own
 * operator. */
static inline __attribute__((always_inline)) int8_t one(const consts_t *k, int is_mul,
                                                         int32_t x1, int32_t x2) {
  float value = is_mul ? mcu_ort_mul_value(&k->p, x1, x2) : mcu_ort_add_value(&k->p, x1, x2);
  int32_t q = mcu_ort_round_narrow(value);
  q = q < k->lo ? k->lo : q;
  q = q > k->hi ? k->hi : q;
  return (int8_t)(q - k->domain);
}

/* y[i] from a[i] and b[i] (`cyclic` 0), a[i] and b[i % pb] (1) or a[i % pa] and b[i] (2), over
 * n elements, n a multiple of the cyclic operand's period `p`. */
static inline __attribute__((always_inline)) void walk(const mcu_ort_binary_params_t *p,
                                                       int is_mul, int cyclic, const int8_t *a,
                                                       const int8_t *b, int8_t *y, int32_t n,
                                                       int32_t period) {
  const consts_t k = consts_of(p, is_mul); /* in registers, not re-read after each store */
  if (cyclic == 0) {
    for (int32_t i = 0; i < n; ++i) {
      y[i] = one(&k, is_mul, a[i], b[i]);
    }
    return;
  }
  for (int32_t base = 0; base < n; base += period) {
    for (int32_t j = 0; j < period; ++j) {
      int32_t i = base + j;
      y[i] = cyclic == 1 ? one(&k, is_mul, a[i], b[j]) : one(&k, is_mul, a[j], b[i]);
    }
  }
}

static inline __attribute__((always_inline)) mcu_status_t run(const mcu_node_t *node,
                                                              mcu_context_t *ctx, int is_mul) {
  const mcu_ort_binary_params_t *p = node->params;
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  int32_t pa = period_of(s.a, s.y), pb = period_of(s.b, s.y);
  if (pa == n && pb == n) {
    walk(p, is_mul, 0, a, b, y, n, n);
  } else if (pa == n && pb > 0) {
    walk(p, is_mul, 1, a, b, y, n, pb);
  } else if (pb == n && pa > 0) {
    walk(p, is_mul, 2, a, b, y, n, pa);
  } else {
    const consts_t k = consts_of(p, is_mul);
    for (int32_t i = 0; i < n; ++i) {
      int32_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
      int32_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
      y[i] = one(&k, is_mul, x1, x2);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_add_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  return run(node, ctx, 0);
}

mcu_status_t mcu_mul_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  return run(node, ctx, 1);
}
