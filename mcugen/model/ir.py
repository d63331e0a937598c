"""Graph IR: the frozen, plain-data form of one TensorFlow Lite subgraph.

Everything downstream (planners, codegen) reads these dataclasses and never mutates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

#: dtype name -> (numpy dtype, bytes per element). Names follow TFLite's TensorType, lower case.
DTYPES: Mapping[str, tuple[str, int]] = MappingProxyType(
    {
        "float32": ("<f4", 4),
        "float16": ("<f2", 2),
        "float64": ("<f8", 8),
        "int8": ("i1", 1),
        "uint8": ("u1", 1),
        "int16": ("<i2", 2),
        "uint16": ("<u2", 2),
        "int32": ("<i4", 4),
        "uint32": ("<u4", 4),
        "int64": ("<i8", 8),
        "uint64": ("<u8", 8),
        "bool": ("?", 1),
    }
)


def element_size(dtype: str) -> int:
    return DTYPES[dtype][1]


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel on `axis`."""

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def scale(self) -> float:
        return self.scales[0]

    @property
    def zero_point(self) -> int:
        return self.zero_points[0]


@dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: Quantization | None = None
    data: bytes | None = field(default=None, repr=False)
    is_variable: bool = False
    #: a variable whose `data` is its initial value (a training graph's weights, mcugen/train/);
    #: a variable read from a file starts from zero or its zero point, as in TFLM, whatever its
    #: buffer holds
    keeps_initial: bool = False

    @cached_property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @cached_property
    def nbytes(self) -> int:
        """Computed once per tensor (a frozen dataclass: the shape and type never change; the
        planners ask for it hundreds of thousands of times on a tiled graph)."""
        return self.num_elements * element_size(self.dtype)

    @property
    def is_constant(self) -> bool:
        """Read-only data from the file. A variable is never constant, even with a buffer: TFLM
        gives it its own memory and resets it (`MicroInterpreterGraph::ResetVariableTensors`)."""
        return self.data is not None and not self.is_variable

    def array(self) -> np.ndarray:
        """The constant data as a numpy array of this tensor's shape."""
        if self.data is None:
            raise ValueError(f"tensor {self.index} ({self.name}) has no constant data")
        return np.frombuffer(self.data, dtype=DTYPES[self.dtype][0]).reshape(self.shape)


@dataclass(frozen=True)
class Operator:
    """One operator. `inputs` may hold -1 for an omitted optional input."""

    index: int
    opcode: str
    version: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    intermediates: tuple[int, ...] = ()
    custom_code: str | None = None
    options_type: str = ""  # the flatbuffer options table, e.g. "Conv2DOptions"; "" if none
    custom_options: bytes = b""

    @property
    def label(self) -> str:
        name = f"CUSTOM:{self.custom_code}" if self.custom_code is not None else self.opcode
        return f"operator {self.index} ({name})"


@dataclass(frozen=True)
class Graph:
    """One subgraph of a model, with the metadata mcugen keeps from the file."""

    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    name: str = ""
    sha256: str = ""
    metadata: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))

    def producers(self) -> dict[int, int]:
        """Tensor index -> index of the operator that writes it."""
        return {t: op.index for op in self.operators for t in op.outputs}

    def consumers(self) -> dict[int, list[int]]:
        """Tensor index -> indices of the operators that read it, in stored order."""
        result: dict[int, list[int]] = {}
        for op in self.operators:
            for t in op.inputs:
                if t >= 0:
                    result.setdefault(t, []).append(op.index)
        return result

    def variable_tensors(self) -> list[int]:
        """Variable tensors the operators use (SVDF and LSTM state): they keep their values across
        invokes, so they live outside the arena, in the persistent state area."""
        used = {t for op in self.operators for t in (*op.inputs, *op.outputs) if t >= 0}
        return sorted(t for t in used if self.tensors[t].is_variable)

    def activation_tensors(self) -> list[int]:
        """Tensors that live in the arena: everything not constant and not a variable."""
        used = set(self.inputs) | set(self.outputs)
        for op in self.operators:
            used.update(t for t in op.inputs if t >= 0)
            used.update(op.outputs)
        return sorted(
            t for t in used if not self.tensors[t].is_constant and not self.tensors[t].is_variable
        )
