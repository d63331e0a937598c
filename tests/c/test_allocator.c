/* Host unit test of the compacting allocator (runtime_c/src/allocator.c, compiled alongside).
 *
 * Drives the real entry points the interpreter calls (mcu_dyn_reset, mcu_dyn_before,
 * mcu_dyn_after) over random buffer plans: random lifetimes, sizes (0, aligned, unaligned), alias
 * groups (several tensors per buffer at inner offsets) and scratch buffers. The driver keeps its
 * own model of which buffers are live, fills each buffer with a per-buffer pattern when its
 * operator would write it, and after every hook checks: no two live buffers overlap, every live
 * buffer keeps its contents, offsets are aligned (aligned plans), the live region never exceeds the
 * sum of live sizes, aliased tensors follow their buffer, the runtime's live list is sorted by
 * address, and the bytes the runtime counts as moved equal the moves the driver observes. The
 * arena is a heap block of exactly the peak live bytes, so AddressSanitizer catches any access
 * beyond it.
 * Usage: test_allocator SEED [PLANS]; prints one summary line and exits 0 when all checks pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_check.h"
#include "mcu/runtime.h"

#define MAX_BUFFERS 48
#define MAX_STEPS 40
#define MAX_TENSORS (MAX_BUFFERS * 3)
#define ALIGN 16u

typedef struct {
  uint32_t bytes[MAX_BUFFERS];
  uint32_t first[MAX_BUFFERS];
  uint32_t last[MAX_BUFFERS]; /* == nodes: a graph output, never dies */
  int32_t initial[MAX_BUFFERS];
  uint32_t member_start[MAX_BUFFERS + 1];
  int16_t member_tensor[MAX_TENSORS];
  int32_t member_inner[MAX_TENSORS];
  uint32_t born_start[MAX_STEPS + 2];
  int16_t born_buffer[MAX_BUFFERS];
  uint32_t dies_start[MAX_STEPS + 2];
  int16_t dies_buffer[MAX_BUFFERS];
  uint32_t move_start[MAX_STEPS + 2];
  int16_t scratch[MAX_STEPS];
  uint32_t pattern[MAX_BUFFERS]; /* current fill seed of each buffer */
  int32_t seen_offset[MAX_BUFFERS];
  uint32_t num_buffers, nodes, num_tensors, peak;
  uint32_t aligned;
} plan_t;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) { /* xorshift64*, uniform enough for a test */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

unsigned long failures;
const char *check_context = "random plans";

static uint32_t random_size(const plan_t *p) {
  static const uint32_t aligned_sizes[] = {0, 16, 32, 48, 64, 256, 1024, 4096};
  uint32_t pick = rnd(10);
  if (pick < 8) {
    uint32_t s = aligned_sizes[pick];
    return p->aligned ? s : s + (s ? rnd(15) : rnd(2)); /* unaligned: 1..15 extra bytes */
  }
  uint32_t s = 1u + rnd(3000);
  return p->aligned ? (s + ALIGN - 1u) / ALIGN * ALIGN : s;
}

static int is_live(const plan_t *p, uint32_t b, uint32_t step) {
  return p->first[b] <= step && step <= p->last[b];
}

/* Live between operators: written at or before `step`, still needed after it. */
static int is_kept(const plan_t *p, uint32_t b, uint32_t step) {
  return p->first[b] <= step && step < p->last[b];
}

static void make_plan(plan_t *p) {
  memset(p, 0, sizeof *p);
  p->aligned = rnd(3) != 0;
  p->nodes = 1u + rnd(MAX_STEPS - 1);
  p->num_buffers = 1u + rnd(MAX_BUFFERS);
  for (uint32_t b = 0; b < MAX_STEPS; ++b) {
    p->scratch[b] = -1;
  }
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    p->bytes[b] = random_size(p);
    p->first[b] = rnd(4) == 0 ? 0u : rnd(p->nodes + 1u);
    p->last[b] = p->first[b] + rnd(p->nodes + 1u - p->first[b]);
    if (p->first[b] == 0 && p->last[b] == p->nodes) {
      p->last[b] = rnd(p->nodes); /* an input live to the end must not move (generator rule) */
    }
    uint32_t pos = p->first[b] - 1u;
    if (p->first[b] > 0 && p->first[b] == p->last[b] && p->scratch[pos] < 0 && rnd(2)) {
      p->scratch[pos] = (int16_t)b;
    }
    p->member_start[b] = p->num_tensors;
    for (uint32_t m = 0, n = 1u + rnd(3); m < n; ++m) { /* alias group */
      p->member_tensor[p->num_tensors] = (int16_t)p->num_tensors;
      p->member_inner[p->num_tensors] = (int32_t)(p->bytes[b] ? rnd(p->bytes[b]) : 0);
      p->num_tensors++;
    }
  }
  p->member_start[p->num_buffers] = p->num_tensors;
  uint32_t nb = 0, nd = 0, input_top = 0;
  for (uint32_t s = 0; s <= p->nodes + 1u; ++s) {
    p->born_start[s] = nb;
    p->dies_start[s] = nd;
    p->move_start[s] = 0;
    for (uint32_t b = 0; b < p->num_buffers && s <= p->nodes; ++b) {
      if (p->first[b] == s) {
        p->born_buffer[nb++] = (int16_t)b;
        p->initial[b] = s == 0 ? (int32_t)input_top : 0;
        input_top += s == 0 ? p->bytes[b] : 0;
      }
      if (p->last[b] == s && s < p->nodes) {
        p->dies_buffer[nd++] = (int16_t)b;
      }
    }
  }
  for (uint32_t s = 0; s <= p->nodes; ++s) {
    uint32_t live = 0;
    for (uint32_t b = 0; b < p->num_buffers; ++b) {
      live += is_live(p, b, s) ? p->bytes[b] : 0;
    }
    p->peak = live > p->peak ? live : p->peak;
  }
}

