/* Reading the planned allocator test's plans file (allocator_plans.h). */
#include "allocator_plans.h"

#include <string.h>

unsigned long failures;
const char *check_context = "";

static void die(const char *what) {
  fprintf(stderr, "FAIL plan %s: bad plans file: %s\n", check_context, what);
  exit(2);
}

static const char *const TABLES[NUM_TABLES] = {
    "buffer_bytes", "initial_offsets", "member_start",   "member_tensor", "member_inner",
    "born_start",   "born_buffer",     "dies_start",     "dies_buffer",   "move_start",
    "move_buffer",  "move_offset",     "scratch_buffer", "first",         "last",
    "output",       "expect",
};

void *alloc_exact(size_t bytes) {
  void *p = malloc(bytes);
  if (p == NULL && bytes > 0) {
    die("out of memory");
  }
  return p;
}

static uint32_t *as_u32(const plan_t *p, int t) {
  uint32_t *out = alloc_exact(p->count[t] * sizeof *out);
  for (uint32_t i = 0; i < p->count[t]; ++i) {
    out[i] = (uint32_t)p->table[t][i];
  }
  return out;
}

static int16_t *as_i16(const plan_t *p, int t) {
  int16_t *out = alloc_exact(p->count[t] * sizeof *out);
  for (uint32_t i = 0; i < p->count[t]; ++i) {
    out[i] = (int16_t)p->table[t][i];
  }
  return out;
}

static void read_table(FILE *f, plan_t *p, int t) {
  char name[32];
  unsigned long count;
  if (fscanf(f, "%31s %lu", name, &count) != 2 || strcmp(name, TABLES[t]) != 0) {
    die(TABLES[t]);
  }
  p->count[t] = (uint32_t)count;
  p->table[t] = alloc_exact(count * sizeof(int32_t));
  for (unsigned long i = 0; i < count; ++i) {
    long v;
    if (fscanf(f, "%ld", &v) != 1) {
      die(TABLES[t]);
    }
    p->table[t][i] = (int32_t)v;
  }
}

static void expect_count(const plan_t *p, int t, uint32_t n) {
  if (p->count[t] != n) {
    die(TABLES[t]);
  }
}

/* Every index the runtime follows must be in range, or the runtime's failure would be ours. */
static void check_indices(const plan_t *p, int t, uint32_t below) {
  for (uint32_t i = 0; i < p->count[t]; ++i) {
    if (p->table[t][i] < 0 || (uint32_t)p->table[t][i] >= below) {
      die(TABLES[t]);
    }
  }
}

static void check_shapes(const plan_t *p) {
  uint32_t nb = p->num_buffers, steps = p->ops + 1u;
  expect_count(p, T_BUFFER_BYTES, nb);
  expect_count(p, T_INITIAL_OFFSETS, nb);
  expect_count(p, T_MEMBER_START, nb + 1u);
  expect_count(p, T_MEMBER_TENSOR, p->table[T_MEMBER_START][nb]);
  expect_count(p, T_MEMBER_INNER, p->table[T_MEMBER_START][nb]);
  expect_count(p, T_BORN_START, steps + 1u);
  expect_count(p, T_BORN_BUFFER, p->table[T_BORN_START][steps]);
  expect_count(p, T_DIES_START, steps + 1u);
  expect_count(p, T_DIES_BUFFER, p->table[T_DIES_START][steps]);
  if (p->count[T_MOVE_START] < steps + 1u) {
    die("move_start");
  }
  expect_count(p, T_MOVE_BUFFER, p->table[T_MOVE_START][p->count[T_MOVE_START] - 1u]);
  expect_count(p, T_MOVE_OFFSET, p->count[T_MOVE_BUFFER]);
  expect_count(p, T_SCRATCH_BUFFER, p->ops);
  expect_count(p, T_FIRST, nb);
  expect_count(p, T_LAST, nb);
  expect_count(p, T_OUTPUT, nb);
  expect_count(p, T_EXPECT, steps * nb);
  check_indices(p, T_MEMBER_TENSOR, p->num_offsets);
  check_indices(p, T_BORN_BUFFER, nb);
  check_indices(p, T_DIES_BUFFER, nb);
  check_indices(p, T_MOVE_BUFFER, nb);
  for (uint32_t i = 0; i < p->ops; ++i) {
    if (p->table[T_SCRATCH_BUFFER][i] >= (int32_t)nb) {
      die("scratch_buffer");
    }
  }
}


int read_plan(FILE *f, plan_t *p) {
  unsigned long nb, ops, offsets, arena, moved;
  int got = fscanf(f, " plan %95s %lu %lu %lu %lu %lu", p->label, &nb, &ops, &offsets, &arena,
                   &moved);
  if (got == EOF) {
    return 0;
  }
  check_context = p->label;
  if (got != 6 || ops == 0 || nb > 32767u || offsets > 32767u) {
    die("plan header");
  }
  p->num_buffers = (uint32_t)nb;
  p->ops = (uint32_t)ops;
  p->num_offsets = (uint32_t)offsets;
  p->arena_bytes = (uint32_t)arena;
  p->moved_bytes = (uint32_t)moved;
  for (int t = 0; t < NUM_TABLES; ++t) {
    read_table(f, p, t);
  }
  check_shapes(p);
  p->buffer_bytes = as_u32(p, T_BUFFER_BYTES);
  p->initial_offsets = p->table[T_INITIAL_OFFSETS];
  p->member_start = as_u32(p, T_MEMBER_START);
  p->member_tensor = as_i16(p, T_MEMBER_TENSOR);
  p->member_inner = p->table[T_MEMBER_INNER];
  p->born_start = as_u32(p, T_BORN_START);
  p->born_buffer = as_i16(p, T_BORN_BUFFER);
  p->dies_start = as_u32(p, T_DIES_START);
  p->dies_buffer = as_i16(p, T_DIES_BUFFER);
  p->move_start = as_u32(p, T_MOVE_START);
  p->move_buffer = as_i16(p, T_MOVE_BUFFER);
  p->move_offset = p->table[T_MOVE_OFFSET];
  p->scratch_buffer = as_i16(p, T_SCRATCH_BUFFER);
  return 1;
}

void free_plan(plan_t *p) {
  void *typed[] = {p->buffer_bytes, p->member_start, p->member_tensor, p->born_start,
                   p->born_buffer,  p->dies_start,   p->dies_buffer,   p->move_start,
                   p->move_buffer,  p->scratch_buffer};
  for (size_t i = 0; i < sizeof typed / sizeof typed[0]; ++i) {
    free(typed[i]);
  }
  for (int t = 0; t < NUM_TABLES; ++t) {
    free(p->table[t]);
  }
}
