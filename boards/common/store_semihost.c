/* Checkpoint store of the QEMU twins (mcu/port.h): slot k is the file mcugen-checkpoint-k.bin in
 * QEMU's working directory, through semihosting file calls (SYS_OPEN, SYS_SEEK, SYS_READ,
 * SYS_WRITE, SYS_CLOSE). Erasing truncates the file. Writes go out in 32-byte calls, as a flash
 * driver programs a few words at a time, so that a reset (QEMU killed) can land inside a save.
 *
 * Power cuts on purpose: while the file mcugen-store-cut.bin exists, it holds a count K (u32):
 * the twin exits (status 0x5C) in place of its (K+1)-th erase or write call, as a board whose
 * power fails there (tests/qemu/test_checkpoint_twin.py). */
#include <stdint.h>

#include "mcu/port.h"

#define SYS_OPEN 0x01u
#define SYS_CLOSE 0x02u
#define SYS_WRITE 0x05u
#define SYS_READ 0x06u
#define SYS_SEEK 0x0Au
#define MODE_RB 1u   /* "rb" */
#define MODE_RPB 3u  /* "r+b" */
#define MODE_WB 5u   /* "wb": create or truncate */
#define WRITE_CHUNK 32u

static const char *const g_names[3] = {"mcugen-checkpoint-0.bin", "mcugen-checkpoint-1.bin",
                                        "mcugen-store-cut.bin"};
#define CUT_FILE 2u
#define CUT_EXIT_STATUS 0x5C

static int32_t semihost(uint32_t op, const volatile uint32_t *args) {
  register uint32_t r0 __asm("r0") = op;
  register const volatile uint32_t *r1 __asm("r1") = args;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return (int32_t)r0;
}

static int32_t open_slot(uint32_t slot, uint32_t mode) {
  const char *name = g_names[slot < 3u ? slot : 0u];
  uint32_t len = 0;
  while (name[len] != '\0') {
    ++len;
  }
  volatile uint32_t args[3] = {(uint32_t)(uintptr_t)name, mode, len};
  return semihost(SYS_OPEN, args);
}

static void close_handle(int32_t h) {
  volatile uint32_t args[1] = {(uint32_t)h};
  (void)semihost(SYS_CLOSE, args);
}

static int seek(int32_t h, uint32_t offset) {
  volatile uint32_t args[2] = {(uint32_t)h, offset};
  return semihost(SYS_SEEK, args) == 0 ? 0 : -1;
}

/* Counts erase and write calls down in the cut file itself (no RAM of its own: the firmware's
 * RAM is the same with and without a store); exits where the count reaches zero. */
static void power_check(void) {
  int32_t h = open_slot(CUT_FILE, MODE_RB);
  if (h < 0) {
    return;
  }
  uint32_t count = 0;
  volatile uint32_t args[3] = {(uint32_t)h, (uint32_t)(uintptr_t)&count, 4u};
  int32_t unread = semihost(SYS_READ, args);
  close_handle(h);
  if (unread != 0) {
    return;
  }
  if (count == 0) {
    mcu_port_exit(CUT_EXIT_STATUS);
  }
  --count;
  h = open_slot(CUT_FILE, MODE_WB);
  if (h >= 0) {
    volatile uint32_t wargs[3] = {(uint32_t)h, (uint32_t)(uintptr_t)&count, 4u};
    (void)semihost(SYS_WRITE, wargs);
    close_handle(h);
  }
}

uint32_t mcu_port_store_bytes(void) { return 1u << 20; }

int mcu_port_store_erase(uint32_t slot) {
  power_check();
  int32_t h = open_slot(slot & 1u, MODE_WB);
  if (h < 0) {
    return -1;
  }
  close_handle(h);
  return 0;
}

int mcu_port_store_read(uint32_t slot, uint32_t offset, void *dst, uint32_t bytes) {
  int32_t h = open_slot(slot & 1u, MODE_RB);
  if (h < 0) {
    return -1;
  }
  int rc = seek(h, offset);
  if (rc == 0) {
    volatile uint32_t args[3] = {(uint32_t)h, (uint32_t)(uintptr_t)dst, bytes};
    rc = semihost(SYS_READ, args) == 0 ? 0 : -1; /* returns the bytes not read */
  }
  close_handle(h);
  return rc;
}

int mcu_port_store_write(uint32_t slot, uint32_t offset, const void *src, uint32_t bytes) {
  int32_t h = open_slot(slot & 1u, MODE_RPB);
  if (h < 0) {
    return -1;
  }
  int rc = seek(h, offset);
  const uint8_t *p = src;
  for (uint32_t at = 0; rc == 0 && at < bytes; at += WRITE_CHUNK) {
    uint32_t n = bytes - at < WRITE_CHUNK ? bytes - at : WRITE_CHUNK;
    volatile uint32_t args[3] = {(uint32_t)h, (uint32_t)(uintptr_t)(p + at), n};
    power_check();
    rc = semihost(SYS_WRITE, args) == 0 ? 0 : -1; /* returns the bytes not written */
  }
  close_handle(h);
  return rc;
}