static uint8_t pattern_byte(uint32_t seed, uint32_t i) {
  return (uint8_t)((seed * 2654435761u + i * 40503u) >> 11);
}

static void fill(const plan_t *p, uint8_t *arena, const mcu_dyn_state_t *st, uint32_t b,
                 uint32_t seed) {
  for (uint32_t i = 0; i < p->bytes[b]; ++i) {
    arena[st->buffer_offsets[b] + (int32_t)i] = pattern_byte(seed, i);
  }
}

/* All checks on the buffers live at `step` (during its operator) or, `after`, kept past it. */
static void check_state(plan_t *p, const mcu_context_t *ctx, uint32_t step, uint64_t *moved,
                        int after) {
  const char *where = after ? "after" : "before";
  const mcu_dyn_state_t *st = ctx->dyn;
  uint32_t live_bytes = 0, end = 0;
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    if (!(after ? is_kept(p, b, step) : is_live(p, b, step))) {
      p->seen_offset[b] = -1;
      continue;
    }
    int32_t off = st->buffer_offsets[b];
    live_bytes += p->bytes[b];
    end = (uint32_t)off + p->bytes[b] > end ? (uint32_t)off + p->bytes[b] : end;
    CHECK(off >= 0 && (uint32_t)off + p->bytes[b] <= p->peak, "%s step %u: buffer %u at %d",
          where, step, b, off);
    CHECK(!p->aligned || off % (int32_t)ALIGN == 0, "%s: buffer %u unaligned at %d", where, b, off);
    if (p->seen_offset[b] >= 0 && p->seen_offset[b] != off) {
      *moved += p->bytes[b];
    }
    p->seen_offset[b] = off;
    for (uint32_t m = p->member_start[b]; m < p->member_start[b + 1]; ++m) {
      CHECK(st->tensor_offsets[p->member_tensor[m]] == off + p->member_inner[m],
            "%s: tensor %u not with buffer %u", where, m, b);
    }
    for (uint32_t i = 0; i < p->bytes[b]; ++i) {
      if (ctx->arena[off + (int32_t)i] != pattern_byte(p->pattern[b], i)) {
        CHECK(0, "%s step %u: buffer %u byte %u lost", where, step, b, i);
        break;
      }
    }
    for (uint32_t o = 0; o < p->num_buffers; ++o) {
      int32_t oo = st->buffer_offsets[o];
      int overlap = off < oo + (int32_t)p->bytes[o] && oo < off + (int32_t)p->bytes[b];
      int other = after ? is_kept(p, o, step) : is_live(p, o, step);
      CHECK(o == b || !other || !overlap, "%s step %u: buffers %u and %u overlap",
            where, step, b, o);
    }
  }
  CHECK(end <= live_bytes, "%s step %u: live region %u > live bytes %u", where, step, end,
        live_bytes);
}

/* The runtime's live list (compacting mode) is the driver's live set, by increasing address. */
static void check_live_list(const plan_t *p, const mcu_dyn_state_t *st, uint32_t step, int after) {
  uint32_t expected = 0;
  for (uint32_t b = 0; b < p->num_buffers; ++b) {
    expected += (after ? is_kept(p, b, step) : is_live(p, b, step)) ? 1u : 0u;
  }
  CHECK(st->live_count == expected, "step %u: %u live, expected %u", step, st->live_count,
        expected);
  for (uint32_t i = 0; i + 1u < st->live_count; ++i) {
    CHECK(st->buffer_offsets[st->live[i]] <= st->buffer_offsets[st->live[i + 1u]],
          "step %u: live list not sorted", step);
  }
}

