/* ADD int8 over same-shape operands, bit-exact with reference/add.c (mcu_add_int8), in about
 * a dozen instructions per element. Safe in place: each element is read before it is written,
 * and only its own index is written.
 *
 * TFLM rescales each input, (x + offset) << 20 through SaturatingRoundingDoublingHighMul and
 * RoundingDivideByPOT: a function of the 256 values of x, which the build evaluates into a
 * table per input, stored doubled (mcugen/codegen/lower/opt_add.py). The sum of the two rescaled
 * inputs s is then rescaled to the output. SaturatingRoundingDoublingHighMul(s, m) is
 * floor((s * m + 2^30) / 2^31) (mcu/requant.h), which is SMMULR(2s, m) =
 * floor((2s * m + 2^31) / 2^32), exact when 2s fits in int32: the tables hold 2 * scaled, so
 * their sum is 2s directly; the build checks the bound. RoundingDivideByPOT(x, e) for e >= 1
 * rounds half away from zero: floor((x + 2^(e-1) - [x < 0]) / 2^e). The kernel subtracts
 * [s < 0] (s >> 31) instead: the same unless s < 0 and x = 0, where the low bits of x are 0,
 * not the half that the term decides. The output offset times 2^e joins the rounding constant
 * (the floor of a sum with a multiple of 2^e is the floor plus that multiple), and SMMLAR adds
 * it for free: the build checks e >= 1 and that no sum leaves int32. Per element: two loads of
 * the inputs, two of the tables, two adds, SMMLAR, a shift, SSAT and a store. The output may be
 * a concatenation's channel slice (the node's out_stride): one run per pixel then. */
#include "mcu/kernels/add.h"

#include "mcu/quant.h"
#include "mcu/simd.h"

typedef struct {
  const int32_t *t1; /* 2 * scaled input 1, indexed by x in [-128, 127] */
  const int32_t *t2;
  int32_t multiplier;
  int32_t right;    /* -output_shift, >= 1 */
  int32_t constant; /* 2^(right - 1) + output_offset * 2^right */
} rescale_t;

/* (x + constant - [s < 0]) >> right with x = SMMULR(s, multiplier), s the doubled sum; SMMLAR
 * adds its accumulator to the rounded high word exactly. */
static inline __attribute__((always_inline)) int32_t rescaled(rescale_t r, int32_t a,
                                                              int32_t b) {
  int32_t s = r.t1[a] + r.t2[b];
  int32_t c = r.constant + (s >> 31);
#if MCU_SIMD_DSP
  int32_t x;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(x) : "r"(s), "r"(r.multiplier), "r"(c));
  return x >> r.right;
#else
  return (mcu_smmulr(s, r.multiplier) + c) >> r.right;
#endif
}

/* The activation range is all of int8 (no activation, or a ReLU whose output zero point is
 * -128): two elements a pass, both read before either is written, then the last one. The DSP
 * build runs the pass in assembly: 22 instructions for two elements (GCC's own takes 29, moving
 * pointers between registers). */
static void add_full(const rescale_t *rp, const int8_t *a, const int8_t *b, int8_t *y,
                     int32_t n) {
  rescale_t r = *rp;
  const int8_t *end = a + (n & ~1);
#if MCU_SIMD_DSP
  if (a != end) {
    int32_t a0, a1, b0, b1;
    __asm__ volatile(
        "1:\n\t"
        "ldrsb %[a1], [%[a], #1]\n\t"
        "ldrsb %[a0], [%[a]], #2\n\t"
        "ldrsb %[b1], [%[b], #1]\n\t"
        "ldrsb %[b0], [%[b]], #2\n\t"
        "ldr %[a0], [%[t1], %[a0], lsl #2]\n\t"
        "ldr %[b0], [%[t2], %[b0], lsl #2]\n\t"
        "ldr %[a1], [%[t1], %[a1], lsl #2]\n\t"
        "ldr %[b1], [%[t2], %[b1], lsl #2]\n\t"
        "add %[a0], %[a0], %[b0]\n\t"
        "add %[a1], %[a1], %[b1]\n\t"
        "add %[b0], %[c], %[a0], asr #31\n\t"
        "add %[b1], %[c], %[a1], asr #31\n\t"
        "smmlar %[a0], %[a0], %[m], %[b0]\n\t"
        "smmlar %[a1], %[a1], %[m], %[b1]\n\t"
        "asr %[a0], %[a0], %[e]\n\t"
        "asr %[a1], %[a1], %[e]\n\t"
        "ssat %[a0], #8, %[a0]\n\t"
        "ssat %[a1], #8, %[a1]\n\t"
        "strb %[a1], [%[y], #1]\n\t"
        "strb %[a0], [%[y]], #2\n\t"
        "cmp %[a], %[end]\n\t"
        "bne 1b"
        : [a] "+r"(a), [b] "+r"(b), [y] "+r"(y), [a0] "=&r"(a0), [a1] "=&r"(a1),
          [b0] "=&r"(b0), [b1] "=&r"(b1)
        : [end] "r"(end), [t1] "r"(r.t1), [t2] "r"(r.t2), [m] "r"(r.multiplier),
          [c] "r"(r.constant), [e] "r"(r.right)
        : "cc", "memory");
  }
#else
  while (a != end) {
    int32_t a0 = a[0], a1 = a[1], b0 = b[0], b1 = b[1];
    int32_t v0 = rescaled(r, a0, b0);
    int32_t v1 = rescaled(r, a1, b1);
    y[0] = (int8_t)mcu_ssat8(v0);
    y[1] = (int8_t)mcu_ssat8(v1);
    a += 2;
    b += 2;
    y += 2;
  }
#endif
  if (n & 1) {
    y[0] = (int8_t)mcu_ssat8(rescaled(r, a[0], b[0]));
  }
}

/* Any other activation range. */
static void add_clamped(const rescale_t *rp, const int8_t *a, const int8_t *b, int8_t *y,
                        int32_t n, int32_t lo, int32_t hi) {
  rescale_t r = *rp;
  for (int32_t i = 0; i < n; ++i) {
    y[i] = (int8_t)mcu_clamp_i32(rescaled(r, a[i], b[i]), lo, hi);
  }
}

mcu_status_t mcu_add_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_s8_table_params_t *p = node->params;
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  int32_t right = -p->output_shift;
  MCU_ENSURE_MODEL(right >= 1 && right <= 30, MCU_ERR_BAD_MODEL);
  rescale_t r = {p->table1 + 128, p->table2 + 128, p->output_multiplier, right,
                 ((int32_t)1 << (right - 1)) + p->output_offset * ((int32_t)1 << right)};
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  int32_t n = mcu_num_elements(out);
  int32_t c = out->ndims > 0 ? mcu_dim(out, -1) : n;
  int32_t stride = mcu_output_stride(node, c);
  /* dense: one run of all elements; a channel slice: a run per pixel, `stride` apart */
  int32_t run = stride == c ? n : c;
  if (p->act_min == -128 && p->act_max == 127) {
    for (int32_t i = 0; i < n; i += run, y += stride) {
      add_full(&r, a + i, b + i, y, run);
    }
  } else {
    for (int32_t i = 0; i < n; i += run, y += stride) {
      add_clamped(&r, a + i, b + i, y, run, p->act_min, p->act_max);
    }
  }
  return MCU_OK;
}
