/* Host unit test of the planned allocator (runtime_c/src/allocator.c with planned = 1, compiled
 * alongside), driven by tables that mcugen's planner wrote (tests/c/test_allocator_planned_c.py).
 *
 * Input: a text file of plans. Each plan is a header line
 *   plan LABEL NUM_BUFFERS OPERATORS NUM_OFFSETS ARENA_BYTES MOVED_BYTES
 * followed by one line per table, "NAME COUNT V1 V2 ...", in the order of TABLES below: the
 * mcu_dyn_plan_t arrays exactly as mcugen/codegen/viewmodel.py flattens them, then what the driver
 * needs to know: each buffer's first and last step, whether it holds a graph output, and the
 * offset the Python planner expects every buffer at during every step (-1: not live).
 *
 * For every plan the driver runs two invokes, calling mcu_dyn_reset, mcu_dyn_before and
 * mcu_dyn_after as runtime_c/src/interpreter.c does. The host writes the inputs at invoke start;
 * each operator writes the buffers born at its step. After every hook it checks, for the buffers
 * live then: offset equal to the planner's, inside the arena and 16-byte aligned; every member
 * tensor at its buffer's offset plus its inner offset; contents intact since they were written (so
 * every memmove preserved them); no two live buffers overlapping; the running operator's scratch
 * offset. After each invoke: inputs back at their initial offsets, outputs intact, and the bytes
 * the runtime counted as moved equal to the plan's moved_bytes and to the moves the driver saw.
 * The arena and every table are heap blocks of exactly their size, so AddressSanitizer catches any
 * access beyond them.
 * Usage: test_allocator_planned PLANS_FILE; prints one summary line and exits 0 when all checks
 * pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_plans.h"
#include "mcu/runtime.h"

#define ALIGN 16
#define INVOKES 2u


/* What the driver knows of one run: the contents each buffer must hold and where it last saw it. */
typedef struct {
  const plan_t *p;
  const mcu_context_t *ctx;
  uint8_t **shadow;   /* per buffer: the bytes last written into it */
  int32_t *seen;      /* per buffer: offset at the last check, -1 when not live then */
  int16_t *checked;   /* buffers of the current check */
  uint32_t num_checked;
  uint64_t moves_seen; /* bytes of the buffers whose offset changed between two checks */
  uint32_t write_count;
} run_t;

static int32_t first_step(const plan_t *p, uint32_t b) { return p->table[T_FIRST][b]; }
static int32_t last_step(const plan_t *p, uint32_t b) { return p->table[T_LAST][b]; }
static int32_t expected(const plan_t *p, uint32_t step, uint32_t b) {
  return p->table[T_EXPECT][step * p->num_buffers + b];
}

/* The host or an operator writes buffer b: fresh bytes, kept in its shadow copy. */
static void write_buffer(run_t *r, uint32_t b) {
  uint32_t bytes = r->p->buffer_bytes[b];
  r->write_count++;
  for (uint32_t i = 0; i < bytes; ++i) {
    r->shadow[b][i] = (uint8_t)((r->write_count * 2654435761u + b * 97u + i * 40503u) >> 9);
  }
  memcpy(r->ctx->arena + r->ctx->dyn->buffer_offsets[b], r->shadow[b], bytes);
}

/* One buffer the driver expects live at `want`: offset, arena bounds, alignment, members,
 * contents. */
static void check_buffer(run_t *r, uint32_t b, int32_t want, const char *where, uint32_t step) {
  const plan_t *p = r->p;
  const mcu_dyn_state_t *st = r->ctx->dyn;
  int32_t off = st->buffer_offsets[b];
  uint32_t bytes = p->buffer_bytes[b];
  CHECK(off == want, "%s step %u: buffer %u at %d, planner says %d", where, step, b, off, want);
  CHECK(off >= 0 && (uint32_t)off + bytes <= p->arena_bytes && off % ALIGN == 0,
        "%s step %u: buffer %u at %d (+%u) outside the %u-byte arena or unaligned", where, step, b,
        off, bytes, p->arena_bytes);
  for (uint32_t m = p->member_start[b]; m < p->member_start[b + 1u]; ++m) {
    int32_t t = p->member_tensor[m];
    CHECK(st->tensor_offsets[t] == off + p->member_inner[m],
          "%s step %u: tensor %d at %d, its buffer %u at %d + inner %d", where, step, t,
          st->tensor_offsets[t], b, off, p->member_inner[m]);
  }
  if (off >= 0 && (uint32_t)off + bytes <= p->arena_bytes) {
    CHECK(memcmp(r->ctx->arena + off, r->shadow[b], bytes) == 0,
          "%s step %u: buffer %u lost its contents", where, step, b);
  }
  if (r->seen[b] >= 0 && r->seen[b] != off) {
    r->moves_seen += bytes;
  }
  r->seen[b] = off;
  r->checked[r->num_checked++] = (int16_t)b;
}

