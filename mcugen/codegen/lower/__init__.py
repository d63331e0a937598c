"""Lowering: one TFLite operator -> the C kernel that runs it and its build-time parameters.

Each module in this package registers lowerings with `@register("OPCODE", ..., traits=...)`. A
lowering is a pure function `(graph, op) -> Lowered` that checks the operator is supported (raising
`UnsupportedError` naming the operator otherwise) and computes everything TFLM computes in Prepare:
multipliers, shifts, paddings, activation ranges. Kernels then only compute.

The same registration declares the operator's `OpTraits` (mcugen/model/traits.py): what its kernel
lets the memory planner share (a view, inputs it may overwrite, staging for running in place).
`op_traits(graph)` hands them to the planner as plain data, so the planner names no operator and
adding one never edits it. Traits never raise: an operator the runtime cannot run still gets
planned (`mcugen plan` on a model with unsupported operators).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from mcugen.errors import McugenError, ModelError, UnsupportedError
from mcugen.model.ir import Graph, Operator
from mcugen.model.tflite_write import DEFAULT_OPTIONS
from mcugen.model.traits import NO_TRAITS, OpTraits, Traits
from mcugen.registry import Registry


@dataclass(frozen=True)
class Array:
    """A constant array parameter; rendered as its own `static const` array."""

    ctype: str  # "int32_t", "float", "int8_t", "int16_t", "uint8_t"
    values: tuple[int | float, ...]


Value = int | float | bool | Array
#: A kernel's parameters: (C field name, value); a name "m.f" is field f of the struct member m.
Params = tuple[tuple[str, Value], ...]


def member(name: str, params: Params) -> Params:
    """`params` as the fields of the parameter struct's member `name` (a struct shared by several
    kernels' parameters, such as mcu_requant_params_t)."""
    return tuple((f"{name}.{field}", value) for field, value in params)


def fields(params: Params) -> dict[str, Value]:
    """The parameters by field name, whichever member holds them ("rq.shifts" is "shifts")."""
    return {name.rpartition(".")[2]: value for name, value in params}


@dataclass(frozen=True)
class LayerKernel:
    """A kernel specialised for one layer at codegen: the generated model.c instantiates `macro`
    (a runtime header's, in `Lowered.headers`) with the layer's constants `args`, once for each
    distinct (macro, args), and runs the operator through `entry(node, ctx, <the instance>)`."""

    macro: str
    args: tuple[int, ...]
    entry: str


@dataclass(frozen=True)
class Lowered:
    kernel: str  # file stem: runtime_c/kernels/reference/<kernel>.c, mcu/kernels/<kernel>.h
    function: str  # C eval function, of type mcu_eval_t
    params_type: str | None = None  # C struct type of the parameters, None if the kernel has none
    params: tuple[tuple[str, Value], ...] = ()
    scratch_bytes: int = 0
    #: the implementation: "reference", or the name of an optimised variant (lower/variants.py)
    variant: str = "reference"
    #: C files under runtime_c/kernels/ that define `function`; () is reference/<kernel>.c
    sources: tuple[str, ...] = ()
    #: headers besides mcu/kernels/<kernel>.h that declare `params_type`
    headers: tuple[str, ...] = ()
    #: constant tensors whose bytes this kernel wants laid out its own way: (tensor, bytes of
    #: the same length); only for a tensor no other operator reads
    constants: tuple[tuple[int, bytes], ...] = ()
    #: the sharing this implementation allows, when it differs from the operator's registered
    #: traits (an optimised kernel that runs in place with its own scratch); None: the registered
    traits: OpTraits | None = None
    #: the layer's own code, instantiated in model.c (None: `function` runs it)
    layer: LayerKernel | None = None
    #: the kernel writes its NHWC output at the pixel stride of its node's `out_stride` (0: its
    #: channels), so the planner may put the output in a concatenation's channel slice
    #: (`OpTraits.strided_output`, plan/channel_slices.py)
    output_stride: bool = False
    #: the kernel computes output pixels in row-major order, each written after the reads of
    #: the earlier ones (pixel by pixel, or pairs or strips of windows gathered first), so the
    #: output may start the operator's `OpTraits.input_after` bytes before its input
    #: (mcugen/model/overlap.py); a kernel that does not say so never gets that sharing
    pixels_in_order: bool = False

    @property
    def c_sources(self) -> tuple[str, ...]:
        return self.sources or (f"reference/{self.kernel}.c",)


Lowering = Callable[[Graph, Operator], Lowered]
#: An operator's traits: constant for the opcode, or computed from its shapes and options.
TraitsFn = Callable[[Graph, Operator], OpTraits]


@dataclass(frozen=True)
class OperatorEntry:
    """What the registry holds per opcode: the lowering, the kernel's sharing traits, and the
    element types its kernels compute on (`types`, those of input `data_input`), which `lower`
    checks before the lowering runs and `mcugen ops` prints."""

    lower: Lowering
    traits: TraitsFn
    types: tuple[str, ...]
    data_input: int = 0


LOWERINGS: Registry[OperatorEntry] = Registry("operator", listed_by="mcugen ops")
_loaded = False


def _constant(traits: OpTraits) -> TraitsFn:
    def same(graph: Graph, op: Operator) -> OpTraits:
        return traits

    return same


