"""What the templates print, as frozen records (the view model's types): tensors, operator nodes
and their parameters, constants, variables, a dynamic allocator's tables, the arena's pools, and
the model. codegen/viewmodel.py fills them from the graph, the plan and the lowerings."""

from __future__ import annotations

from dataclasses import dataclass

C_TYPES = {
    "float32": "MCU_FLOAT32",
    "int8": "MCU_INT8",
    "uint8": "MCU_UINT8",
    "int16": "MCU_INT16",
    "int32": "MCU_INT32",
    "int64": "MCU_INT64",
    "bool": "MCU_BOOL",
    "uint16": "MCU_UINT16",
    "uint32": "MCU_UINT32",
    "uint64": "MCU_UINT64",
    "float16": "MCU_FLOAT16",
    "float64": "MCU_FLOAT64",
}


MAX_DIMS = 6


#: What the runtime's tables hold (runtime.h): int32 arena offsets, int16 tensor indices, uint8
#: operand counts, uint16 operator indices.
MAX_ARENA_BYTES = 2**31 - 1


MAX_TENSORS = 2**15 - 1


MAX_OPERANDS = 255


MAX_OPERATORS = 2**16 - 1


@dataclass(frozen=True)
class TensorVM:
    index: int
    name: str
    type_enum: str
    dims: tuple[int, ...]
    nbytes: int
    arena_offset: int  # -1 when constant or variable
    data_symbol: str | None
    state_offset: int = -1  # a variable: its offset in the model state struct's `variables`
    #: In a pool besides the first (plan/pools): the pool's array and the offset in it; the
    #: tensor table then holds its address (`const_data`), so kernels pay nothing for pools.
    pool_symbol: str = ""
    pool_offset: int = 0


@dataclass(frozen=True)
class ParamVM:
    name: str
    kind: str  # "int", "float", "array"
    value: int | float | str  # array: symbol name


@dataclass(frozen=True)
class ArrayVM:
    symbol: str
    ctype: str
    values: tuple[int | float, ...]
    is_float: bool


@dataclass(frozen=True)
class StagedVM:
    """An operator's weights copied into the arena before it runs (plan/weight_staging.py):
    constant `source_tensor` (`source`, in flash) to `offset`, where table entry `tensor` is."""

    tensor: int
    source_tensor: int
    source: str
    offset: int
    nbytes: int
    reads: int


@dataclass(frozen=True)
class LayerVM:
    """An operator's own kernel (lower.LayerKernel): `macro(symbol, args...)` defines `symbol`
    where `define` (the first node of that macro and those args), and g_op<index>_layer runs the
    operator through `entry(node, ctx, symbol)`."""

    symbol: str
    macro: str
    args: tuple[int, ...]
    entry: str
    define: bool


@dataclass(frozen=True)
class NodeVM:
    position: int
    index: int
    opcode: str
    function: str
    params_type: str | None
    params: tuple[ParamVM, ...]
    arrays: tuple[ArrayVM, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    scratch_offset: int
    variant: str = "reference"  # the kernel implementation (codegen/lower/_variants.py)
    staged: StagedVM | None = None  # its weights staged into the arena first
    layer: LayerVM | None = None  # its own kernel, instantiated in model.c
    out_stride: int = 0  # output pixel stride in elements, its output a channel slice (0: dense)


@dataclass(frozen=True)
class VariableVM:
    """A variable tensor in the persistent state area (runtime.h mcu_variable_t)."""

    tensor: int
    offset: int
    nbytes: int
    reset_byte: int
    init_symbol: str | None = None  # its initial bytes in flash (a trainable weight), or None


@dataclass(frozen=True)
class ConstantVM:
    symbol: str
    data: bytes


@dataclass(frozen=True)
class DynamicVM:
    """Constant tables of a dynamic allocator (runtime.h mcu_dyn_plan_t), lists flattened as CSR."""

    mode: str
    planned: int
    num_steps: int
    num_offsets: int  # entries of the RAM table of tensor offsets
    moved_bytes: int
    buffer_bytes: tuple[int, ...]
    initial_offsets: tuple[int, ...]
    member_start: tuple[int, ...]
    member_tensor: tuple[int, ...]
    member_inner: tuple[int, ...]
    born_start: tuple[int, ...]
    born_buffer: tuple[int, ...]
    dies_start: tuple[int, ...]
    dies_buffer: tuple[int, ...]
    move_start: tuple[int, ...]
    move_buffer: tuple[int, ...]
    move_offset: tuple[int, ...]  # paged: -1 - d re-addresses to d without a copy
    scratch_buffer: tuple[int, ...]
    #: paging: bytes of slow memory, and its linker section ("": an array in RAM)
    slow_bytes: int = 0
    slow_section: str = ""


@dataclass(frozen=True)
class PoolVM:
    """One pool's array (plan/pools): the first is `mcu_arena`, each in its memory's section."""

    name: str
    symbol: str
    bytes: int
    section: str
    firmware: bool = False  # the memory that also holds the firmware's .data, .bss and stack


#: The arrays' names and sections: templates/link.ld.j2 places `.bss.mcu_pool.<name>` in the
#: memory <name>; the `.bss` prefix makes them no-load, with no bytes in flash.
ARENA_SYMBOL = "mcu_arena"


POOL_SECTION = ".bss.mcu_pool.{}"


@dataclass(frozen=True)
class ModelVM:
    version: str
    model_sha256: str
    model_name: str
    arena_bytes: int
    tensors: tuple[TensorVM, ...]
    nodes: tuple[NodeVM, ...]
    constants: tuple[ConstantVM, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    headers: tuple[str, ...]
    kernels: tuple[str, ...]
    #: C files under runtime_c/kernels/ the operators' functions are in (reference/ and opt/)
    kernel_sources: tuple[str, ...]
    output_scales: tuple[float, ...]  # 1.0 / 0 for float outputs: real = scale * (q - zp)
    output_zero_points: tuple[int, ...]
    sha256_bytes: tuple[int, ...]
    mlperf_model_id: str  # what the MLPerf Tiny runner's "profile%" reports: kws01, vww01, ...
    input_bytes: tuple[int, ...]  # per input; the MLPerf runner's database holds the first
    dynamic: DynamicVM | None = None  # allocator "compacting" or "planned"; None: static offsets
    state_bytes: int = 0  # the persistent area of the variable tensors (plan/persistent.py)
    #: the linker section of the state when it lives in the board's external RAM (an array of its
    #: own there, templates/link.ld.j2), "" when it is in the model state struct in RAM
    state_section: str = ""
    variables: tuple[VariableVM, ...] = ()
    input_kept: bool = False  # input 0 intact through an inference (MemoryPlan.input_kept)
    input_copy_section: str = ""  # the runner's input copy in paging's external memory
    pools: tuple[PoolVM, ...] = ()  # a split arena, one array per memory; () for one arena
    #: the generated header's file name, as model.c includes it (a library export prefixes it)
    header: str = "model.h"
    #: model.c defines the arena; False when the application passes its own (mcugen export)
    own_arena: bool = True
    staged_bytes: int = 0  # weights copied into the arena per inference (MemoryPlan.staged)