static void check_no_overlap(const run_t *r, const char *where, uint32_t step) {
  const int32_t *offsets = r->ctx->dyn->buffer_offsets;
  for (uint32_t i = 0; i < r->num_checked; ++i) {
    int16_t a = r->checked[i];
    for (uint32_t j = i + 1u; j < r->num_checked; ++j) {
      int16_t b = r->checked[j];
      int overlap = offsets[a] < offsets[b] + (int32_t)r->p->buffer_bytes[b] &&
                    offsets[b] < offsets[a] + (int32_t)r->p->buffer_bytes[a];
      CHECK(!overlap, "%s step %u: live buffers %d and %d overlap", where, step, a, b);
    }
  }
}

/* Between operators (after = 0: while the operator of `step` runs; 1: once it returned), the
 * buffers live then, each where the planner put it for that step (planned mode moves nothing
 * after an operator). */
static void check_step(run_t *r, uint32_t step, int after) {
  const plan_t *p = r->p;
  const char *where = after ? "after" : "before";
  r->num_checked = 0;
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    int32_t first = first_step(p, b), last = last_step(p, b);
    int live = first <= (int32_t)step && (after ? (int32_t)step < last : (int32_t)step <= last);
    CHECK(!live || expected(p, step, b) >= 0, "planner has no offset for live buffer %u", b);
    if (live) {
      check_buffer(r, b, expected(p, step, b), where, step);
    } else {
      r->seen[b] = -1;
    }
  }
  check_no_overlap(r, where, step);
}

/* Invoke start (after the reset, or the last operator's hook): the inputs at their initial offsets,
 * which the host then writes. */
static void check_and_write_inputs(run_t *r) {
  const plan_t *p = r->p;
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    r->seen[b] = -1;
    if (first_step(p, b) == 0) {
      CHECK(r->ctx->dyn->buffer_offsets[b] == p->initial_offsets[b] &&
                p->initial_offsets[b] == expected(p, 0, b),
            "input buffer %u at %d at invoke start, initial offset %d", b,
            r->ctx->dyn->buffer_offsets[b], p->initial_offsets[b]);
      write_buffer(r, b);
      r->seen[b] = p->initial_offsets[b];
    }
  }
}

/* After the last operator's hook: what the host reads (outputs, and every other buffer live to the
 * end that is not an input) is intact where it was during the last operator. Inputs were checked
 * to be back at their initial offsets by check_and_write_inputs. */
static void check_invoke_end(run_t *r) {
  const plan_t *p = r->p;
  r->num_checked = 0;
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    int kept = last_step(p, b) == (int32_t)p->ops &&
               (first_step(p, b) > 0 || p->table[T_OUTPUT][b]);
    if (kept) {
      check_buffer(r, b, expected(p, p->ops, b), "end", p->ops);
    }
  }
  check_no_overlap(r, "end", p->ops);
}

