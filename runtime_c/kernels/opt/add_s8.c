/* ADD int8 over same-shape operands with each input's rescaling looked up in a table the build
 * computed (mcugen/codegen/lower/opt_add.py): bit-exact with reference/add.c (mcu_add_int8).
 * Safe in place: each element is read before it is written, as in the reference kernel. */
#include "mcu/kernels/add.h"

#include "mcu/quant.h"

mcu_status_t mcu_add_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_s8_table_params_t *p = node->params;
  const int8_t *a = mcu_input(ctx, node, 0);
  const int8_t *b = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  const int32_t *t1 = p->table1 + 128;
  const int32_t *t2 = p->table2 + 128;
  int32_t n = mcu_num_elements(mcu_output_tensor(ctx, node, 0));
  for (int32_t i = 0; i < n; ++i) {
    int32_t raw = t1[a[i]] + t2[b[i]];
    raw = mcu_mbqm_smaller_than_one(raw, p->output_multiplier, p->output_shift);
    y[i] = (int8_t)mcu_clamp_i32(raw + p->output_offset, p->act_min, p->act_max);
  }
  return MCU_OK;
}
