/* SignalRfft (int16), bit-exact with TFLM signal/src/rfft_int16.cc, which runs kissfft v130's
 * kiss_fftr with FIXED_POINT 16: every product of two Q15 values is rounded (+2^14, >> 15) and
 * truncated to int16, every sum or difference stored in an int16 wraps, each stage first divides
 * its inputs by its radix (times 32767 / radix, rounded), and the real-input split halves with an
 * arithmetic shift. kissfft recurses over the stages; the kernel runs the same butterflies stage by
 * stage from the innermost one, after placing the inputs where kissfft's leaves copy them
 * (`leaf_index`), which changes no arithmetic. */
#include "mcu/kernels/signal_rfft.h"

typedef struct {
  int16_t r;
  int16_t i;
} cpx_t;

#define Q15_MAX 32767

static inline int16_t q15_round(int32_t x) { return (int16_t)((x + (1 << 14)) >> 15); }

static inline int16_t q15_mul(int16_t a, int16_t b) { return q15_round((int32_t)a * b); }

static inline cpx_t cmul(cpx_t a, cpx_t b) {
  cpx_t m;
  m.r = q15_round((int32_t)a.r * b.r - (int32_t)a.i * b.i);
  m.i = q15_round((int32_t)a.r * b.i + (int32_t)a.i * b.r);
  return m;
}

static inline cpx_t cadd(cpx_t a, cpx_t b) {
  cpx_t s = {(int16_t)(a.r + b.r), (int16_t)(a.i + b.i)};
  return s;
}

static inline cpx_t csub(cpx_t a, cpx_t b) {
  cpx_t s = {(int16_t)(a.r - b.r), (int16_t)(a.i - b.i)};
  return s;
}

/* kissfft's C_FIXDIV: multiply by SAMP_MAX / radix, rounded. */
static inline cpx_t fixdiv(cpx_t c, int32_t radix) {
  int16_t k = (int16_t)(Q15_MAX / radix);
  cpx_t d = {q15_mul(c.r, k), q15_mul(c.i, k)};
  return d;
}

static inline cpx_t twiddle(const int16_t *tw, int32_t k) {
  cpx_t t = {tw[2 * k], tw[2 * k + 1]};
  return t;
}

static void radix2(cpx_t *f, int32_t fstride, const int16_t *tw, int32_t m) {
  for (int32_t k = 0; k < m; ++k) {
    cpx_t a = fixdiv(f[k], 2);
    cpx_t b = fixdiv(f[k + m], 2);
    cpx_t t = cmul(b, twiddle(tw, k * fstride));
    f[k + m] = csub(a, t);
    f[k] = cadd(a, t);
  }
}

static void radix3(cpx_t *f, int32_t fstride, const int16_t *tw, int32_t m) {
  cpx_t epi3 = twiddle(tw, fstride * m);
  for (int32_t k = 0; k < m; ++k) {
    cpx_t *f0 = &f[k], *f1 = &f[k + m], *f2 = &f[k + 2 * m];
    *f0 = fixdiv(*f0, 3);
    *f1 = fixdiv(*f1, 3);
    *f2 = fixdiv(*f2, 3);
    cpx_t s1 = cmul(*f1, twiddle(tw, k * fstride));
    cpx_t s2 = cmul(*f2, twiddle(tw, 2 * k * fstride));
    cpx_t s3 = cadd(s1, s2);
    cpx_t s0 = csub(s1, s2);
    f1->r = (int16_t)(f0->r - (s3.r >> 1));
    f1->i = (int16_t)(f0->i - (s3.i >> 1));
    s0.r = q15_mul(s0.r, epi3.i);
    s0.i = q15_mul(s0.i, epi3.i);
    *f0 = cadd(*f0, s3);
    f2->r = (int16_t)(f1->r + s0.i);
    f2->i = (int16_t)(f1->i - s0.r);
    f1->r = (int16_t)(f1->r - s0.i);
    f1->i = (int16_t)(f1->i + s0.r);
  }
}

