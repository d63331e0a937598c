"""One operator's view model: its node record (inputs, outputs, kernel function, scratch, the
arena offsets a pool or a staged copy gives it) and its parameters as C initialisers; the
re-laid constants the optimised kernels read instead of the model's."""

from __future__ import annotations

from mcugen.codegen.lower import Array, LayerKernel, Lowered, Value
from mcugen.codegen.vm_types import (
    ArrayVM,
    LayerVM,
    NodeVM,
    ParamVM,
)
from mcugen.model.ir import Graph


def node_vm(
    position: int,
    graph: Graph,
    index: int,
    low: Lowered,
    scratch_offset: int,
    emitted: dict[tuple[str, str], str],
) -> NodeVM:
    """The node of operator `index` at `position`; `emitted` maps each array parameter already
    emitted by an earlier node (type and values) to its symbol, so that it is emitted once, and
    each layer kernel instance (macro and arguments) to its symbol."""
    op = graph.operators[index]
    params = []
    arrays: list[ArrayVM] = []
    for name, value in low.params:
        params.append(param_vm(index, name, value, arrays, emitted))
    return NodeVM(
        position,
        index,
        op.opcode,
        low.function,
        low.params_type,
        tuple(params),
        tuple(arrays),
        op.inputs,
        op.outputs,
        scratch_offset,
        low.variant,
        layer=None if low.layer is None else layer_vm(index, low.layer, emitted),
    )


def layer_vm(index: int, layer: LayerKernel, emitted: dict[tuple[str, str], str]) -> LayerVM:
    """Operator `index`'s own kernel, defined here unless an earlier node defined the same
    instance (VWW's five 6x6 depthwise layers share one)."""
    key = (layer.macro, repr(layer.args))
    define = key not in emitted
    if define:
        emitted[key] = f"g_op{index}_kernel"
    return LayerVM(emitted[key], layer.macro, layer.args, layer.entry, define)


def param_vm(
    index: int,
    name: str,
    value: Value,
    arrays: list[ArrayVM],
    emitted: dict[tuple[str, str], str],
) -> ParamVM:
    """One parameter; an array one as the symbol of its array, a new one in `arrays` unless an
    earlier node emitted the same type and values (the tiles of a patch stage share their
    operator's multipliers, shifts and biases: 12,902 bytes of VWW's 8x8 stage)."""
    if isinstance(value, Array):
        values = value.values or (0,)
        key = (value.ctype, repr(values))  # repr: -0.0 is not 0.0 (a bias's sign of zero counts)
        if key not in emitted:
            emitted[key] = f"g_op{index}_{name.replace('.', '_')}"  # "rq.shifts": g_opN_rq_shifts
            is_float = value.ctype in ("float", "double")
            arrays.append(ArrayVM(emitted[key], value.ctype, values, is_float))
        return ParamVM(name, "array", emitted[key])
    if isinstance(value, bool):
        return ParamVM(name, "int", int(value))
    if isinstance(value, float):
        return ParamVM(name, "float", value)
    return ParamVM(name, "int", int(value))


def check_relaid_readers(
    graph: Graph, lowered: dict[int, Lowered], relaid: dict[int, bytes]
) -> None:
    """Every reader of a constant a kernel variant laid out its own way reads that layout (a
    reader with another kernel would read the bytes wrong): a bug, never a user error."""
    for op in graph.operators:
        low = lowered.get(op.index)
        mine = {t for t, _ in low.constants} if low is not None else set()
        for t in op.inputs:
            if t in relaid and t not in mine:
                raise AssertionError(
                    f"tensor {t} laid out for a variant, read as stored by {op.label}"
                )


def relaid_constants(lowered: dict[int, Lowered]) -> dict[int, bytes]:
    """Tensor -> the bytes a kernel variant laid it out in (Lowered.constants), checked: the
    same length, and one layout per tensor."""
    found: dict[int, bytes] = {}
    for low in lowered.values():
        for tensor, data in low.constants:
            if found.get(tensor, data) != data:
                raise AssertionError(f"tensor {tensor} laid out two ways")
            found[tensor] = data
    return found
