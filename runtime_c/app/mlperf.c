/* The MLPerf Tiny (EEMBC EnergyRunner) device-under-test text protocol: commands end with '%',
 * replies are "m-..." or "e-[...]" lines ending in "\r\n", and every command ends with "m-ready".
 * When the plan keeps the model's first input intact through an inference (MCU_MODEL_INPUT0_KEPT),
 * `db` writes the sample straight into the input tensor in the arena. Otherwise the arena reuses
 * the input's bytes once consumed, so a database buffer holds the sample and it is copied into the
 * input tensor before every inference; the planner picks whichever takes less RAM (a plan that
 * pages to an external RAM puts that buffer there: MCU_MODEL_INPUT0_PLACEMENT). Results are the
 * dequantized first output.
 *
 * Energy builds (MCU_MLPERF_ENERGY) run EEMBC's energy mode: the banner says
 * m-timestamp-mode-energy, the console runs at 9600 baud (the port's MCU_CONSOLE_BAUD), and a
 * timestamp is a falling edge on the board's timestamp pin (mcu_port_timestamp_pin) instead of an
 * m-lap-us line, as EEMBC's reference th_timestamp() does: one at the start and one at the end of
 * the timed loop of `infer`, and one per `timestamp` command. The power monitor integrates the
 * current between the edges. */
#include <stdint.h>

#include "model.h"
#include "mcu/port.h"
#include "protocol.h"

#define MLPERF_MAX_COMMAND 80u

static char g_line[MLPERF_MAX_COMMAND + 1];
static uint32_t g_line_len;
static int g_line_overflow;
#if !MCU_MODEL_INPUT0_KEPT
/* Rounded up to 16 bytes, so the RAM the planner counts for it (mcugen/plan/fit.py) is exact. */
static uint8_t g_db[MCU_MODEL_INPUT0_BYTES > 0u ? (MCU_MODEL_INPUT0_BYTES + 15u) & ~15u : 16u]
    MCU_MODEL_INPUT0_PLACEMENT;
#endif
static uint32_t g_db_expected;
static uint32_t g_db_loaded;
static uint64_t g_ticks_before_restart;

static void put_u64_dec(uint64_t v) {
  char buf[21];
  int n = 0;
  do {
    buf[n++] = (char)('0' + (int)(v % 10u));
    v /= 10u;
  } while (v != 0u && n < 20);
  while (n > 0) {
    mcu_port_putc((uint8_t)buf[--n]);
  }
}

/* value with three decimals, rounded half away from zero */
static void put_fixed3(float v) {
  if (v != v) {
    mcu_app_puts("nan");
    return;
  }
  if (v < 0.0f) {
    mcu_port_putc('-');
    v = -v;
  }
  if (v > 1e15f) {
    mcu_app_puts("inf");
    return;
  }
  uint64_t milli = (uint64_t)(v * 1000.0f + 0.5f);
  put_u64_dec(milli / 1000u);
  mcu_port_putc('.');
  uint32_t frac = (uint32_t)(milli % 1000u);
  mcu_port_putc((uint8_t)('0' + frac / 100u));
  mcu_port_putc((uint8_t)('0' + (frac / 10u) % 10u));
  mcu_port_putc((uint8_t)('0' + frac % 10u));
}

static void reply(const char *s) {
  mcu_app_puts(s);
  mcu_app_puts("\r\n");
}

/* Ticks since boot. mcu_app_invoke() restarts the port's counter (so that binary-protocol counts
 * repeat exactly), so the ticks counted before each restart are kept in g_ticks_before_restart. */
static uint64_t now_ticks(void) { return g_ticks_before_restart + mcu_port_cycles(); }

#if MCU_MODEL_INPUT0_KEPT
static void restore_input(void) {} /* the input is still there */

static void store_byte(uint32_t i, uint8_t value) {
  uint32_t bytes = 0;
  uint8_t *dst = mcu_app_io_ptr(0, 0, &bytes);
  if (dst != 0 && i < bytes) {
    dst[i] = value;
  }
}
#else
/* A completely loaded database replaces the input before each inference. */
static void restore_input(void) {
  uint32_t bytes = 0;
  uint8_t *dst = mcu_app_io_ptr(0, 0, &bytes);
  if (dst == 0 || g_db_expected == 0u || g_db_loaded != g_db_expected || bytes != g_db_expected) {
    return;
  }
  for (uint32_t i = 0; i < bytes; ++i) {
    dst[i] = g_db[i];
  }
}

static void store_byte(uint32_t i, uint8_t value) { g_db[i] = value; }
#endif

