/* Host "board": reads K samples of the model's inputs from a file, runs the model on each, writes
 * the outputs to another file, and prints one machine-readable result line. With a third file,
 * it also writes the variable tensors as they are after the last sample, in the model's variable
 * order (a training graph's trained weights and optimiser state).
 * usage: model IN.bin OUT.bin [STATE.bin]  (IN holds K x the summed input bytes, in input order) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static long file_size(FILE *f) {
  if (fseek(f, 0, SEEK_END) != 0) {
    return -1;
  }
  long n = ftell(f);
  rewind(f);
  return n;
}

static uint32_t io_bytes(const int16_t *ids, uint32_t count) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    total += mcu_model.tensors[ids[i]].bytes;
  }
  return total;
}

static int write_state(const char *path) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    printf("mcu-result status=io error=open-state\n");
    return 1;
  }
  for (uint32_t i = 0; i < mcu_model.num_variables; ++i) {
    const mcu_variable_t *v = &mcu_model.variables[i];
    if (fwrite(v->data, 1, v->bytes, f) != v->bytes) {
      printf("mcu-result status=io error=write-state\n");
      fclose(f);
      return 1;
    }
  }
  return fclose(f) == 0 ? 0 : 1;
}

static int run_samples(const uint8_t *in, long samples, FILE *out) {
  mcu_context_t ctx;
  mcu_status_t s = mcu_init(&ctx, &mcu_model, mcu_arena, mcu_arena_size);
  if (s != MCU_OK) {
    printf("mcu-result status=%d operator=-1\n", (int)s);
    return 1;
  }
  for (long k = 0; k < samples; ++k) {
    for (uint32_t i = 0; i < mcu_model.num_inputs; ++i) {
      const mcu_tensor_t *t = &mcu_model.tensors[mcu_model.inputs[i]];
      memcpy(mcu_tensor_ptr(&ctx, mcu_model.inputs[i]), in, t->bytes);
      in += t->bytes;
    }
    s = mcu_invoke(&ctx);
    if (s != MCU_OK) {
      printf("mcu-result status=%d operator=%d sample=%ld\n", (int)s, (int)ctx.failed_node, k);
      return 1;
    }
    for (uint32_t i = 0; i < mcu_model.num_outputs; ++i) {
      const mcu_tensor_t *t = &mcu_model.tensors[mcu_model.outputs[i]];
      if (fwrite(mcu_tensor_ptr(&ctx, mcu_model.outputs[i]), 1, t->bytes, out) != t->bytes) {
        printf("mcu-result status=io error=write\n");
        return 1;
      }
    }
  }
  printf("mcu-result status=0 samples=%ld arena=%u\n", samples, (unsigned)mcu_model.arena_bytes);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: %s IN.bin OUT.bin [STATE.bin]\n", argv[0]);
    return 2;
  }
  FILE *fin = fopen(argv[1], "rb");
  if (fin == NULL) {
    printf("mcu-result status=io error=open-input\n");
    return 2;
  }
  long n = file_size(fin);
  uint32_t per_sample = io_bytes(mcu_model.inputs, mcu_model.num_inputs);
  if (n < 0 || per_sample == 0 || n % (long)per_sample != 0) {
    printf("mcu-result status=io error=input-size bytes=%ld per-sample=%u\n", n, per_sample);
    fclose(fin);
    return 2;
  }
  uint8_t *in = malloc((size_t)n + 1);
  if (in == NULL || fread(in, 1, (size_t)n, fin) != (size_t)n) {
    printf("mcu-result status=io error=read-input\n");
    fclose(fin);
    free(in);
    return 2;
  }
  fclose(fin);
  FILE *fout = fopen(argv[2], "wb");
  if (fout == NULL) {
    printf("mcu-result status=io error=open-output\n");
    free(in);
    return 2;
  }
  int rc = run_samples(in, n / (long)per_sample, fout);
  fclose(fout);
  free(in);
  if (rc == 0 && argc == 4) {
    rc = write_state(argv[3]);
  }
  return rc;
}
