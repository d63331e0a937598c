/* mcugen runtime: a static-arena interpreter for a generated operator list.
 * No heap, no stdio. The generated model supplies constant tables; the runtime only walks them. */
#ifndef MCU_RUNTIME_H
#define MCU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCU_ALIGNED(n) __attribute__((aligned(n)))
/* Where the constant tensors go: .rodata (internal flash), or with MCU_WEIGHTS_EXTERNAL the
 * section .mcu_weights, which the link script places in a memory-mapped external flash (QSPI)
 * when the weights do not fit the internal one (mcugen/firmware/project.py weights_memory). */
#ifdef MCU_WEIGHTS_EXTERNAL
#define MCU_WEIGHTS __attribute__((section(".mcu_weights")))
#else
#define MCU_WEIGHTS
#endif
#define MCU_MAX_DIMS 6

/* Status codes: 0 is success, every other value says which kind of failure happened. */
typedef enum {
  MCU_OK = 0,
  MCU_ERR_BAD_MODEL = 1,   /* tables inconsistent: shapes, types or indices a kernel cannot handle */
  MCU_ERR_UNSUPPORTED = 2, /* a parameter combination this kernel does not implement */
  MCU_ERR_ARENA = 3,       /* the arena given is smaller than the plan needs */
  MCU_ERR_INPUT = 4,       /* data-dependent index out of range at eval time */
  MCU_ERR_INTERNAL = 5     /* a bug in the runtime */
} mcu_status_t;

#define MCU_TRY(expr)                    \
  do {                                   \
    mcu_status_t mcu_try_s_ = (expr);    \
    if (mcu_try_s_ != MCU_OK) {          \
      return mcu_try_s_;                 \
    }                                    \
  } while (0)

/* Checks, split as TFLM splits them between Prepare and Eval (house style 12):
 * - MCU_ENSURE: always compiled. For mcu_init (the runtime's prepare pass, run once) and, in a
 *   kernel's eval, only for what is known at run time: values derived from tensor data (an index
 *   read from an input, a sum of activations), a path chosen by the addresses the allocator gave
 *   (a convolution in place), or a fact the build-time validation does not establish (each such
 *   check says so).
 * - MCU_ENSURE_MODEL: a fact about the generated tables (operand counts, shapes, types, parameter
 *   ranges, scratch present) that mcugen's lowering (mcugen/codegen/lower) or plan already
 *   validated at build time, so a generated model never fails it. Compiled only when
 *   MCU_CHECK_MODEL is defined (the host board defines it, so every host test cross-checks the
 *   build-time validation against what the kernels rely on); firmware builds leave it out and eval
 *   spends no instruction on it. `cond` must have no side effects. */
#define MCU_ENSURE(cond, status) \
  do {                           \
    if (!(cond)) {               \
      return (status);           \
    }                            \
  } while (0)

#ifdef MCU_CHECK_MODEL
#define MCU_ENSURE_MODEL(cond, status) MCU_ENSURE(cond, status)
#else
#define MCU_ENSURE_MODEL(cond, status) \
  do {                                 \
    if (0 && !(cond)) {                \
      return (status);                 \
    }                                  \
  } while (0)
#endif

typedef enum {
  MCU_FLOAT32 = 0,
  MCU_INT8 = 1,
  MCU_UINT8 = 2,
  MCU_INT16 = 3,
  MCU_INT32 = 4,
  MCU_INT64 = 5,
  MCU_BOOL = 6,
  MCU_UINT16 = 7,
  MCU_UINT32 = 8,
  MCU_UINT64 = 9,
  MCU_FLOAT16 = 10,
  MCU_FLOAT64 = 11
} mcu_type_t;

typedef struct {
  int32_t arena_offset;   /* byte offset in the arena, or -1 for data outside it */
  const void *const_data; /* outside the arena: constant data in flash, a variable tensor in
                           * the model state struct (written by its stateful kernel), or a tensor
                           * in another pool of a split arena (its address, fixed at link time,
                           * so kernels pay nothing for pools); else NULL */
  uint32_t bytes;
  uint8_t type;           /* mcu_type_t */
  uint8_t ndims;
  int32_t dims[MCU_MAX_DIMS];
} mcu_tensor_t;

