/* A QEMU TCG plugin (QEMU 7.2, plugin API version 1): the executed instruction mix of a firmware
 * on its twin, split into segments at each execution of one marker address, with data loads
 * counted by memory region. mcugen/link/instruction_mix.py builds it with the host compiler and
 * reads what it writes.
 *
 * Arguments (-plugin mix.so,marker=0x...,flash=LO-HI,out=PATH[,sram=LO-HI][,ext=LO-HI]
 * [,dcache=SETS:WAYS:LINE,cached=LO-HI]): `marker` starts a new segment each time the instruction
 * at that address executes (the runtime's clock function, called between operators in a profiled
 * invoke); `flash` is the address range whose loads are counted as flash reads, `sram` and `ext`
 * (each may repeat) those counted as on-chip SRAM and external memory reads; `dcache` simulates a
 * set-associative, least-recently-used data cache of SETS x WAYS lines of LINE bytes that the loads
 * from `flash` and from the `cached` ranges go through, and counts the flash lines it fills; `out`
 * is the file written when QEMU exits (SIGTERM or the firmware's exit).
 *
 * Method: when QEMU translates a block, each instruction is classed once by its mnemonic (the
 * first word of QEMU's own disassembly) and the block's class counts are kept with it; each
 * execution of the block adds them to the current segment. Load instructions also get a memory
 * callback that tells flash, SRAM and external reads apart (one count per access: an LDM of four
 * registers counts four) and feeds the cache model. A block left early (an exception in its middle)
 * is counted whole: the error is at most one block per exception, and the firmware takes none
 * while it runs operators.
 *
 * The API below is declared here (names and signatures of QEMU's include/qemu/qemu-plugin.h,
 * which Debian does not package); QEMU checks `qemu_plugin_version` when it loads the plugin. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
typedef struct {
  const char *target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { CB_NO_REGS, CB_R_REGS, CB_RW_REGS };
enum qemu_plugin_mem_rw { MEM_R = 1, MEM_W, MEM_RW };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                         void *userdata);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* Instruction classes; CLASS_NAMES in instruction_mix.py lists them in this order. */
enum {
  C_ALU,      /* data processing, moves, compares, extends, SIMD adds, saturation */
  C_MUL,      /* multiplies without accumulate (MUL, SMULxy, SMMUL, SMULL, UMULL) */
  C_MAC,      /* multiply-accumulates (MLA, SMLAxy, SMLAD, SMMLA, SMLAL, UMLAL) */
  C_DIV,      /* SDIV, UDIV */
  C_LOAD,     /* single loads (LDR, LDRB, LDRH, LDRSB, LDRSH, LDREX) */
  C_LOAD2,    /* LDRD */
  C_LOADM,    /* LDM, POP (one instruction, several words) */
  C_STORE,    /* single stores */
  C_STORE2,   /* STRD */
  C_STOREM,   /* STM, PUSH */
  C_BRANCH,   /* B, BL, BX, BLX, CBZ, CBNZ, TBB, TBH */
  C_IT,       /* IT blocks' IT instruction */
  C_FP,       /* floating point and its loads and stores (V...) */
  C_OTHER,    /* anything else (system, barriers, hints) */
  C_PIPED,    /* of the single loads and stores, those right after a single load or store in
                 the same block (the TRM: neighbouring ones pipeline to one cycle) */
  NUM_CLASSES /* then the extra counts below (EXTRA in instruction_mix.py, in this order) */
};
enum {
  X_FLASH_LOADS, /* loads from flash */
  X_OTHER_LOADS, /* loads from anywhere else (SRAM, external memory, peripherals) */
  X_TAKEN,       /* taken control transfers */
  X_SRAM_LOADS,  /* of the other loads, those from the `sram` ranges */
  X_EXT_LOADS,   /* of the other loads, those from the `ext` ranges */
  X_FLASH_FILLS, /* flash lines the data cache model filled (0 without `dcache`) */
  NUM_EXTRA
};
#define NUM_COUNTS (NUM_CLASSES + NUM_EXTRA)
#define MAX_SEGMENTS 65536
#define MAX_RANGES 8
#define MAX_SETS 4096
#define MAX_WAYS 16

typedef struct {
  uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
  int n;
} ranges_t;

static uint64_t g_counts[MAX_SEGMENTS][NUM_COUNTS];
static uint32_t g_segment;
static uint64_t g_marker = UINT64_MAX;
static uint64_t g_flash_lo, g_flash_hi;
static ranges_t g_sram, g_ext, g_cached;
static char g_out[1024];

