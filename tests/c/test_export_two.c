/* Host driver of tests/c/test_export_c.py: two exported models, `first` and `second`, linked into
 * one program and run from one shared arena, as an application would.
 * usage: prog SAMPLES IN.bin OUT.bin: IN holds, per sample, first's inputs then second's; OUT gets
 * first's outputs then second's, per sample. Prints one result line. */
#include <stdio.h>
#include <string.h>

#include "first.h"
#include "second.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))
static uint8_t g_arena[MAX(FIRST_ARENA_BYTES, SECOND_ARENA_BYTES)] __attribute__((aligned(16)));

static int run_first(FILE *in, FILE *out) {
  if (first_init_with_arena(g_arena, sizeof g_arena) != FIRST_OK) {
    return 1;
  }
  for (uint32_t i = 0; i < FIRST_NUM_INPUTS; ++i) {
    if (fread(first_input(i), 1, first_input_info(i)->bytes, in) != first_input_info(i)->bytes) {
      return 2;
    }
  }
  uint64_t ticks[FIRST_NUM_OPERATORS] = {0};
  if (first_invoke_profiled(NULL, ticks) != FIRST_OK) {
    return 3;
  }
  for (uint32_t i = 0; i < FIRST_NUM_OUTPUTS; ++i) {
    fwrite(first_output(i), 1, first_output_info(i)->bytes, out);
  }
  return 0;
}

static int run_second(FILE *in, FILE *out) {
  if (second_init_with_arena(g_arena, sizeof g_arena) != SECOND_OK) {
    return 1;
  }
  for (uint32_t i = 0; i < SECOND_NUM_INPUTS; ++i) {
    if (fread(second_input(i), 1, second_input_info(i)->bytes, in) != second_input_info(i)->bytes) {
      return 2;
    }
  }
  if (second_invoke() != SECOND_OK) {
    return 3;
  }
  for (uint32_t i = 0; i < SECOND_NUM_OUTPUTS; ++i) {
    fwrite(second_output(i), 1, second_output_info(i)->bytes, out);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    return 2;
  }
  int samples = 0;
  if (sscanf(argv[1], "%d", &samples) != 1) {
    return 2;
  }
  FILE *in = fopen(argv[2], "rb");
  FILE *out = fopen(argv[3], "wb");
  if (in == NULL || out == NULL || first_invoke() != FIRST_ERR_NOT_READY) {
    return 2;
  }
  for (int k = 0; k < samples; ++k) {
    int a = run_first(in, out);
    int b = run_second(in, out);
    if (a != 0 || b != 0) {
      printf("mcu-result status=%d sample=%d\n", a != 0 ? a : b, k);
      return 1;
    }
  }
  fclose(in);
  fclose(out);
  printf("mcu-result status=0 samples=%d arena=%u operators=%s\n", samples,
         (unsigned)sizeof g_arena, first_operator(0));
  return 0;
}
