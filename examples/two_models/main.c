/* A bare-metal application with two models exported by `mcugen export` (docs/integrating.md):
 * a sensor fills a ring buffer, the main loop takes a keyword-spotting window and an anomaly
 * window from it, runs each model on its window from one shared arena, and prints the outputs.
 *
 * The models are libraries `kws` and `ad` (their headers kws.h and ad.h); in CI without the
 * MLPerf Tiny models, two small stand-ins are exported under the same names. The console and
 * the cycle counter are mcugen's board port here (boards/common); in your firmware, your HAL's
 * UART and timer. The "sensor" is a deterministic pseudo-random byte stream (xorshift32, seed
 * 1), so that tests/qemu/test_export_app.py can feed the same windows to TFLM. */
#include <stdint.h>
#include <string.h>

#include "ad.h"
#include "kws.h"

/* The board's console and cycle counter (mcugen's port, boards/common/; your HAL in yours). */
void mcu_port_init(void);
void mcu_port_putc(uint8_t c);
uint64_t mcu_port_cycles(void);

#ifndef APP_ROUNDS
#define APP_ROUNDS 3u
#endif
#define RING_BYTES 4096u /* a power of two, larger than either model's window */
#define MAX(a, b) ((a) > (b) ? (a) : (b))

_Static_assert(KWS_NUM_INPUTS == 1u && AD_NUM_INPUTS == 1u, "one input per model");
_Static_assert(KWS_INPUT0_BYTES <= RING_BYTES && AD_INPUT0_BYTES <= RING_BYTES, "ring too small");

/* One arena for both models: they run one after the other, each initialised before it runs. */
static uint8_t g_arena[MAX(KWS_ARENA_BYTES, AD_ARENA_BYTES)] __attribute__((aligned(16)));
static uint64_t g_kws_ticks[KWS_NUM_OPERATORS];

/* --- the sensor and its ring buffer (single producer, single consumer) --- */
static uint8_t g_ring[RING_BYTES];
static volatile uint32_t g_head; /* written by the producer only */
static volatile uint32_t g_tail; /* written by the consumer only */
static uint32_t g_noise = 1u;

static uint32_t ring_count(void) { return g_head - g_tail; }

/* What a sensor's interrupt or DMA callback would do: push up to `bytes` new samples. */
static void sensor_produce(uint32_t bytes) {
  for (uint32_t i = 0; i < bytes && ring_count() < RING_BYTES; ++i) {
    g_noise ^= g_noise << 13;
    g_noise ^= g_noise >> 17;
    g_noise ^= g_noise << 5;
    g_ring[g_head % RING_BYTES] = (uint8_t)(g_noise >> 24);
    g_head = g_head + 1u;
  }
}

/* Pop `bytes` samples into `dst` (the model's input tensor, in the arena); 0 if not enough yet. */
static int ring_pop(void *dst, uint32_t bytes) {
  if (ring_count() < bytes) {
    return 0;
  }
  uint8_t *out = dst;
  for (uint32_t i = 0; i < bytes; ++i) {
    out[i] = g_ring[(g_tail + i) % RING_BYTES];
  }
  g_tail = g_tail + bytes;
  return 1;
}

/* --- printing without stdio --- */
static void put_str(const char *s) {
  for (uint32_t i = 0; s[i] != '\0' && i < 256u; ++i) {
    mcu_port_putc((uint8_t)s[i]);
  }
}

static void put_uint(uint64_t v) {
  char digits[21];
  uint32_t n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0u && n < sizeof digits);
  while (n > 0u) {
    mcu_port_putc((uint8_t)digits[--n]);
  }
}

static void put_hex(const uint8_t *p, uint32_t bytes) {
  static const char hex[] = "0123456789abcdef";
  for (uint32_t i = 0; i < bytes; ++i) {
    mcu_port_putc((uint8_t)hex[p[i] >> 4]);
    mcu_port_putc((uint8_t)hex[p[i] & 15u]);
  }
}

static void report(const char *model, uint32_t round, const void *out, uint32_t bytes) {
  put_str("result model=");
  put_str(model);
  put_str(" round=");
  put_uint(round);
  put_str(" out=");
  put_hex(out, bytes);
  put_str("\n");
}

/* --- the two models --- */
static int run_kws(uint32_t round) {
  if (kws_init_with_arena(g_arena, sizeof g_arena) != KWS_OK) {
    return 1;
  }
  while (!ring_pop(kws_input(0), KWS_INPUT0_BYTES)) {
    sensor_produce(64u);
  }
  memset(g_kws_ticks, 0, sizeof g_kws_ticks);
  if (kws_invoke_profiled(mcu_port_cycles, g_kws_ticks) != KWS_OK) { /* per-operator hook */
    return 2;
  }
  report("kws", round, kws_output(0), KWS_OUTPUT0_BYTES);
  return 0;
}

static int run_ad(uint32_t round) {
  if (ad_init_with_arena(g_arena, sizeof g_arena) != AD_OK) {
    return 1;
  }
  while (!ring_pop(ad_input(0), AD_INPUT0_BYTES)) {
    sensor_produce(64u);
  }
  if (ad_invoke() != AD_OK) {
    return 2;
  }
  report("ad", round, ad_output(0), AD_OUTPUT0_BYTES);
  return 0;
}

int main(void) {
  mcu_port_init();
  int status = 0;
  for (uint32_t round = 0; round < APP_ROUNDS && status == 0; ++round) {
    status = run_kws(round);
    status = status != 0 ? status : run_ad(round);
  }
  uint64_t kws_ticks = 0;
  for (uint32_t i = 0; i < KWS_NUM_OPERATORS; ++i) {
    kws_ticks += g_kws_ticks[i];
  }
  put_str("mcu-result status=");
  put_uint((uint64_t)status);
  put_str(" rounds=");
  put_uint(APP_ROUNDS);
  put_str(" arena=");
  put_uint(sizeof g_arena);
  put_str(" kws_ticks=");
  put_uint(kws_ticks);
  put_str("\n");
  return status;
}