/* The data cache model: tags (line address + 1, 0 = empty) and last-use stamps per set and way. */
static uint64_t g_tags[MAX_SETS][MAX_WAYS], g_used[MAX_SETS][MAX_WAYS], g_clock;
static uint64_t g_sets, g_ways, g_line;

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool in_ranges(const ranges_t *r, uint64_t a) {
  for (int i = 0; i < r->n; ++i) {
    if (a >= r->lo[i] && a < r->hi[i]) return true;
  }
  return false;
}

/* "LO-HI" into a range; false when the text is not one or the list is full. */
static bool add_range(ranges_t *r, const char *text) {
  char *end = NULL;
  if (r->n >= MAX_RANGES) return false;
  r->lo[r->n] = strtoull(text, &end, 0);
  if (end == NULL || *end != '-') return false;
  r->hi[r->n] = strtoull(end + 1, NULL, 0);
  r->n += 1;
  return true;
}

/* One read through the cache model: true when it missed (the line was filled). */
static bool cache_read(uint64_t vaddr) {
  uint64_t line = vaddr / g_line;
  uint64_t set = line % g_sets;
  uint64_t victim = 0;
  g_clock += 1;
  for (uint64_t w = 0; w < g_ways; ++w) {
    if (g_tags[set][w] == line + 1) {
      g_used[set][w] = g_clock;
      return false;
    }
    if (g_used[set][w] < g_used[set][victim]) victim = w;
  }
  g_tags[set][victim] = line + 1;
  g_used[set][victim] = g_clock;
  return true;
}

static int class_of(const char *m) {
  if (m[0] == 'v') return C_FP;
  if (starts(m, "it")) return C_IT;
  if (starts(m, "ldrd")) return C_LOAD2;
  if (starts(m, "ldm") || starts(m, "pop")) return C_LOADM;
  if (starts(m, "ldr")) return C_LOAD;
  if (starts(m, "strd")) return C_STORE2;
  if (starts(m, "stm") || starts(m, "push")) return C_STOREM;
  if (starts(m, "str")) return C_STORE;
  if (starts(m, "sdiv") || starts(m, "udiv")) return C_DIV;
  if (starts(m, "mla") || starts(m, "mls") || starts(m, "smla") || starts(m, "smlsd") ||
      starts(m, "smmla") || starts(m, "smmls") || starts(m, "umlal") || starts(m, "umaal"))
    return C_MAC;
  if (starts(m, "mul") || starts(m, "smul") || starts(m, "smmul") || starts(m, "umull") ||
      starts(m, "smuad") || starts(m, "smusd"))
    return C_MUL;
  if (m[0] == 'b' || starts(m, "cbz") || starts(m, "cbnz") || starts(m, "tbb") ||
      starts(m, "tbh"))
    return starts(m, "bic") || starts(m, "bfi") || starts(m, "bfc") ? C_ALU : C_BRANCH;
  if (starts(m, "dmb") || starts(m, "dsb") || starts(m, "isb") || starts(m, "svc") ||
      starts(m, "wfi") || starts(m, "wfe") || starts(m, "cps") || starts(m, "mrs") ||
      starts(m, "msr") || starts(m, "nop") || starts(m, "bkpt"))
    return C_OTHER;
  return C_ALU;
}

/* The mnemonic of QEMU's disassembly ("ldr.w r3, [r2], #4" -> "ldr"). */
static int class_of_insn(const struct qemu_plugin_insn *insn) {
  char *text = qemu_plugin_insn_disas(insn);
  char m[16] = {0};
  if (text != NULL) {
    size_t i = 0;
    while (text[i] != '\0' && text[i] != ' ' && text[i] != '.' && i + 1 < sizeof m) {
      m[i] = text[i];
      ++i;
    }
    free(text);
  }
  return class_of(m);
}

typedef struct {
  uint16_t counts[NUM_CLASSES];
  uint64_t start, end; /* the block's first address and the address after its last insn */
} block_t;

static const block_t *g_previous;

/* A block that does not start where the previous one ended was reached by a taken branch (or a
 * call, a return, an exception). */
static void on_block(unsigned int vcpu, void *udata) {
  (void)vcpu;
  const block_t *b = udata;
  uint64_t *counts = g_counts[g_segment];
  for (int c = 0; c < NUM_CLASSES; ++c) counts[c] += b->counts[c];
  if (g_previous != NULL && g_previous->end != b->start) counts[NUM_CLASSES + X_TAKEN] += 1;
  g_previous = b;
}

