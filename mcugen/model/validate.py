"""Model-level validation of an imported graph, before any planning or codegen (house style 7b).

What every later stage relies on, whatever the operators are:
- structure: a tensor is a constant or a variable, not both; one writer per tensor and never a
  constant; at least one graph input; graph inputs neither constant, written nor
  empty; graph outputs written, inputs or constants; every operator input available before it is
  read (no cycles, no use before definition);
- sizes: every tensor's element count and bytes fit the runtime's 32-bit arithmetic (int32 dims and
  element counts, uint32 byte sizes computed on the device);
- quantization: scales finite and positive, zero points in the range of the tensor's type (int32
  for types without a narrower one: the runtime holds zero points in int32);
- options: every number finite.
Operator-level rules (operand counts, shapes, types and options against a kernel) live in each
operator's lowering (mcugen/codegen/lower). Each violation is one `ModelError` line naming the
tensor or operator. O(tensors + operator operands).
"""

from __future__ import annotations

import math

from mcugen.errors import ModelError
from mcugen.model.ir import DTYPES, Graph, Operator, Tensor

INT32_MAX = 2**31 - 1
#: Zero point range per tensor type; other types hold their zero point in an int32.
ZERO_POINT_RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
}
CORRUPT = "the file is corrupt or was not written by a TensorFlow Lite converter"


def validate_graph(graph: Graph, source: str) -> None:
    """Every model-level rule; raises the first violation as a one-line `ModelError`."""
    for tensor in graph.tensors:
        _check_tensor(tensor, source)
    for op in graph.operators:
        _check_options(op, source)
    produced = _check_writers(graph, source)
    _check_graph_io(graph, produced, source)
    _check_acyclic(graph, produced, source)


def _fail(what: str, source: str, hint: str = CORRUPT) -> ModelError:
    return ModelError(what, where=source, hint=hint)


def _label(tensor: Tensor) -> str:
    return f"tensor {tensor.index} ({tensor.name})" if tensor.name else f"tensor {tensor.index}"


def _check_tensor(tensor: Tensor, source: str) -> None:
    """Type known, size within 32-bit device arithmetic, quantization usable."""
    if tensor.dtype not in DTYPES:
        raise _fail(f"{_label(tensor)} has unsupported type {tensor.dtype}", source)
    if tensor.nbytes > INT32_MAX:
        raise _fail(
            f"{_label(tensor)} of shape {tensor.shape} and type {tensor.dtype} holds "
            f"{tensor.nbytes} bytes, more than the 2^31-1 a microcontroller can address",
            source,
            "reduce the model's input size or re-export it with fixed, smaller shapes",
        )
    q = tensor.quant
    if q is None:
        return
    for scale in q.scales:
        if not (math.isfinite(scale) and scale > 0.0):
            raise _fail(
                f"{_label(tensor)} has quantization scale {scale}; scales must be "
                "finite and positive",
                source,
            )
    lo, hi = ZERO_POINT_RANGES.get(tensor.dtype, (-INT32_MAX - 1, INT32_MAX))
    for zp in q.zero_points:
        if not lo <= zp <= hi:
            raise _fail(
                f"{_label(tensor)} of type {tensor.dtype} has zero point {zp}, outside "
                f"[{lo}, {hi}]",
                source,
            )


def _check_options(op: Operator, source: str) -> None:
    """Every number among the options is finite: a NaN clip or beta reaches float-to-integer
    conversions that are undefined behaviour in TFLM's Prepare and ours."""
    for name, value in op.options.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(f"{op.label}: option {name} is {value}, not a finite number", source)


def _check_writers(graph: Graph, source: str) -> dict[int, int]:
    """Tensor -> the one operator that writes it; constants are never written."""
    produced: dict[int, int] = {}
    for op in graph.operators:
        for t in op.outputs:
            if t < 0:
                raise _fail(f"{op.label} has an omitted output (-1)", source)
            if t in produced:
                raise _fail(
                    f"tensor {t} is written by operators {produced[t]} and {op.index}", source
                )
            if graph.tensors[t].is_constant:
                raise _fail(f"{op.label} writes constant tensor {t}", source)
            produced[t] = op.index
    return produced


def _check_graph_io(graph: Graph, produced: dict[int, int], source: str) -> None:
    """Graph inputs are filled by the caller: never constants (read-only data), written or empty
    (the runtimes' protocols exchange inputs as bytes); there is at least one. Outputs are
    written, inputs or constants."""
    if not graph.inputs:
        raise _fail("the model has no inputs", source)
    for t in graph.inputs:
        tensor = graph.tensors[t]
        if tensor.nbytes == 0:
            raise _fail(f"subgraph input {_label(tensor)} of shape {tensor.shape} is empty", source)
        if tensor.is_constant:
            raise _fail(
                f"subgraph input {_label(tensor)} is a constant (it has data in the file)", source
            )
        if t in produced:
            raise _fail(f"subgraph input {t} is also written by operator {produced[t]}", source)
    for t in graph.outputs:
        tensor = graph.tensors[t]
        written = t in produced or t in graph.inputs or tensor.is_variable  # state: in place
        if not written and not tensor.is_constant:
            raise _fail(f"subgraph output {t} is never written", source)


def _check_acyclic(graph: Graph, produced: dict[int, int], source: str) -> None:
    """Every operator input is a constant, a variable, a subgraph input or written earlier."""
    available = set(graph.inputs)
    for op in graph.operators:
        for t in op.inputs:
            if t < 0 or t in available:
                continue
            tensor = graph.tensors[t]
            if tensor.is_constant or tensor.is_variable:
                continue
            when = "before it is written" if t in produced else "that nothing writes"
            raise _fail(f"{op.label} reads {_label(tensor)} {when}", source)
        available.update(op.outputs)
