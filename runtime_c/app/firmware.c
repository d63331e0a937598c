/* Firmware main: owns the model context and dispatches console bytes to the two protocols.
 * A byte 0xA5 followed by 0x5A starts a binary frame; printable text goes to the MLPerf parser. */
#include <stdint.h>

#include "model.h"
#include "mcu/port.h"
#include "protocol.h"

extern uint32_t mcu_stack_unused_bytes(void);
extern uint32_t mcu_stack_size_bytes(void);

static mcu_context_t g_ctx;
/* An even number of entries (16-byte multiples), so the planner's RAM count is exact. */
static uint64_t g_node_ticks[MCU_MODEL_NUM_NODES > 0 ? (MCU_MODEL_NUM_NODES + 1) & ~1 : 2];
static int32_t g_init_status;

/* libm's error reporting. newlib's float functions (expf, tanhf, ... in the float kernels) report
 * range errors through errno, which by default lives in its 96-byte reentrancy struct: only float
 * builds would pull that in, and the firmware's RAM would depend on the kernels. Here errno is one
 * word that every build links (main clears it), and the math library runs in IEEE mode (no errno
 * writes at all), so mcugen/plan/fit.py counts the RAM exactly; results are unchanged. */
static int g_errno;
int *__errno(void);
int *__errno(void) { return &g_errno; }
const int __fdlib_version = -1; /* newlib's _LIB_VERSION: __fdlibm_ieee */

void mcu_app_puts(const char *s) {
  for (uint32_t i = 0; s[i] != '\0' && i < 1024u; ++i) {
    mcu_port_putc((uint8_t)s[i]);
  }
}

uint8_t *mcu_app_io_ptr(int is_output, uint32_t index, uint32_t *bytes) {
  uint32_t count = is_output ? mcu_model.num_outputs : mcu_model.num_inputs;
  if (index >= count) {
    return 0;
  }
  int16_t t = is_output ? mcu_model.outputs[index] : mcu_model.inputs[index];
  *bytes = mcu_model.tensors[t].bytes;
  return (uint8_t *)mcu_tensor_ptr(&g_ctx, t);
}

/* Run `count` inferences of operators first .. end - 1 (all of them but in a phase of a
 * multi-board run: mcu_invoke_nodes, MCU_MULTIBOARD builds only); total ticks in *ticks, and per
 * operator when profiling (only the range's are reset). Returns the first failure's status. */
static int invoke_nodes(uint32_t count, uint64_t *ticks, int profile, uint32_t first,
                        uint32_t end) {
  if (g_init_status != MCU_OK) {
    return g_init_status;
  }
  if (profile) {
    for (uint32_t i = first; i < end; ++i) {
      g_node_ticks[i] = 0;
    }
  }
  mcu_port_cycles_restart();
  uint64_t start = mcu_port_cycles();
  for (uint32_t k = 0; k < count; ++k) {
#if MCU_MULTIBOARD
    const int whole = first == 0u && end == MCU_MODEL_NUM_NODES;
    mcu_status_t s =
        !whole    ? mcu_invoke_nodes(&g_ctx, first, end, profile ? mcu_port_cycles : 0, g_node_ticks)
        : profile ? mcu_invoke_profiled(&g_ctx, mcu_port_cycles, g_node_ticks)
                  : mcu_invoke(&g_ctx);
#else
    mcu_status_t s = profile ? mcu_invoke_profiled(&g_ctx, mcu_port_cycles, g_node_ticks)
                             : mcu_invoke(&g_ctx);
#endif
    if (s != MCU_OK) {
      *ticks = mcu_port_cycles() - start;
      return (int)s;
    }
  }
  *ticks = mcu_port_cycles() - start;
  return MCU_OK;
}

int mcu_app_invoke(uint32_t count, uint64_t *ticks, int profile) {
  return invoke_nodes(count, ticks, profile, 0u, MCU_MODEL_NUM_NODES);
}

#if MCU_MULTIBOARD
int mcu_app_invoke_nodes(uint32_t count, uint64_t *ticks, int profile, uint32_t first,
                         uint32_t end) {
  return invoke_nodes(count, ticks, profile, first, end);
}
#endif

const uint64_t *mcu_app_node_ticks(void) { return g_node_ticks; }
int32_t mcu_app_failed_node(void) { return g_ctx.failed_node; }
uint32_t mcu_app_stack_used(void) { return mcu_stack_size_bytes() - mcu_stack_unused_bytes(); }
uint32_t mcu_app_stack_size(void) { return mcu_stack_size_bytes(); }
uint32_t mcu_app_moved_bytes(void) { return g_ctx.dyn != 0 ? g_ctx.dyn->moved_bytes : 0u; }

int main(void) {
  g_errno = 0;
  mcu_port_init();
  g_init_status = (int32_t)mcu_init(&g_ctx, &mcu_model, mcu_arena, mcu_arena_size);
  mcu_mlperf_boot_banner();
  int pending_sync = 0;
  for (;;) {
    int c = mcu_port_getc(0);
    if (c < 0) {
      continue;
    }
    if (pending_sync) {
      pending_sync = 0;
      if (c == MCU_PROTO_SYNC1) {
        mcu_proto_handle_frame();
        continue;
      }
    }
    if (c == MCU_PROTO_SYNC0) {
      pending_sync = 1;
      continue;
    }
    mcu_mlperf_feed((uint8_t)c);
  }
}