typedef struct mcu_context mcu_context_t;
typedef struct mcu_node mcu_node_t;
/* A kernel's eval function. Kernel headers declare theirs with it (`mcu_eval_t mcu_relu_int8;`);
 * the definitions spell the prototype out. */
typedef mcu_status_t mcu_eval_t(const mcu_node_t *node, mcu_context_t *ctx);
typedef mcu_eval_t *mcu_eval_fn;

struct mcu_node {
  mcu_eval_fn eval;
  const void *params; /* the kernel's own parameter struct, computed at build time */
  const int16_t *inputs; /* tensor indices, -1 for an omitted optional input */
  const int16_t *outputs;
  uint8_t num_inputs;
  uint8_t num_outputs;
  uint16_t index;         /* operator index in the .tflite file, for reports */
  int32_t scratch_offset; /* arena offset of this operator's scratch, -1 if none */
  /* elements between the starts of two output pixels when the plan put the output in a
   * concatenation's channel slice (mcugen/plan/channel_slices.py); 0: dense. Only kernels whose
   * lowering declares `output_stride` get one, and read it through mcu_output_stride. */
  int32_t out_stride;
};

/* Dynamic allocation (allocator modes "compacting" and "planned", see src/allocator.c): constant
 * tables of the arena's buffers (groups of aliased tensors), what is born and dies at each step, and
 * in planned mode the moves to perform before each operator. Index arrays are CSR: the entries of
 * item k are [start[k], start[k + 1]). Step 0 is "before the first operator", operator at position
 * p runs at step p + 1 (TFLM's convention). */
typedef struct {
  uint32_t num_buffers;
  uint32_t num_steps;              /* operators + 1 */
  uint32_t planned;                /* 0: compact at run time; 1: perform the planned moves */
  const uint32_t *buffer_bytes;    /* per buffer, aligned size */
  const int32_t *initial_offsets;  /* per buffer: offset when born (planned) or at invoke start */
  const uint32_t *member_start;    /* per buffer + 1 */
  const int16_t *member_tensor;    /* tensors stored in each buffer */
  const int32_t *member_inner;     /* and their byte offsets inside it */
  const uint32_t *born_start;      /* per step + 1 */
  const int16_t *born_buffer;      /* buffers created at each step, in allocation order */
  const uint32_t *dies_start;      /* per step + 1 */
  const int16_t *dies_buffer;      /* buffers last used at each step (outputs never die) */
  const uint32_t *move_start;      /* per step + 1 (planned mode) */
  const int16_t *move_buffer;      /* moves before the step's operator, in order */
  const int32_t *move_offset;      /* destination offsets; paged: -1 - d to re-address to d
                                    * without copying (a page dropped, its slow copy current) */
  const int16_t *scratch_buffer;   /* per operator position: its scratch buffer, -1 if none */
  /* Paging (allocator "paged", mcugen/plan/paging, built with MCU_PAGED): an offset o at or
   * above the model's arena_bytes addresses slow[o - arena_bytes]; NULL without paging. */
  uint8_t *slow;
  uint32_t slow_bytes;
} mcu_dyn_plan_t;

/* Mutable part of dynamic allocation; lives in the generated model state struct. */
typedef struct {
  int32_t *tensor_offsets; /* current arena offset of every tensor (num_tensors entries) */
  int32_t *buffer_offsets; /* current offset of every buffer */
  int16_t *live;           /* live buffers by increasing address (compacting mode) */
  uint32_t live_count;
  uint32_t top;            /* end of the live region (compacting mode) */
  uint32_t moved_bytes;    /* bytes moved by the last invoke */
} mcu_dyn_state_t;