static void run_invoke(run_t *r, mcu_context_t *ctx, uint32_t invoke) {
  const plan_t *p = r->p;
  check_and_write_inputs(r);
  r->moves_seen = 0;
  for (uint32_t pos = 0; pos < p->ops; ++pos) {
    uint32_t step = pos + 1u;
    mcu_dyn_before(ctx, pos);
    for (uint32_t b = 0; b < p->num_buffers; ++b) { /* the operator writes its new buffers */
      if (first_step(p, b) == (int32_t)step) {
        write_buffer(r, b);
      }
    }
    int16_t scratch = p->scratch_buffer[pos];
    CHECK(ctx->scratch_offset == (scratch < 0 ? -1 : ctx->dyn->buffer_offsets[scratch]),
          "step %u: scratch offset %d", step, ctx->scratch_offset);
    check_step(r, step, 0);
    mcu_dyn_after(ctx, pos);
    if (step < p->ops) {
      check_step(r, step, 1);
    }
  }
  check_invoke_end(r);
  CHECK(ctx->dyn->moved_bytes == p->moved_bytes,
        "invoke %u: runtime counted %u bytes moved, the plan %u", invoke, ctx->dyn->moved_bytes,
        p->moved_bytes);
  CHECK(r->moves_seen == p->moved_bytes, "invoke %u: driver saw %llu bytes moved, the plan %u",
        invoke, (unsigned long long)r->moves_seen, p->moved_bytes);
}

static void run_plan(const plan_t *p) {
  const mcu_dyn_plan_t dyn = {
      .num_buffers = p->num_buffers,
      .num_steps = p->ops + 1u,
      .planned = 1,
      .buffer_bytes = p->buffer_bytes,
      .initial_offsets = p->initial_offsets,
      .member_start = p->member_start,
      .member_tensor = p->member_tensor,
      .member_inner = p->member_inner,
      .born_start = p->born_start,
      .born_buffer = p->born_buffer,
      .dies_start = p->dies_start,
      .dies_buffer = p->dies_buffer,
      .move_start = p->move_start,
      .move_buffer = p->move_buffer,
      .move_offset = p->move_offset,
      .scratch_buffer = p->scratch_buffer,
  };
  uint32_t nb = p->num_buffers;
  mcu_dyn_state_t state = {
      .tensor_offsets = alloc_exact(p->num_offsets * sizeof(int32_t)),
      .buffer_offsets = alloc_exact(nb * sizeof(int32_t)),
      .live = alloc_exact(nb * sizeof(int16_t)),
  };
  mcu_model_t model;
  memset(&model, 0, sizeof model);
  model.num_nodes = p->ops;
  model.arena_bytes = p->arena_bytes;
  model.dyn = &dyn;
  model.dyn_state = &state;
  uint8_t *arena = alloc_exact(p->arena_bytes); /* exactly the plan's arena: ASan guards its end */
  mcu_context_t ctx = {&model, arena, -1, state.tensor_offsets, &state, -1};
  run_t r = {p, &ctx, alloc_exact(nb * sizeof(uint8_t *)), alloc_exact(nb * sizeof(int32_t)),
             alloc_exact(nb * sizeof(int16_t)), 0, 0, 0};
  for (uint32_t b = 0; b < nb; ++b) {
    r.shadow[b] = alloc_exact(p->buffer_bytes[b]);
  }
  mcu_dyn_reset(&ctx); /* as mcu_init does */
  for (uint32_t invoke = 0; invoke < INVOKES; ++invoke) {
    run_invoke(&r, &ctx, invoke);
  }
  for (uint32_t b = 0; b < nb; ++b) {
    free(r.shadow[b]);
  }
  free(r.shadow);
  free(r.seen);
  free(r.checked);
  free(arena);
  free(state.tensor_offsets);
  free(state.buffer_offsets);
  free(state.live);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLANS_FILE\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "r");
  if (f == NULL) {
    perror(argv[1]);
    return 2;
  }
  unsigned long plans = 0, buffers = 0, steps = 0, moves = 0;
  unsigned long long moved = 0;
  static plan_t plan;
  while (read_plan(f, &plan)) {
    run_plan(&plan);
    plans++;
    buffers += plan.num_buffers;
    steps += plan.ops;
    moves += plan.count[T_MOVE_BUFFER];
    moved += plan.moved_bytes;
    free_plan(&plan);
  }
  fclose(f);
  printf("planned allocator test: %lu plans, %lu buffers, %lu steps, %lu moves, %llu bytes moved "
         "per invoke, %lu failures\n",
         plans, buffers, steps, moves, moved, failures);
  return failures == 0 ? 0 : 1;
}
