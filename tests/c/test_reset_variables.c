/* Host driver for tests/c/test_variables_c.py: the model's state carries over invokes and
 * mcu_reset_variables (and a new mcu_init) bring it back to its initial value. Inputs get a fixed
 * byte pattern; prints one line per check and "variables ok" at the end. */
#include <stdio.h>
#include <string.h>

#include "model.h"

static uint8_t g_first[4096];

static int invoke(mcu_context_t *ctx, const mcu_tensor_t *out, uint8_t *copy) {
  for (uint32_t i = 0; i < mcu_model.num_inputs; ++i) {
    uint8_t *in = mcu_tensor_ptr(ctx, mcu_model.inputs[i]);
    for (uint32_t k = 0; k < mcu_model.tensors[mcu_model.inputs[i]].bytes; ++k) {
      in[k] = (uint8_t)((k * 37u + 11u) % 251u);
    }
  }
  if (mcu_invoke(ctx) != MCU_OK) {
    return 1;
  }
  memcpy(copy, mcu_tensor_ptr(ctx, mcu_model.outputs[0]), out->bytes);
  return 0;
}

int main(void) {
  mcu_context_t ctx;
  uint8_t now[4096];
  const mcu_tensor_t *out = &mcu_model.tensors[mcu_model.outputs[0]];
  if (out->bytes > sizeof now || mcu_init(&ctx, &mcu_model, mcu_arena, mcu_arena_size) != MCU_OK) {
    return 1;
  }
  if (invoke(&ctx, out, g_first) != 0 || invoke(&ctx, out, now) != 0) {
    return 1;
  }
  printf("second invoke differs: %d\n", memcmp(g_first, now, out->bytes) != 0);
  mcu_reset_variables(&ctx);
  if (invoke(&ctx, out, now) != 0) {
    return 1;
  }
  printf("after reset equal: %d\n", memcmp(g_first, now, out->bytes) == 0);
  if (invoke(&ctx, out, now) != 0 || mcu_init(&ctx, &mcu_model, mcu_arena, mcu_arena_size) != 0 ||
      invoke(&ctx, out, now) != 0) {
    return 1;
  }
  printf("after init equal: %d\n", memcmp(g_first, now, out->bytes) == 0);
  printf("variables ok\n");
  return 0;
}