/* The dynamic allocator's entry points (src/allocator.c), called by the interpreter around each
 * operator. The model reaches them through one pointer, NULL with static offsets, so a static
 * build references no allocator symbol and links no allocator code. */
typedef struct {
  void (*reset)(mcu_context_t *ctx);
  void (*before)(mcu_context_t *ctx, uint32_t position);
  void (*after)(mcu_context_t *ctx, uint32_t position);
} mcu_allocator_t;

/* A variable tensor (SVDF and LSTM state, a training graph's weights and optimiser state): it
 * lives in the model state struct, outside the arena, keeps its value from one invoke to the next,
 * and is set by mcu_init and mcu_reset_variables: copied from `init` when there is one (trainable
 * weights start from the model's), else filled with `reset_byte`, as TFLM's
 * ResetVariableTensors does (the zero point for int8, else 0). */
typedef struct {
  void *data;
  const void *init; /* `bytes` bytes in flash, or NULL */
  uint32_t bytes;
  uint8_t reset_byte;
} mcu_variable_t;

typedef struct {
  const mcu_tensor_t *tensors;
  const mcu_node_t *nodes;
  const int16_t *inputs;
  const int16_t *outputs;
  uint32_t num_tensors;
  uint32_t num_nodes;
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t arena_bytes;
  const mcu_dyn_plan_t *dyn; /* NULL: static offsets (allocator "static") */
  mcu_dyn_state_t *dyn_state;
  const mcu_allocator_t *allocator; /* &mcu_dyn_allocator with dyn, NULL with static offsets */
  const mcu_variable_t *variables;  /* the model's state, NULL when it has none */
  uint32_t num_variables;
  /* mcu_reset_variables with variables, NULL without: a stateless build links no reset code */
  mcu_status_t (*reset_variables)(const mcu_context_t *ctx);
} mcu_model_t;

struct mcu_context {
  const mcu_model_t *model;
  uint8_t *arena;
  int32_t failed_node; /* operator index of the last failure, -1 if none */
  const int32_t *offsets; /* dynamic modes: current tensor offsets; NULL with static offsets */
  mcu_dyn_state_t *dyn;
  int32_t scratch_offset; /* dynamic modes: the running operator's scratch offset */
};

/* Dynamic allocation hooks around operator `position` (src/allocator.c), and the table of them
 * that a generated model of a dynamic build points at. */
void mcu_dyn_reset(mcu_context_t *ctx);
/* The copy between fast and slow memory of paging: memcpy by default (a weak definition in
 * src/allocator.c); a board's port may define its own (DMA, for instance). The two ranges never
 * overlap. Moves inside the arena use memmove. */
void mcu_port_copy(void *dst, const void *src, uint32_t bytes);
void mcu_dyn_before(mcu_context_t *ctx, uint32_t position);
void mcu_dyn_after(mcu_context_t *ctx, uint32_t position);
extern const mcu_allocator_t mcu_dyn_allocator;

/* Checks the model against the arena and resets the variables (mcu_reset_variables). */
mcu_status_t mcu_init(mcu_context_t *ctx, const mcu_model_t *model, uint8_t *arena,
                      uint32_t arena_bytes);
mcu_status_t mcu_invoke(mcu_context_t *ctx);

/* Sets every variable tensor back to its initial value (TFLM's ResetVariableTensors): the state
 * of SVDF and LSTM layers is otherwise carried from one invoke to the next. Returns MCU_OK. */
mcu_status_t mcu_reset_variables(const mcu_context_t *ctx);

/* A monotonic tick counter supplied by the caller (the runtime itself knows no clock). */
typedef uint64_t (*mcu_clock_fn)(void);

/* As mcu_invoke, and adds each operator's ticks to node_ticks[position] (num_nodes entries). */
mcu_status_t mcu_invoke_profiled(mcu_context_t *ctx, mcu_clock_fn now, uint64_t *node_ticks);

/* Runs only the operators at positions first .. end - 1 (profiled when `now` is not NULL): a
 * board of a multi-board run executes its part of a model in phases, receiving tensors from
 * other boards between them. Static offsets only (MCU_ERR_UNSUPPORTED with a dynamic allocator,
 * or for a range outside the model). */