/* `count` inferences, each on the loaded sample. The time line stops while the input is restored
 * (the counter is read before the copy and restarted at zero by mcu_app_invoke after it), so the
 * laps measure inferences only, as the binary protocol's counts do. */
static int invoke(uint32_t count) {
  int status = 0;
  for (uint32_t k = 0; k < count && status == 0; ++k) {
    uint64_t ticks = 0;
    g_ticks_before_restart += mcu_port_cycles();
    restore_input();
    status = mcu_app_invoke(1u, &ticks, 0);
  }
  return status;
}

#if MCU_MLPERF_ENERGY
#define TIMESTAMP_MODE "m-timestamp-mode-energy"
static uint64_t timestamp(void) {
  mcu_port_timestamp_pin();
  return now_ticks();
}
static void print_lap(uint64_t ticks) { (void)ticks; } /* the edge was the timestamp */
#else
#define TIMESTAMP_MODE "m-timestamp-mode-performance"
static uint64_t timestamp(void) { return now_ticks(); }
static void print_lap(uint64_t ticks) {
  uint32_t per_us = mcu_port_cycle_hz() / 1000000u;
  mcu_app_puts("m-lap-us-");
  put_u64_dec(ticks / (per_us > 0u ? per_us : 1u));
  mcu_app_puts("\r\n");
}
#endif

static int starts_with(const char *s, const char *prefix) {
  for (uint32_t i = 0; prefix[i] != '\0'; ++i) {
    if (s[i] != prefix[i]) {
      return 0;
    }
  }
  return 1;
}