static void on_marker(unsigned int vcpu, void *udata) {
  (void)vcpu;
  (void)udata;
  if (g_segment + 1 < MAX_SEGMENTS) ++g_segment;
}

static void on_load(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
  (void)vcpu;
  (void)udata;
  if (qemu_plugin_mem_is_store(info)) return;
  uint64_t *extra = g_counts[g_segment] + NUM_CLASSES;
  bool flash = vaddr >= g_flash_lo && vaddr < g_flash_hi;
  extra[flash ? X_FLASH_LOADS : X_OTHER_LOADS] += 1;
  if (!flash && in_ranges(&g_sram, vaddr)) extra[X_SRAM_LOADS] += 1;
  if (!flash && in_ranges(&g_ext, vaddr)) extra[X_EXT_LOADS] += 1;
  if (g_sets != 0 && (flash || in_ranges(&g_cached, vaddr)) && cache_read(vaddr) && flash) {
    extra[X_FLASH_FILLS] += 1;
  }
}

/* "SETS:WAYS:LINE" into the cache model; false when out of range. */
static bool set_cache(const char *text) {
  char *end = NULL;
  g_sets = strtoull(text, &end, 0);
  g_ways = end != NULL && *end == ':' ? strtoull(end + 1, &end, 0) : 0;
  g_line = end != NULL && *end == ':' ? strtoull(end + 1, NULL, 0) : 0;
  return g_sets >= 1 && g_sets <= MAX_SETS && g_ways >= 1 && g_ways <= MAX_WAYS && g_line >= 4;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  block_t *b = calloc(1, sizeof *b); /* kept: QEMU may run the block until it exits */
  if (b == NULL) return;
  size_t n = qemu_plugin_tb_n_insns(tb);
  int previous = C_OTHER;
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    int c = class_of_insn(insn);
    b->counts[c] += 1;
    bool single = c == C_LOAD || c == C_STORE;
    if (single && (previous == C_LOAD || previous == C_STORE)) b->counts[C_PIPED] += 1;
    previous = c;
    if (i == 0) b->start = qemu_plugin_insn_vaddr(insn);
    b->end = qemu_plugin_insn_vaddr(insn) + qemu_plugin_insn_size(insn);
    if (c == C_LOAD || c == C_LOAD2 || c == C_LOADM || c == C_FP) {
      /* MEM_RW, and stores skipped in the callback: measured on QEMU 7.2, a MEM_R filter
       * missed most loads */
      qemu_plugin_register_vcpu_mem_cb(insn, on_load, CB_NO_REGS, MEM_RW, NULL);
    }
    if (qemu_plugin_insn_vaddr(insn) == g_marker) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, CB_NO_REGS, NULL);
    }
  }
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, CB_NO_REGS, b);
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata) {
  (void)id;
  (void)udata;
  FILE *f = fopen(g_out, "w");
  if (f == NULL) return;
  for (uint32_t s = 0; s <= g_segment; ++s) {
    for (int c = 0; c < NUM_COUNTS; ++c) {
      fprintf(f, c ? " %llu" : "%llu", (unsigned long long)g_counts[s][c]);
    }
    fputc('\n', f);
  }
  fclose(f);
}

/* One of the memory arguments (sram=, ext=, cached=, dcache=); false when malformed. */
static bool memory_argument(const char *a) {
  if (starts(a, "sram=")) return add_range(&g_sram, a + 5);
  if (starts(a, "ext=")) return add_range(&g_ext, a + 4);
  if (starts(a, "cached=")) return add_range(&g_cached, a + 7);
  return set_cache(a + 7);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info, int argc,
                                                               char **argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    if (starts(a, "marker=")) {
      g_marker = strtoull(a + 7, NULL, 0);
    } else if (starts(a, "flash=")) {
      char *end = NULL;
      g_flash_lo = strtoull(a + 6, &end, 0);
      g_flash_hi = end != NULL && *end == '-' ? strtoull(end + 1, NULL, 0) : g_flash_lo;
    } else if (starts(a, "out=")) {
      snprintf(g_out, sizeof g_out, "%s", a + 4);
    } else if (starts(a, "sram=") || starts(a, "ext=") || starts(a, "cached=") ||
               starts(a, "dcache=")) {
      if (!memory_argument(a)) {
        fprintf(stderr, "mix plugin: bad argument %s\n", a);
        return -1;
      }
    } else {
      fprintf(stderr, "mix plugin: unknown argument %s\n", a);
      return -1;
    }
  }
  if (g_out[0] == '\0') {
    fprintf(stderr, "mix plugin: out=PATH is required\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
  return 0;
}