def register(
    *opcodes: str,
    traits: OpTraits | TraitsFn = NO_TRAITS,
    types: tuple[str, ...],
    data_input: int = 0,
) -> Callable[[Lowering], Lowering]:
    """Register the decorated lowering for `opcodes`, with the kernel's `traits` (a constant, or a
    function of the graph and operator that never raises) and the element `types` of its data
    input (input `data_input`): every registration declares them, `lower` refuses any other
    before the lowering runs, so the list `mcugen ops` prints is the list that is enforced."""
    traits_fn = traits if callable(traits) else _constant(traits)

    def wrap(fn: Lowering) -> Lowering:
        for code in opcodes:
            LOWERINGS.add(code, OperatorEntry(fn, traits_fn, tuple(types), data_input))
        return fn

    return wrap


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


def supported_opcodes() -> list[str]:
    _load_all()
    return list(LOWERINGS.names())


def registry_key(op: Operator) -> str:
    """The name an operator's lowering is registered under: its opcode, or "CUSTOM:<code>" for a
    custom operator (TFLM's signal library: "CUSTOM:SignalWindow", ...)."""
    return f"CUSTOM:{op.custom_code}" if op.custom_code is not None else op.opcode


def op_traits(
    graph: Graph, lowered: Mapping[int, Lowered] | None = None, *, concat_in_place: bool = True
) -> Traits:
    """Operator index -> the traits its kernel declares, for every operator that shares something
    or is spatially local (unsupported operators share nothing). With `lowered` (operator -> the
    kernel chosen), a variant's own sharing replaces the registered one, and the chosen kernel
    says whether it writes at an output stride; the window is the operator's, whichever kernel
    runs it. Without `concat_in_place`, no concatenation takes its inputs as channel slices."""
    _load_all()
    found: dict[int, OpTraits] = {}
    for op in graph.operators:
        if registry_key(op) not in LOWERINGS:
            continue
        chosen = lowered.get(op.index) if lowered is not None else None
        traits = LOWERINGS[registry_key(op)].traits(graph, op)
        if chosen is not None and chosen.traits is not None:
            traits = replace(chosen.traits, window=traits.window)
        if chosen is not None and not chosen.pixels_in_order and traits.input_after is not None:
            traits = replace(traits, input_after=None)
        if chosen is not None and chosen.output_stride:
            traits = replace(traits, strided_output=True)
        if not concat_in_place and traits.channel_slices:
            traits = replace(traits, channel_slices=False)
        if traits.shares or traits.window is not None:
            found[op.index] = traits
    return MappingProxyType(found)


def lower(graph: Graph, op: Operator) -> Lowered:
    """The kernel call for `op`, or an `UnsupportedError` that names the operator."""
    _load_all()
    key = registry_key(op)
    if op.custom_code is not None and key not in LOWERINGS:
        what = (
            f"{op.label}: custom operator {op.custom_code} is not supported"
            if op.custom_code
            else f"custom operator with an empty name (operator {op.index}) is not supported"
        )
        raise UnsupportedError(
            what,
            hint="`mcugen ops` lists the operators mcugen runs; replace it with those, or run it "
            "outside the model",
        )
    if key not in LOWERINGS:
        raise UnsupportedError(
            f"{op.label}: operator {op.opcode} is not supported by the mcugen runtime",
            hint="`mcugen ops` lists the operators mcugen runs; replace it with those, or run it "
            "outside the model",
        )
    expected = DEFAULT_OPTIONS.get(op.opcode, "")
    if op.options_type and expected and op.options_type != expected:
        raise ModelError(
            f"{op.label}: carries {op.options_type}, but {op.opcode} takes {expected}",
            hint="TFLM would ignore those options; the file is corrupt",
        )
    entry = LOWERINGS[key]
    data = op.inputs[entry.data_input] if entry.data_input < len(op.inputs) else -1
    if 0 <= data < len(graph.tensors) and graph.tensors[data].dtype not in entry.types:
        t = graph.tensors[data]
        raise UnsupportedError(
            f"{op.label}: tensor {t.index} has type {t.dtype}; supported: {', '.join(entry.types)}",
            hint=f"`mcugen ops {key}` lists the types and kernels of {key}",
        )
    from mcugen.codegen.lower._ort import ort_lowering_for

    lowering = ort_lowering_for(graph, op) or entry.lower  # --onnx-numerics ort
    try:
        return lowering(graph, op)
    except McugenError as exc:  # a check of a shared helper (quant.py) does not know the operator
        if exc.what.startswith(op.label):
            raise
        raise type(exc)(f"{op.label}: {exc.what}", hint=exc.hint) from None


# Every lowering module registers itself on import; load them all now, so that `LOWERINGS` is
# complete for anyone who reads it.
_load_all()


def lower_for(graph: Graph, op: Operator, *, kernels: str = "opt", core: str = "host") -> Lowered:
    """`lower`, then the first optimised variant (lower/_variants.py) for `core` that takes the
    operator, unless `kernels` is "reference"."""
    from mcugen.codegen.lower._variants import variants_for

    reference = lower(graph, op)
    if kernels == "reference":
        return reference
    for candidate in variants_for(registry_key(op), core):
        found = candidate.select(graph, op, reference)
        if found is not None:
            return found
    return reference