mcu_status_t mcu_invoke_nodes(mcu_context_t *ctx, uint32_t first, uint32_t end, mcu_clock_fn now,
                              uint64_t *node_ticks);

/* MCU_STATIC_OFFSETS: a build without a dynamic allocator (the generated Makefile defines it for
 * allocator "static"). Every tensor then stays at its planned arena_offset, so the accessors below
 * drop their per-access test of ctx->offsets and the interpreter its allocator hooks; mcu_init
 * rejects a model that has an allocator. */
#ifdef MCU_STATIC_OFFSETS
#define MCU_CURRENT_OFFSETS(ctx) ((const int32_t *)NULL)
#else
#define MCU_CURRENT_OFFSETS(ctx) ((ctx)->offsets)
#endif

/* Address of a dynamic allocator's offset: in the arena, or with paging (MCU_PAGED) in the slow
 * memory from the arena's size on. */
static inline uint8_t *mcu_dyn_address(const mcu_context_t *ctx, int32_t offset) {
#ifdef MCU_PAGED
  uint32_t fast = ctx->model->arena_bytes;
  if ((uint32_t)offset >= fast) {
    return ctx->model->dyn->slow + ((uint32_t)offset - fast);
  }
#endif
  return ctx->arena + offset;
}

/* Data pointer of tensor `index` (arena or flash). */
static inline void *mcu_tensor_ptr(const mcu_context_t *ctx, int32_t index) {
  const mcu_tensor_t *t = &ctx->model->tensors[index];
  if (t->arena_offset >= 0) {
    const int32_t *offsets = MCU_CURRENT_OFFSETS(ctx);
    return offsets != NULL ? mcu_dyn_address(ctx, offsets[index]) : ctx->arena + t->arena_offset;
  }
  return (void *)(uintptr_t)t->const_data;
}

static inline const mcu_tensor_t *mcu_input_tensor(const mcu_context_t *ctx, const mcu_node_t *n,
                                                   int i) {
  return n->inputs[i] < 0 ? NULL : &ctx->model->tensors[n->inputs[i]];
}

static inline const mcu_tensor_t *mcu_output_tensor(const mcu_context_t *ctx, const mcu_node_t *n,
                                                    int i) {
  return &ctx->model->tensors[n->outputs[i]];
}

static inline const void *mcu_input(const mcu_context_t *ctx, const mcu_node_t *n, int i) {
  return n->inputs[i] < 0 ? NULL : mcu_tensor_ptr(ctx, n->inputs[i]);
}

static inline void *mcu_output(const mcu_context_t *ctx, const mcu_node_t *n, int i) {
  return mcu_tensor_ptr(ctx, n->outputs[i]);
}

static inline void *mcu_scratch(const mcu_context_t *ctx, const mcu_node_t *n) {
  if (n->scratch_offset < 0) {
    return NULL;
  }
  if (MCU_CURRENT_OFFSETS(ctx) != NULL) {
    return mcu_dyn_address(ctx, ctx->scratch_offset);
  }
  return ctx->arena + n->scratch_offset;
}

/* Elements between the starts of two pixels of node `n`'s output of `channels` channels. */
static inline int32_t mcu_output_stride(const mcu_node_t *n, int32_t channels) {
  return n->out_stride > 0 ? n->out_stride : channels;
}

/* Number of elements of a tensor. */
static inline int32_t mcu_num_elements(const mcu_tensor_t *t) {
  int32_t n = 1;
  for (int i = 0; i < t->ndims; ++i) {
    n *= t->dims[i];
  }
  return n;
}

/* Dimension `i` counted from the end when negative, as in numpy. */
static inline int32_t mcu_dim(const mcu_tensor_t *t, int i) {
  return t->dims[i < 0 ? t->ndims + i : i];
}

#ifdef __cplusplus
}
#endif

#endif /* MCU_RUNTIME_H */
