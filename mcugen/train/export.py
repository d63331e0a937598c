"""The model with its trained weights, as a graph to write as .tflite.

- `float_model`: the training graph's forward model (the frozen int8 part, DEQUANTIZE, the float
  part with the trained weights as float32 constants). Its output is float32 (probabilities).
- `requantized_model`: the model as it came, int8 throughout, with each trained tensor
  requantised: weights symmetric per output channel (scale max|w| / 127, zero point 0, the
  model's channel axis), biases int32 at input scale x weight scale. Activations keep the
  model's scales: training that moves activations far outside their ranges saturates them, and
  the float model is then the faithful one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Graph, Quantization, Tensor
from mcugen.train.graph import TrainingGraph


def trained_values(tg: TrainingGraph, state: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Model tensor -> its trained float32 value, from a run's state."""
    return {p.model_tensor: state[p.tensor].astype(np.float32) for p in tg.params}


def float_model(tg: TrainingGraph, state: dict[int, np.ndarray]) -> Graph:
    tensors = list(tg.forward.tensors)
    for p in tg.params:
        t = tensors[p.forward_tensor]
        tensors[p.forward_tensor] = replace(
            t,
            data=state[p.tensor].astype(np.float32).tobytes(),
            is_variable=False,
            keeps_initial=False,
        )
    return replace(tg.forward, tensors=tuple(tensors))


def requantized_model(tg: TrainingGraph, state: dict[int, np.ndarray]) -> Graph:
    model = tg.model
    tensors = list(model.tensors)
    trained = trained_values(tg, state)
    for p in sorted(tg.params, key=lambda q: q.role != "weights"):  # weights first: biases use them
        op = model.operators[p.op]
        if p.role == "weights":
            tensors[p.model_tensor] = _weights(
                model.tensors[p.model_tensor], trained[p.model_tensor]
            )
        else:
            x = model.tensors[op.inputs[0]]
            w = tensors[op.inputs[1]]
            tensors[p.model_tensor] = _bias(
                model.tensors[p.model_tensor], trained[p.model_tensor], x, w
            )
    return replace(model, tensors=tuple(tensors))


def _weights(t: Tensor, values: np.ndarray) -> Tensor:
    if t.quant is None or t.dtype != "int8":
        raise UnsupportedError(f"tensor {t.index} ({t.name}): only int8 weights requantise")
    axis = t.quant.axis if t.quant.per_channel else 0
    moved = np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)
    peaks = np.abs(moved).max(axis=1)
    if not t.quant.per_channel:
        peaks = np.array([peaks.max()])
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    shape = [1] * values.ndim
    if t.quant.per_channel:
        shape[axis] = -1
    q = np.clip(np.round(values / scales.reshape(shape)), -127, 127).astype(np.int8)
    quant = Quantization(
        tuple(float(s) for s in scales), (0,) * len(scales), axis if t.quant.per_channel else 0
    )
    return replace(t, data=q.tobytes(), quant=quant)


def _bias(t: Tensor, values: np.ndarray, x: Tensor, w: Tensor) -> Tensor:
    if t.dtype != "int32" or x.quant is None or w.quant is None:
        raise UnsupportedError(f"tensor {t.index} ({t.name}): only int32 biases requantise")
    scales = np.float64(x.quant.scale) * np.array(w.quant.scales, dtype=np.float64)
    scales = np.broadcast_to(scales, values.shape)
    q = np.clip(np.round(values / scales), -(2**31), 2**31 - 1).astype(np.int32)
    quant = Quantization(tuple(float(s) for s in scales), (0,) * len(scales), 0)
    return replace(t, data=q.tobytes(), quant=quant)
