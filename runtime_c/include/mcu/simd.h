/* The Armv7E-M DSP instructions the optimised kernels (kernels/opt/) are written with, through
 * ACLE intrinsics when the compiler targets a core that has them (__ARM_FEATURE_DSP: Cortex-M4,
 * M7, M33, M55), else as plain C with the same results, so the same kernels run, bit for bit, on
 * the host and on cores without the extension. All arithmetic is on 32-bit words holding two
 * 16-bit lanes; sums wrap modulo 2^32 as the instructions do. */
#ifndef MCU_SIMD_H
#define MCU_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define MCU_SIMD_DSP 1
#else
#define MCU_SIMD_DSP 0
#endif

/* A 32-bit word from any address (the compiler emits one LDR where unaligned loads are allowed,
 * as on the Cortex-M4 and M7). */
static inline uint32_t mcu_load_u32(const void *p) {
  uint32_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

static inline void mcu_store_u32(void *p, uint32_t w) { memcpy(p, &w, sizeof w); }

/* Lanes of a word: low and high 16-bit halves, sign-extended. */
static inline int32_t mcu_lo16(uint32_t w) { return (int32_t)(int16_t)(w & 0xFFFFu); }
static inline int32_t mcu_hi16(uint32_t w) { return (int32_t)(int16_t)(w >> 16); }

/* SXTB16: bytes 0 and 2 of `w`, each sign-extended to a 16-bit lane. */
static inline uint32_t mcu_sxtb16(uint32_t w) {
#if MCU_SIMD_DSP
  return (uint32_t)__sxtb16((int32_t)w);
#else
  uint32_t lo = (uint32_t)(int32_t)(int8_t)(w & 0xFFu) & 0xFFFFu;
  uint32_t hi = (uint32_t)(int32_t)(int8_t)((w >> 16) & 0xFFu) & 0xFFFFu;
  return lo | (hi << 16);
#endif
}

/* SXTB16 with ROR #8: bytes 1 and 3 of `w`, each sign-extended to a 16-bit lane. */
static inline uint32_t mcu_sxtb16_ror8(uint32_t w) {
#if MCU_SIMD_DSP
  /* one instruction (SXTB16 with its rotate); GCC does not fold a separate ROR into it */
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
#else
  return mcu_sxtb16((w >> 8) | (w << 24));
#endif
}

/* SMLAD: acc + lo(a) * lo(b) + hi(a) * hi(b), modulo 2^32. */
static inline int32_t mcu_smlad(uint32_t a, uint32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  return __smlad((int32_t)a, (int32_t)b, acc);
#else
  uint32_t sum = (uint32_t)acc + (uint32_t)(mcu_lo16(a) * mcu_lo16(b));
  return (int32_t)(sum + (uint32_t)(mcu_hi16(a) * mcu_hi16(b)));
#endif
}

/* PKHBT: the low lane of `lo` and the low lane of `hi` in one word. */
static inline uint32_t mcu_pack16(int32_t lo, int32_t hi) {
  return ((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16);
}

/* SXTAB16: `acc2` plus bytes 0 and 2 of `w`, each sign-extended, lane by lane (16-bit lanes
 * wrap; an int8 value plus an offset in [-255, 255] never does). */
static inline uint32_t mcu_sxtab16(uint32_t acc2, uint32_t w) {
#if MCU_SIMD_DSP
  return (uint32_t)__sxtab16((int32_t)acc2, (int32_t)w);
#else
  uint32_t e = mcu_sxtb16(w);
  return mcu_pack16(mcu_lo16(acc2) + mcu_lo16(e), mcu_hi16(acc2) + mcu_hi16(e));
#endif
}

/* SXTAB16 with ROR #8: `acc2` plus bytes 1 and 3 of `w`, lane by lane. */
static inline uint32_t mcu_sxtab16_ror8(uint32_t acc2, uint32_t w) {
#if MCU_SIMD_DSP
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc2), "r"(w));
  return r;
#else
  return mcu_sxtab16(acc2, (w >> 8) | (w << 24));
#endif
}

/* SMLABB: acc + lo(a) * lo(b), modulo 2^32. */
static inline int32_t mcu_smlabb(uint32_t a, uint32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  return __smlabb((int32_t)a, (int32_t)b, acc);
#else
  return (int32_t)((uint32_t)acc + (uint32_t)(mcu_lo16(a) * mcu_lo16(b)));
#endif
}

/* SMLATT: acc + hi(a) * hi(b), modulo 2^32. */
static inline int32_t mcu_smlatt(uint32_t a, uint32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  return __smlatt((int32_t)a, (int32_t)b, acc);
#else
  return (int32_t)((uint32_t)acc + (uint32_t)(mcu_hi16(a) * mcu_hi16(b)));
#endif
}

/* SMMULR: the high word of a * b, rounded: (a * b + 2^31) >> 32 (floor). */
static inline int32_t mcu_smmulr(int32_t a, int32_t b) {
#if MCU_SIMD_DSP
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  int64_t p = (int64_t)a * (int64_t)b + ((int64_t)1 << 31);
  return (int32_t)(p >> 32); /* arithmetic shift: the floor, as the instruction */
#endif
}

/* SSAT #8 with ASR #1: floor(x / 2) clamped to [-128, 127]. */
static inline int32_t mcu_ssat8_asr1(int32_t x) {
#if MCU_SIMD_DSP
  int32_t r;
  __asm__("ssat %0, #8, %1, asr #1" : "=r"(r) : "r"(x));
  return r;
#else
  int32_t h = x >> 1;
  return h < -128 ? -128 : (h > 127 ? 127 : h);
#endif
}

/* SMLABT: acc + lo(a) * hi(b), modulo 2^32. */
static inline int32_t mcu_smlabt(uint32_t a, uint32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  return __smlabt((int32_t)a, (int32_t)b, acc);
#else
  return (int32_t)((uint32_t)acc + (uint32_t)(mcu_lo16(a) * mcu_hi16(b)));
#endif
}

/* SMLATB: acc + hi(a) * lo(b), modulo 2^32. */
static inline int32_t mcu_smlatb(uint32_t a, uint32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  return __smlatb((int32_t)a, (int32_t)b, acc);
#else
  return (int32_t)((uint32_t)acc + (uint32_t)(mcu_hi16(a) * mcu_lo16(b)));
#endif
}

/* PKHTB with ASR #16: the high lane of `hi` over the high lane of `lo` (moved to the low lane). */
static inline uint32_t mcu_pack16_hi(uint32_t lo, uint32_t hi) {
  return (hi & 0xFFFF0000u) | (lo >> 16);
}

/* SMMLAR: acc plus the high word of a * b, rounded: (acc * 2^32 + a * b + 2^31) >> 32 (floor),
 * modulo 2^32. */
static inline int32_t mcu_smmlar(int32_t a, int32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
#else
  return (int32_t)((uint32_t)acc + (uint32_t)mcu_smmulr(a, b));
#endif
}

/* SSAT #8: x clamped to [-128, 127]. */
static inline int32_t mcu_ssat8(int32_t x) {
#if MCU_SIMD_DSP
  return __ssat(x, 8);
#else
  return x < -128 ? -128 : (x > 127 ? 127 : x);
#endif
}

#endif