/* Parses a decimal at *p, advancing it; -1 if none or too large. */
static int64_t parse_uint(const char **p) {
  const char *s = *p;
  while (*s == ' ') {
    ++s;
  }
  int64_t v = -1;
  for (int digits = 0; *s >= '0' && *s <= '9' && digits < 10; ++digits, ++s) {
    v = (v < 0 ? 0 : v * 10) + (*s - '0');
  }
  *p = s;
  return v;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void cmd_db_load(const char *arg) {
  const char *p = arg;
  int64_t n = parse_uint(&p);
  uint32_t bytes = 0;
  if (mcu_app_io_ptr(0, 0, &bytes) == 0 || bytes != MCU_MODEL_INPUT0_BYTES) {
    bytes = 0u;
  }
  if (n < 0) {
    reply("e-[Command 'db load' requires the # of bytes]");
    return;
  }
  if ((uint64_t)n != bytes) {
    mcu_app_puts("e-[Model input is ");
    put_u64_dec(bytes);
    reply(" bytes]");
    return;
  }
  g_db_expected = (uint32_t)n;
  g_db_loaded = 0;
  mcu_app_puts("m-[Expecting ");
  put_u64_dec((uint64_t)n);
  reply(" bytes]");
}

/* One line of hex pairs, checked whole before any byte is stored: a bad line loads nothing. */
static void cmd_db_data(const char *hex) {
  uint32_t len = 0;
  while (hex[len] != '\0' && len < MLPERF_MAX_COMMAND) {
    ++len;
  }
  if (len % 2u != 0u) {
    reply("e-[Insufficient number of hex digits]");
    return;
  }
  for (uint32_t i = 0; i < len; i += 2u) {
    if (hex_value(hex[i]) < 0 || hex_value(hex[i + 1u]) < 0) {
      char msg[] = "e-[Invalid hex digit 'xx']";
      msg[22] = hex[i];
      msg[23] = hex[i + 1u];
      reply(msg);
      return;
    }
  }
  if (g_db_loaded + len / 2u > g_db_expected) {
    reply("e-[Too many bytes: use 'db load N' first]");
    return;
  }
  for (uint32_t i = 0; i < len; i += 2u) {
    store_byte(g_db_loaded++, (uint8_t)(hex_value(hex[i]) * 16 + hex_value(hex[i + 1u])));
  }
  if (g_db_expected != 0u && g_db_loaded == g_db_expected) {
    reply("m-load-done");
  }
}

/* The two timestamps are taken right before and after the timed loop; the m-lap-us lines of
 * performance mode are printed after it, so the console's transmit time (about 2 ms a line at
 * 115200 baud) is not part of the interval. */
static void cmd_infer(const char *arg) {
  const char *p = arg;
  int64_t n = parse_uint(&p);
  int64_t w = parse_uint(&p);
  if (n <= 0) {
    reply("e-[Command 'infer' requires the # of inferences]");
    return;
  }
  if (w < 0) {
    w = 10;
  }
  mcu_app_puts("m-warmup-start-");
  put_u64_dec((uint64_t)w);
  mcu_app_puts("\r\n");
  int status = w > 0 ? invoke((uint32_t)w) : 0;
  reply("m-warmup-done");
  mcu_app_puts("m-infer-start-");
  put_u64_dec((uint64_t)n);
  mcu_app_puts("\r\n");
  uint64_t start = timestamp();
  if (status == 0) {
    status = invoke((uint32_t)n);
  }
  uint64_t end = timestamp();
  print_lap(start);
  print_lap(end);
  reply(status == 0 ? "m-infer-done" : "e-[Inference failed]");
}

/* Element i of the first output as a real number: dequantized with the output's scale and zero
 * point for integer types, as is for float32. Returns 0 for types the results line cannot carry. */
static int output_value(const mcu_tensor_t *t, const uint8_t *out, uint32_t i, float *v) {
  int64_t q;
  switch (t->type) {
    case MCU_FLOAT32:
      *v = ((const float *)(const void *)out)[i];
      return 1;
    case MCU_INT8:
      q = ((const int8_t *)out)[i];
      break;
    case MCU_UINT8:
      q = out[i];
      break;
    case MCU_INT16:
      q = ((const int16_t *)(const void *)out)[i];
      break;
    case MCU_INT32:
      q = ((const int32_t *)(const void *)out)[i];
      break;
    default:
      return 0;
  }
  *v = mcu_output_scales[0] * (float)(q - (int64_t)mcu_output_zero_points[0]);
  return 1;
}

static void cmd_results(void) {
  uint32_t bytes = 0;
  const uint8_t *out = mcu_app_io_ptr(1, 0, &bytes);
  const mcu_tensor_t *t = &mcu_model.tensors[mcu_model.outputs[0]];
  uint32_t count = (uint32_t)mcu_num_elements(t);
  float v = 0.0f;
  if (out == 0 || (count > 0u && !output_value(t, out, 0, &v))) {
    reply("e-[Output type not supported by results]");
    return;
  }
  mcu_app_puts("m-results-[");
  for (uint32_t i = 0; i < count; ++i) {
    (void)output_value(t, out, i, &v);
    if (i > 0) {
      mcu_port_putc(',');
    }
    put_fixed3(v);
  }
  reply("]");
}

static void execute(const char *cmd) {
  if (starts_with(cmd, "name") && cmd[4] == '\0') {
    reply("m-name-dut-[mcugen]");
  } else if (starts_with(cmd, "profile") && cmd[7] == '\0') {
    reply("m-profile-[ULPMark for tinyML Firmware V0.0.1]");
    mcu_app_puts("m-model-[");
    mcu_app_puts(mcu_mlperf_model_id);
    reply("]");
  } else if (starts_with(cmd, "help") && cmd[4] == '\0') {
    reply("m-[commands: name profile timestamp db load N, db HEX, db print, infer N W, results]");
  } else if (starts_with(cmd, "timestamp") && cmd[9] == '\0') {
    print_lap(timestamp());
  } else if (starts_with(cmd, "db load")) {
    cmd_db_load(cmd + 7);
  } else if (starts_with(cmd, "db print") && cmd[8] == '\0') {
    mcu_app_puts("m-[loaded ");
    put_u64_dec(g_db_loaded);
    reply(" bytes]");
  } else if (starts_with(cmd, "db ")) {
    cmd_db_data(cmd + 3);
  } else if (starts_with(cmd, "infer")) {
    cmd_infer(cmd + 5);
  } else if (starts_with(cmd, "results") && cmd[7] == '\0') {
    cmd_results();
  } else {
    mcu_app_puts("e-[Unknown command: ");
    mcu_app_puts(cmd);
    reply("]");
  }
  reply("m-ready");
}

void mcu_mlperf_boot_banner(void) {
  reply(TIMESTAMP_MODE);
  reply("m-init-done");
  reply("m-ready");
}

void mcu_mlperf_feed(uint8_t c) {
  if (c == '%') {
    g_line[g_line_len] = '\0';
    if (g_line_overflow) {
      reply("e-[Command too long]");
      reply("m-ready");
    } else if (g_line_len > 0u) {
      execute(g_line);
    }
    g_line_len = 0;
    g_line_overflow = 0;
    return;
  }
  if (c == '\r' || c == '\n' || (g_line_len == 0u && c == ' ')) {
    return;
  }
  if (c < 0x20u || c > 0x7Eu) {
    return; /* binary noise is not part of any text command */
  }
  if (g_line_len < MLPERF_MAX_COMMAND) {
    g_line[g_line_len++] = (char)c;
  } else {
    g_line_overflow = 1;
  }
}
