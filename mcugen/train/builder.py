"""The blocks a training graph is built from (train/graph.py): a trained tensor with its
optimiser state (`Parameter`), the builder that keeps the model's tensor indices and appends
tensors and forward and training operators (`TrainBuilder`), and a constant as float32."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator, Tensor


@dataclass(frozen=True)
class Parameter:
    """One trained tensor: the model's `model_tensor` (input `role` of operator `op`), the variable
    `tensor` in the training graph and `forward_tensor` in the forward graph, and its optimiser
    state (variables in the training graph, -1 when not kept)."""

    op: int
    role: str  # "weights" or "bias"
    model_tensor: int
    tensor: int
    forward_tensor: int
    accumulator: int = -1
    momentum: int = -1


@dataclass
class TrainBuilder:
    """Tensors and operators of the graph being built; indices of `model` tensors are kept."""

    tensors: list[Tensor]
    forward_ops: list[Operator] = field(default_factory=list)
    train_ops: list[Operator] = field(default_factory=list)

    def tensor(
        self,
        shape: Sequence[int],
        dtype: str,
        name: str,
        *,
        data: bytes | None = None,
        variable: bool = False,
    ) -> int:
        index = len(self.tensors)
        self.tensors.append(
            Tensor(
                index=index,
                name=name,
                shape=tuple(int(d) for d in shape),
                dtype=dtype,
                data=data,
                is_variable=variable,
                keeps_initial=variable and data is not None,
            )
        )
        return index

    def like(self, t: int, suffix: str, dtype: str = "float32") -> int:
        src = self.tensors[t]
        return self.tensor(src.shape, dtype, f"{src.name}/{suffix}")

    def operator(
        self,
        opcode: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        *,
        custom: str | None = None,
        forward: bool = False,
        **options: Any,
    ) -> None:
        ops = self.forward_ops if forward else self.train_ops
        ops.append(
            Operator(
                index=-1,
                opcode="CUSTOM" if custom else opcode,
                version=1,
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                options=MappingProxyType(dict(options)),
                custom_code=custom,
            )
        )


def dequantized(t: Tensor) -> np.ndarray:
    """A constant tensor as float32: (q - zero point) * scale, per channel along its axis."""
    values = t.array()
    if t.dtype == "float32":
        return np.array(values, dtype=np.float32)
    if t.quant is None:
        raise UnsupportedError(f"tensor {t.index} ({t.name}): {t.dtype} without quantization")
    shape = [1] * values.ndim
    if t.quant.per_channel:
        axis = t.quant.axis
        if axis >= values.ndim:
            # converters copy the weights' channel axis (3 for a depthwise) onto 1-D biases; the
            # scales then run along the only axis, as TFLM reads them
            if values.ndim != 1 or values.size != len(t.quant.scales):
                raise UnsupportedError(
                    f"tensor {t.index} ({t.name}): per-channel axis {axis} of a "
                    f"{values.ndim}-D tensor"
                )
            axis = 0
        shape[axis] = -1
    scales = np.array(t.quant.scales, dtype=np.float32).reshape(shape)
    zero_points = np.array(t.quant.zero_points, dtype=np.float32).reshape(shape)
    return ((values.astype(np.float32) - zero_points) * scales).astype(np.float32)
