/* The MLPerf Tiny (EEMBC EnergyRunner) device-under-test text protocol: commands end with '%',
 * replies are "m-..." or "e-[...]" lines ending in "\r\n", and every command ends with "m-ready".
 * The database buffer is the model's first input; results are the dequantized first output. */
#include <stdint.h>

#include "model.h"
#include "mcu/port.h"
#include "protocol.h"

#define MLPERF_MAX_COMMAND 80u

static char g_line[MLPERF_MAX_COMMAND + 1];
static uint32_t g_line_len;
static int g_line_overflow;
static uint32_t g_db_expected;
static uint32_t g_db_loaded;

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

static void lap(void) {
  uint64_t us = mcu_port_cycles() / (mcu_port_cycle_hz() / 1000000u);
  mcu_app_puts("m-lap-us-");
  put_u64_dec(us);
  mcu_app_puts("\r\n");
}

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
  (void)mcu_app_io_ptr(0, 0, &bytes);
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

static void cmd_db_data(const char *hex) {
  uint32_t bytes = 0;
  uint8_t *dst = mcu_app_io_ptr(0, 0, &bytes);
  for (uint32_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
    int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      char msg[] = "e-[Invalid hex digit 'xx']";
      msg[22] = hex[i];
      msg[23] = hex[i + 1];
      reply(msg);
      return;
    }
    if (g_db_loaded >= g_db_expected || dst == 0) {
      reply("e-[Too many bytes: use 'db load N' first]");
      return;
    }
    dst[g_db_loaded++] = (uint8_t)(hi * 16 + lo);
  }
  if (g_db_expected != 0u && g_db_loaded == g_db_expected) {
    reply("m-load-done");
  }
}

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
  uint64_t ticks = 0;
  mcu_app_puts("m-warmup-start-");
  put_u64_dec((uint64_t)w);
  mcu_app_puts("\r\n");
  int status = w > 0 ? mcu_app_invoke((uint32_t)w, &ticks, 0) : 0;
  reply("m-warmup-done");
  mcu_app_puts("m-infer-start-");
  put_u64_dec((uint64_t)n);
  mcu_app_puts("\r\n");
  lap();
  if (status == 0) {
    status = mcu_app_invoke((uint32_t)n, &ticks, 0);
  }
  lap();
  reply(status == 0 ? "m-infer-done" : "e-[Inference failed]");
}

static void cmd_results(void) {
  uint32_t bytes = 0;
  const uint8_t *out = mcu_app_io_ptr(1, 0, &bytes);
  const mcu_tensor_t *t = &mcu_model.tensors[mcu_model.outputs[0]];
  uint32_t count = (uint32_t)mcu_num_elements(t);
  mcu_app_puts("m-results-[");
  for (uint32_t i = 0; i < count && out != 0; ++i) {
    float v;
    if (t->type == MCU_FLOAT32) {
      v = ((const float *)(const void *)out)[i];
    } else if (t->type == MCU_INT8) {
      v = mcu_output_scales[0] * (float)((int32_t)((const int8_t *)out)[i] - mcu_output_zero_points[0]);
    } else {
      v = mcu_output_scales[0] * (float)((int32_t)out[i] - mcu_output_zero_points[0]);
    }
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
    lap();
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
  reply("m-timestamp-mode-performance");
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
