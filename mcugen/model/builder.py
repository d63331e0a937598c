"""A small builder for Graph IR models: the project's own test models and generated benchmarks.

b = GraphBuilder()
x = b.input((1, 8, 8, 3), "int8", scale=0.05, zero_point=-3)
y = b.activation((1, 8, 8, 4), "int8", scale=0.1, zero_point=2)
b.op("CONV_2D", [x, b.const(w, scale=ws), b.const(bias, scale=bs)], [y], padding=0, ...)
b.output(y)
model_bytes = b.tflite()
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, TypedDict, Unpack

import numpy as np

from mcugen.model.ir import Graph, Operator, Quantization, Tensor
from mcugen.model.tflite_write import write_model

_NP_TO_DTYPE = {
    "float32": "float32",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool",
    "float16": "float16",
    "uint32": "uint32",
}

OPERATOR_VERSIONS = {"FULLY_CONNECTED": 4, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 3}


def _quant(
    scale: float | Sequence[float] | None, zero_point: int | Sequence[int] | None, axis: int
) -> Quantization | None:
    if scale is None:
        return None
    scales = tuple(float(np.float32(s)) for s in np.atleast_1d(scale))
    if zero_point is None:
        zps: tuple[int, ...] = (0,) * len(scales)
    else:
        zps = tuple(int(z) for z in np.atleast_1d(zero_point))
        if len(zps) == 1 and len(scales) > 1:
            zps = zps * len(scales)
    return Quantization(scales=scales, zero_points=zps, axis=axis)


class TensorQuant(TypedDict, total=False):
    """The keywords GraphBuilder.input and variable take as activation does."""

    scale: Any
    zero_point: Any
    name: str | None


class GraphBuilder:
    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.tensors: list[Tensor] = []
        self.operators: list[Operator] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def _add(
        self,
        shape: Sequence[int],
        dtype: str,
        scale: Any,
        zero_point: Any,
        axis: int,
        data: bytes | None,
        name: str | None,
        is_variable: bool = False,
    ) -> int:
        index = len(self.tensors)
        self.tensors.append(
            Tensor(
                index=index,
                name=name or f"t{index}",
                shape=tuple(int(d) for d in shape),
                dtype=dtype,
                quant=_quant(scale, zero_point, axis),
                data=data,
                is_variable=is_variable,
            )
        )
        return index

    def input(self, shape: Sequence[int], dtype: str, **quant: Unpack[TensorQuant]) -> int:
        """An activation the model reads as its next input."""
        t = self.activation(shape, dtype, **quant)
        self.inputs.append(t)
        return t

    def activation(
        self,
        shape: Sequence[int],
        dtype: str,
        *,
        scale: Any = None,
        zero_point: Any = None,
        name: str | None = None,
    ) -> int:
        return self._add(shape, dtype, scale, zero_point, 0, None, name)

    def variable(
        self,
        shape: Sequence[int],
        dtype: str,
        *,
        initial: np.ndarray | None = None,
        **quant: Unpack[TensorQuant],
    ) -> int:
        """A variable tensor (an operator's state, kept across invokes); `initial` is written as
        its buffer (TFLM ignores it and starts from zero, or the int8 zero point)."""
        data = None if initial is None else np.ascontiguousarray(initial).tobytes()
        scale, zero_point, name = quant.get("scale"), quant.get("zero_point"), quant.get("name")
        return self._add(shape, dtype, scale, zero_point, 0, data, name, is_variable=True)

    def const(
        self,
        array: np.ndarray,
        *,
        scale: Any = None,
        zero_point: Any = None,
        axis: int = 0,
        name: str | None = None,
    ) -> int:
        arr = np.asarray(array)  # not ascontiguousarray, which turns a scalar into shape (1,)
        dtype = _NP_TO_DTYPE[str(arr.dtype)]
        return self._add(arr.shape, dtype, scale, zero_point, axis, arr.tobytes(), name)

    def op(
        self,
        opcode: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        *,
        version: int | None = None,
        **options: Any,
    ) -> int:
        """Add an operator; `options` are its builtin options, except `intermediates`, the
        operator's intermediate tensors (the quantized LSTM's, as the converter writes them)."""
        intermediates = tuple(options.pop("intermediates", ()))
        index = len(self.operators)
        opts = {k: (tuple(v) if isinstance(v, list | tuple) else v) for k, v in options.items()}
        self.operators.append(
            Operator(
                index=index,
                opcode=opcode,
                version=version or OPERATOR_VERSIONS.get(opcode, 1),
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                options=MappingProxyType(opts),
                intermediates=intermediates,
            )
        )
        return index

    def custom(
        self, code: str, inputs: Sequence[int], outputs: Sequence[int], options: bytes = b""
    ) -> int:
        """Add custom operator `code` (TFLM's signal library: "SignalWindow", ...) with its
        FlexBuffer `options`."""
        index = len(self.operators)
        self.operators.append(
            Operator(
                index=index,
                opcode="CUSTOM",
                version=1,
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                custom_code=code,
                custom_options=options,
            )
        )
        return index

    def output(self, *tensors: int) -> None:
        self.outputs.extend(tensors)

    def graph(self) -> Graph:
        return Graph(
            tensors=tuple(self.tensors),
            operators=tuple(self.operators),
            inputs=tuple(self.inputs),
            outputs=tuple(self.outputs),
            name=self.name,
        )

    def tflite(self) -> bytes:
        return write_model(self.graph())
