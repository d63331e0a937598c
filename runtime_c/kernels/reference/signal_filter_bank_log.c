/* SignalFilterBankLog, bit-exact with TFLM signal/src/filter_bank_log.cc and log.cc (Log32): log2
 * as the most significant bit plus a fraction corrected by a 128-segment table, times ln 2 in
 * Q16 (45426), rounded, then times the output scale, rounded, in uint32 arithmetic. */
#include "mcu/kernels/signal_filter_bank_log.h"

#include "mcu/quant.h"

#define SCALE_BITS 16
#define SEGMENT_BITS 7
#define LN2_Q16 45426u

/* The correction of the linear log2 fraction at each of the 128 segment boundaries (and one past),
 * in 1/65536: TFLM's kLogLut. */
static const uint16_t k_log_correction[130] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
    2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
    4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
    5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
    5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
    2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

/* The fraction of log2(x) in Q16, x's integer part being `log2x` (x > 1). */
static uint32_t log2_fraction(uint32_t x, uint32_t log2x) {
  int32_t frac = (int32_t)((int64_t)x - ((int64_t)1 << log2x));
  if (log2x < SCALE_BITS) {
    frac = (int32_t)((uint32_t)frac << (SCALE_BITS - log2x));
  } else {
    frac >>= log2x - SCALE_BITS;
  }
  uint32_t seg = (uint32_t)frac >> (SCALE_BITS - SEGMENT_BITS);
  int32_t c0 = k_log_correction[seg];
  int32_t c1 = k_log_correction[seg + 1];
  int32_t seg_base = (int32_t)(seg << (SCALE_BITS - SEGMENT_BITS));
  int32_t rel = ((c1 - c0) * (frac - seg_base)) >> SCALE_BITS;
  return (uint32_t)(frac + c0 + rel);
}

static uint32_t scaled_log(uint32_t x, uint32_t out_scale) {
  uint32_t integer = mcu_msb32(x) - 1;
  uint32_t log2 = (integer << SCALE_BITS) + log2_fraction(x, integer);
  uint32_t half = (uint32_t)1 << (SCALE_BITS - 1);
  uint32_t ln = (uint32_t)(((uint64_t)LN2_Q16 * log2 + half) >> SCALE_BITS);
  return (out_scale * ln + half) >> SCALE_BITS;
}

mcu_status_t mcu_signal_filter_bank_log_uint32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_signal_filter_bank_log_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  int32_t n = mcu_num_elements(mcu_input_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(mcu_num_elements(mcu_output_tensor(ctx, node, 0)) == n, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->input_correction_bits >= 0 && p->input_correction_bits < 32,
                   MCU_ERR_BAD_MODEL);
  const uint32_t *x = mcu_input(ctx, node, 0);
  int16_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    uint32_t scaled = x[i] << p->input_correction_bits;
    if (scaled > 1) {
      uint32_t v = scaled_log(scaled, p->output_scale);
      y[i] = (int16_t)(v < (uint32_t)INT16_MAX ? v : (uint32_t)INT16_MAX);
    } else {
      y[i] = 0;
    }
  }
  return MCU_OK;
}
