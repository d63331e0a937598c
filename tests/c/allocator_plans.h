/* The plans file of the planned allocator's host test (tests/c/test_allocator_planned.c): the
 * tables mcugen's planner wrote, read into heap blocks of exactly their size (AddressSanitizer
 * catches any access beyond them). The file's format is described in test_allocator_planned.c;
 * the driver's CHECK is host_check.h's. */
#ifndef ALLOCATOR_PLANS_H
#define ALLOCATOR_PLANS_H

#include <stdio.h>
#include <stdlib.h>

#include "host_check.h"
#include "mcu/runtime.h"

enum {
  T_BUFFER_BYTES,
  T_INITIAL_OFFSETS,
  T_MEMBER_START,
  T_MEMBER_TENSOR,
  T_MEMBER_INNER,
  T_BORN_START,
  T_BORN_BUFFER,
  T_DIES_START,
  T_DIES_BUFFER,
  T_MOVE_START,
  T_MOVE_BUFFER,
  T_MOVE_OFFSET,
  T_SCRATCH_BUFFER,
  T_FIRST,
  T_LAST,
  T_OUTPUT,
  T_EXPECT,
  NUM_TABLES
};

typedef struct {
  char label[96];
  uint32_t num_buffers, ops, num_offsets, arena_bytes, moved_bytes;
  int32_t *table[NUM_TABLES]; /* values as read, exactly `count` entries each */
  uint32_t count[NUM_TABLES];
  /* the typed copies the runtime reads, exactly as long as the tables */
  uint32_t *buffer_bytes, *member_start, *born_start, *dies_start, *move_start;
  int32_t *initial_offsets, *member_inner, *move_offset;
  int16_t *member_tensor, *born_buffer, *dies_buffer, *move_buffer, *scratch_buffer;
} plan_t;

/* A heap block of exactly `bytes` (malloc(0) too: ASan flags any read of it); exits when out of
 * memory. */
void *alloc_exact(size_t bytes);
/* Reads the next plan; 0 at the end of the file. Exits with status 2 on a malformed file. */
int read_plan(FILE *f, plan_t *p);
void free_plan(plan_t *p);

#endif