static void radix4(cpx_t *f, int32_t fstride, const int16_t *tw, int32_t m) {
  for (int32_t k = 0; k < m; ++k) {
    cpx_t *f0 = &f[k], *f1 = &f[k + m], *f2 = &f[k + 2 * m], *f3 = &f[k + 3 * m];
    *f0 = fixdiv(*f0, 4);
    *f1 = fixdiv(*f1, 4);
    *f2 = fixdiv(*f2, 4);
    *f3 = fixdiv(*f3, 4);
    cpx_t s0 = cmul(*f1, twiddle(tw, k * fstride));
    cpx_t s1 = cmul(*f2, twiddle(tw, 2 * k * fstride));
    cpx_t s2 = cmul(*f3, twiddle(tw, 3 * k * fstride));
    cpx_t s5 = csub(*f0, s1);
    *f0 = cadd(*f0, s1);
    cpx_t s3 = cadd(s0, s2);
    cpx_t s4 = csub(s0, s2);
    *f2 = csub(*f0, s3);
    *f0 = cadd(*f0, s3);
    f1->r = (int16_t)(s5.r + s4.i);
    f1->i = (int16_t)(s5.i - s4.r);
    f3->r = (int16_t)(s5.r - s4.i);
    f3->i = (int16_t)(s5.i + s4.r);
  }
}

static void radix5(cpx_t *f, int32_t fstride, const int16_t *tw, int32_t m) {
  cpx_t ya = twiddle(tw, fstride * m);
  cpx_t yb = twiddle(tw, fstride * 2 * m);
  for (int32_t u = 0; u < m; ++u) {
    cpx_t *f0 = &f[u], *f1 = &f[u + m], *f2 = &f[u + 2 * m], *f3 = &f[u + 3 * m];
    cpx_t *f4 = &f[u + 4 * m];
    *f0 = fixdiv(*f0, 5);
    *f1 = fixdiv(*f1, 5);
    *f2 = fixdiv(*f2, 5);
    *f3 = fixdiv(*f3, 5);
    *f4 = fixdiv(*f4, 5);
    cpx_t s0 = *f0;
    cpx_t s1 = cmul(*f1, twiddle(tw, u * fstride));
    cpx_t s2 = cmul(*f2, twiddle(tw, 2 * u * fstride));
    cpx_t s3 = cmul(*f3, twiddle(tw, 3 * u * fstride));
    cpx_t s4 = cmul(*f4, twiddle(tw, 4 * u * fstride));
    cpx_t s7 = cadd(s1, s4);
    cpx_t s10 = csub(s1, s4);
    cpx_t s8 = cadd(s2, s3);
    cpx_t s9 = csub(s2, s3);
    f0->r = (int16_t)(f0->r + (s7.r + s8.r));
    f0->i = (int16_t)(f0->i + (s7.i + s8.i));
    cpx_t s5, s6, s11, s12;
    s5.r = (int16_t)(s0.r + q15_mul(s7.r, ya.r) + q15_mul(s8.r, yb.r));
    s5.i = (int16_t)(s0.i + q15_mul(s7.i, ya.r) + q15_mul(s8.i, yb.r));
    s6.r = (int16_t)(q15_mul(s10.i, ya.i) + q15_mul(s9.i, yb.i));
    s6.i = (int16_t)(-q15_mul(s10.r, ya.i) - q15_mul(s9.r, yb.i));
    *f1 = csub(s5, s6);
    *f4 = cadd(s5, s6);
    s11.r = (int16_t)(s0.r + q15_mul(s7.r, yb.r) + q15_mul(s8.r, ya.r));
    s11.i = (int16_t)(s0.i + q15_mul(s7.i, yb.r) + q15_mul(s8.i, ya.r));
    s12.r = (int16_t)(-q15_mul(s10.i, yb.i) + q15_mul(s9.i, ya.i));
    s12.i = (int16_t)(q15_mul(s10.r, yb.i) - q15_mul(s9.r, ya.i));
    *f2 = cadd(s11, s12);
    *f3 = csub(s11, s12);
  }
}

