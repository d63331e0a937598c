"""Backward rules, one module per family of forward operators (the package docstring of
mcugen/train/gradients.py says how they are used). A rule is registered with `@gradient(OPCODE)`;
every module of this package is imported by `load_rules`, so adding one needs no other edit."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcugen.codegen.quant import ACT_NONE
from mcugen.model.ir import Operator
from mcugen.registry import Registry
from mcugen.train.builder import Parameter, TrainBuilder
from mcugen.train.graph import UPDATED_IN_PLACE, Optimiser

#: A rule: (context, forward operator, gradient of each output or None) -> {input tensor: grad}.
GradRule = Callable[["GradContext", Operator, tuple[int | None, ...]], dict[int, int]]
GRADIENTS: Registry[GradRule] = Registry("gradient")


@dataclass
class GradContext:
    b: TrainBuilder
    produced: set[int]
    params: dict[int, Parameter]
    param_grads: dict[int, int]
    optimiser: Optimiser

    def needs_grad(self, t: int) -> bool:
        """Tensor `t` carries a gradient: a float activation written by the float part."""
        return t >= 0 and t in self.produced

    def param_grad(self, t: int) -> int | None:
        """A new gradient tensor for `t` when it is a trained parameter, else None."""
        if t < 0 or t not in self.params:
            return None
        self.param_grads[t] = self.b.like(t, "grad")
        return self.param_grads[t]

    def update_in_place(self, t: int) -> tuple[list[int], dict[str, Any]]:
        """The extra inputs and options of a backward kernel that applies the SGD step to the
        trained parameter `t` itself, one output channel at a time, so that its whole gradient
        never exists; ([-1, -1, -1], {}) when `t` does not train."""
        if t < 0 or t not in self.params:
            return [-1, -1, -1], {}
        self.param_grads[t] = UPDATED_IN_PLACE
        return self.optimiser.fused_inputs(t), self.optimiser.fused_options()

    def grad_like(self, t: int) -> int:
        return self.b.like(t, "grad")

    def custom(self, code: str, inputs: list[int], outputs: list[int], **options: Any) -> None:
        self.b.operator("CUSTOM", inputs, outputs, custom=code, **options)

    def builtin(self, opcode: str, inputs: list[int], outputs: list[int], **options: Any) -> None:
        self.b.operator(opcode, inputs, outputs, **options)

    def constant(self, values: np.ndarray, name: str) -> int:
        dtype = {"int32": "int32", "float32": "float32"}[str(values.dtype)]
        return self.b.tensor(values.shape, dtype, name, data=values.tobytes())

    def through_activation(self, op: Operator, dy: int) -> int:
        """dy through the operator's fused activation (taken from its output)."""
        act = int(op.options.get("fused_activation_function", ACT_NONE))
        if act == ACT_NONE:
            return dy
        dz = self.grad_like(op.outputs[0])
        self.custom(
            "McugenActivationGrad", [dy, op.outputs[0]], [dz], fused_activation_function=act
        )
        return dz


def gradient(*opcodes: str) -> Callable[[GradRule], GradRule]:
    def wrap(rule: GradRule) -> GradRule:
        for code in opcodes:
            GRADIENTS.add(code, rule)
        return rule

    return wrap


def load_rules() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