static uint64_t run_plan(plan_t *p, uint32_t invokes, uint64_t *steps) {
  const mcu_dyn_plan_t dyn = {
      .num_buffers = p->num_buffers,
      .num_steps = p->nodes + 1u,
      .planned = 0,
      .buffer_bytes = p->bytes,
      .initial_offsets = p->initial,
      .member_start = p->member_start,
      .member_tensor = p->member_tensor,
      .member_inner = p->member_inner,
      .born_start = p->born_start,
      .born_buffer = p->born_buffer,
      .dies_start = p->dies_start,
      .dies_buffer = p->dies_buffer,
      .move_start = p->move_start,
      .move_buffer = NULL,
      .move_offset = NULL,
      .scratch_buffer = p->scratch,
  };
  int32_t tensor_offsets[MAX_TENSORS], buffer_offsets[MAX_BUFFERS];
  int16_t live[MAX_BUFFERS];
  mcu_dyn_state_t state = {tensor_offsets, buffer_offsets, live, 0, 0, 0};
  mcu_model_t model;
  memset(&model, 0, sizeof model);
  model.num_nodes = p->nodes;
  model.arena_bytes = p->peak;
  model.dyn = &dyn;
  model.dyn_state = &state;
  uint8_t *arena = malloc(p->peak ? p->peak : 1u); /* exactly the peak: ASan guards the end */
  CHECK(arena != NULL, "out of memory");
  mcu_context_t ctx = {&model, arena, -1, tensor_offsets, &state, -1};
  mcu_dyn_reset(&ctx);
  uint64_t moved_total = 0;
  for (uint32_t inv = 0; inv < invokes; ++inv) {
    uint64_t moved = 0;
    for (uint32_t b = 0; b < p->num_buffers; ++b) {
      p->seen_offset[b] = -1;
      if (p->first[b] == 0) { /* the host writes the inputs at their initial offsets */
        CHECK(buffer_offsets[b] == p->initial[b], "input %u not at its initial offset", b);
        p->pattern[b] = rnd(1u << 30);
        fill(p, arena, &state, b, p->pattern[b]);
        p->seen_offset[b] = p->initial[b];
      }
    }
    for (uint32_t pos = 0; pos < p->nodes; ++pos) {
      uint32_t step = pos + 1u;
      mcu_dyn_before(&ctx, pos);
      for (uint32_t b = 0; b < p->num_buffers; ++b) { /* the operator writes its new buffers */
        if (p->first[b] == step) {
          p->pattern[b] = rnd(1u << 30);
          fill(p, arena, &state, b, p->pattern[b]);
        }
      }
      int16_t s = p->scratch[pos];
      CHECK(ctx.scratch_offset == (s < 0 ? -1 : buffer_offsets[s]), "step %u: scratch", step);
      check_state(p, &ctx, step, &moved, 0);
      check_live_list(p, &state, step, 0);
      mcu_dyn_after(&ctx, pos);
      if (step < p->nodes) { /* the last hook resets the inputs for the next invoke */
        check_state(p, &ctx, step, &moved, 1);
        check_live_list(p, &state, step, 1);
        (*steps)++;
      }
    }
    CHECK(state.moved_bytes == moved, "invoke %u: runtime moved %u bytes, driver saw %llu", inv,
          state.moved_bytes, (unsigned long long)moved);
    moved_total += moved;
  }
  free(arena);
  return moved_total;
}

int main(int argc, char **argv) {
  unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 10) : 1ul;
  unsigned long plans = argc > 2 ? strtoul(argv[2], NULL, 10) : 300ul;
  rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed * 0xBF58476D1CE4E5B9ull);
  static plan_t plan;
  uint64_t steps = 0, moved = 0, buffers = 0;
  for (unsigned long i = 0; i < plans; ++i) {
    make_plan(&plan);
    buffers += plan.num_buffers;
    moved += run_plan(&plan, 2u, &steps);
  }
  printf("allocator test seed %lu: %lu plans, %llu buffers, %llu steps, %llu bytes moved, "
         "%lu failures\n",
         seed, plans, (unsigned long long)buffers, (unsigned long long)steps,
         (unsigned long long)moved, failures);
  return failures == 0 ? 0 : 1;
}