/* The complex FFT of the row `x` (input_length int16 values read as pairs, zero beyond) into
 * `f`. */
static void complex_fft(const mcu_signal_rfft_params_t *p, const int16_t *x, int32_t input_length,
                        cpx_t *f) {
  int32_t n = p->fft_length / 2;
  for (int32_t k = 0; k < n; ++k) {
    int32_t at = 2 * p->leaf_index[k];
    f[k].r = at < input_length ? x[at] : 0;
    f[k].i = at + 1 < input_length ? x[at + 1] : 0;
  }
  int32_t fstride = n;
  for (int32_t s = p->num_stages - 1; s >= 0; --s) {
    int32_t radix = p->stages[2 * s];
    int32_t m = p->stages[2 * s + 1];
    fstride /= radix;
    for (int32_t block = 0; block < fstride; ++block) {
      cpx_t *at = f + block * radix * m;
      switch (radix) {
        case 2: radix2(at, fstride, p->twiddles, m); break;
        case 3: radix3(at, fstride, p->twiddles, m); break;
        case 4: radix4(at, fstride, p->twiddles, m); break;
        default: radix5(at, fstride, p->twiddles, m); break;
      }
    }
  }
}

/* kiss_fftr's split of the half-length complex FFT `f` into the spectrum of the real input. */
static void real_split(const mcu_signal_rfft_params_t *p, const cpx_t *f, int16_t *y) {
  int32_t n = p->fft_length / 2;
  cpx_t dc = fixdiv(f[0], 2);
  y[0] = (int16_t)(dc.r + dc.i);
  y[1] = 0;
  y[2 * n] = (int16_t)(dc.r - dc.i);
  y[2 * n + 1] = 0;
  for (int32_t k = 1; k <= n / 2; ++k) {
    cpx_t fpk = fixdiv(f[k], 2);
    cpx_t mirror = {f[n - k].r, (int16_t)-f[n - k].i};
    cpx_t fpnk = fixdiv(mirror, 2);
    cpx_t f1k = cadd(fpk, fpnk);
    cpx_t tw = cmul(csub(fpk, fpnk), twiddle(p->super_twiddles, k - 1));
    y[2 * k] = (int16_t)((f1k.r + tw.r) >> 1);
    y[2 * k + 1] = (int16_t)((f1k.i + tw.i) >> 1);
    y[2 * (n - k)] = (int16_t)((f1k.r - tw.r) >> 1);
    y[2 * (n - k) + 1] = (int16_t)((tw.i - f1k.i) >> 1);
  }
}

mcu_status_t mcu_signal_rfft_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_rfft_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *xt = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *yt = mcu_output_tensor(ctx, node, 0);
  int32_t input_length = mcu_dim(xt, -1);
  int32_t rows = input_length > 0 ? mcu_num_elements(xt) / input_length : 0;
  MCU_ENSURE_MODEL(input_length <= p->fft_length && mcu_dim(yt, -1) == p->fft_length + 2 &&
                       mcu_num_elements(yt) == rows * (p->fft_length + 2),
                   MCU_ERR_BAD_MODEL);
  cpx_t *f = mcu_scratch(ctx, node);
  MCU_ENSURE_MODEL(f != NULL, MCU_ERR_BAD_MODEL);
  const int16_t *x = mcu_input(ctx, node, 0);
  int16_t *y = mcu_output(ctx, node, 0);
  for (int32_t row = 0; row < rows; ++row) {
    complex_fft(p, x + row * input_length, input_length, f);
    real_split(p, f, y + row * (p->fft_length + 2));
  }
  return MCU_OK;
}
