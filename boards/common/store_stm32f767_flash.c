/* Checkpoint store of the NUCLEO-F767ZI (mcu/port.h): the two last 256 KB sectors of its 2 MB
 * flash in single-bank mode (the factory setting, nDBANK = 1), sector 10 at 0x0818 0000 and
 * sector 11 at 0x081C 0000 (RM0410, "Embedded flash memory", flash module organisation). The
 * board's linker region stops before them (board.toml: flash 1.5 MB). Erase is a sector erase;
 * writes program words where source, destination and length allow, bytes otherwise (PSIZE x32
 * and x8 at 2.7-3.6 V); reads go through the data cache, so every erase and write invalidates
 * the lines it changed. The CPU stalls on instruction fetches while its bank is busy, which is
 * correct, only slow (a sector erase takes about a second).
 * Not yet run on hardware: built and size-checked only. */
#include <stdint.h>

#include "mcu/port.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define FLASH_KEYR REG(0x40023C04u)
#define FLASH_SR REG(0x40023C0Cu)
#define FLASH_CR REG(0x40023C10u)
#define SCB_DCIMVAC REG(0xE000EF5Cu) /* invalidate a data cache line by address */
#define SR_BSY (1u << 16)
#define SR_ERRORS 0xF2u /* OPERR, WRPERR, PGAERR, PGPERR, ERSERR */
#define CR_PG (1u << 0)
#define CR_SER (1u << 1)
#define CR_SNB_SHIFT 3u
#define CR_PSIZE_X8 (0u << 8)
#define CR_PSIZE_X32 (2u << 8)
#define CR_STRT (1u << 16)
#define CR_LOCK (1u << 31)
#define SLOT_BYTES (256u * 1024u)

static const uint32_t g_base[2] = {0x08180000u, 0x081C0000u};
static const uint32_t g_sector[2] = {10u, 11u};

static int wait_idle(void) {
  while (FLASH_SR & SR_BSY) {
  }
  uint32_t errors = FLASH_SR & SR_ERRORS;
  FLASH_SR = errors; /* write 1 to clear */
  return errors == 0 ? 0 : -1;
}

static void unlock(void) {
  if (FLASH_CR & CR_LOCK) {
    FLASH_KEYR = 0x45670123u;
    FLASH_KEYR = 0xCDEF89ABu;
  }
}

static void invalidate(uint32_t address, uint32_t bytes) {
  __asm volatile("dsb" ::: "memory");
  for (uint32_t line = address & ~31u; line < address + bytes; line += 32u) {
    SCB_DCIMVAC = line;
  }
  __asm volatile("dsb\n isb" ::: "memory");
}

uint32_t mcu_port_store_bytes(void) { return SLOT_BYTES; }

int mcu_port_store_erase(uint32_t slot) {
  if (slot > 1u) {
    return -1;
  }
  unlock();
  int rc = wait_idle();
  FLASH_CR = CR_SER | CR_PSIZE_X32 | (g_sector[slot] << CR_SNB_SHIFT);
  FLASH_CR |= CR_STRT;
  rc |= wait_idle();
  FLASH_CR = CR_LOCK;
  invalidate(g_base[slot], SLOT_BYTES);
  return rc;
}

int mcu_port_store_read(uint32_t slot, uint32_t offset, void *dst, uint32_t bytes) {
  if (slot > 1u || offset > SLOT_BYTES || bytes > SLOT_BYTES - offset) {
    return -1;
  }
  const volatile uint8_t *src = (const volatile uint8_t *)(g_base[slot] + offset);
  uint8_t *out = dst;
  for (uint32_t i = 0; i < bytes; ++i) {
    out[i] = src[i];
  }
  return 0;
}

int mcu_port_store_write(uint32_t slot, uint32_t offset, const void *src, uint32_t bytes) {
  if (slot > 1u || offset > SLOT_BYTES || bytes > SLOT_BYTES - offset) {
    return -1;
  }
  const uint8_t *in = src;
  uint32_t address = g_base[slot] + offset;
  unlock();
  int rc = wait_idle();
  for (uint32_t i = 0; rc == 0 && i < bytes;) {
    uint32_t at = address + i;
    if ((at & 3u) == 0 && bytes - i >= 4u) {
      uint32_t word = (uint32_t)in[i] | ((uint32_t)in[i + 1] << 8) | ((uint32_t)in[i + 2] << 16) |
                      ((uint32_t)in[i + 3] << 24);
      FLASH_CR = CR_PG | CR_PSIZE_X32;
      REG(at) = word;
      i += 4u;
    } else {
      FLASH_CR = CR_PG | CR_PSIZE_X8;
      *(volatile uint8_t *)at = in[i];
      i += 1u;
    }
    __asm volatile("dsb" ::: "memory");
    rc = wait_idle();
  }
  FLASH_CR = CR_LOCK;
  invalidate(address, bytes);
  return rc;
}
