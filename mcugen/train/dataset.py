"""A training run's data: an .npz with the samples `x` and the labels or targets `y`, loaded and
checked against the training graph before anything is planned or built.

The checks, in order: the file is an .npz holding x and y; each holds at least one sample, and as
many as the other; x's samples have the model input's shape (its batch dimension of 1 may be left
out) and type; a float x holds only finite values; y holds, per sample, integer classes in
[0, classes) (cross-entropy) or finite float targets of the output's shape (mean squared error).
Each failure is one error line naming the file, the array and the first bad sample. mcugen never
converts data: a sample of another type or layout is refused with the conversion that fixes it,
never wrapped, cast or quantized silently. O(size of the data).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from mcugen.errors import McugenError
from mcugen.model.ir import DTYPES, Tensor
from mcugen.train.graph import TrainingGraph
from mcugen.train.steps import Dataset

SAVE_HINT = "save it with numpy.savez(path, x=samples, y=labels)"


def load_dataset(path: Path) -> Dataset:
    """x and y from an .npz, or one error line saying what is missing or unreadable."""
    try:
        with open(path, "rb") as file:
            data = np.load(file, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise McugenError("not an .npz but a single array", where=str(path), hint=SAVE_HINT)
            with data:
                missing = [k for k in ("x", "y") if k not in data.files]
                if missing:
                    held = ", ".join(name[:40] for name in data.files[:6]) or "nothing"
                    raise McugenError(
                        f"the dataset has no {' or '.join(missing)} (it holds {held})",
                        where=str(path),
                        hint=SAVE_HINT,
                    )
                return Dataset(np.asarray(data["x"]), np.asarray(data["y"]))
    except FileNotFoundError:
        raise McugenError("dataset file not found", where=str(path)) from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise McugenError(f"not a readable .npz ({exc})", where=str(path), hint=SAVE_HINT) from None


def check_dataset(
    tg: TrainingGraph, data: Dataset, where: str = "", *, held_out: bool = False
) -> None:
    """One error line for data that does not fit the training graph (the module's checks);
    `held_out`: the data is only evaluated, not trained on."""
    graph = tg.graph
    if len(graph.inputs) != 3:
        raise McugenError("training takes models with one input", where=where)
    x_t = graph.tensors[graph.inputs[0]]
    _check_counts(data, where)
    _check_sample_shape(data.x, x_t, where)
    _check_sample_type(data.x, x_t, where)
    _check_finite(data.x, "x", where, held_out)
    if tg.loss == "cross_entropy":
        _check_labels(tg, data.y, where)
    else:
        _check_targets(graph.tensors[tg.label], data.y, where, held_out)


def _check_counts(data: Dataset, where: str) -> None:
    for name, array in (("x", data.x), ("y", data.y)):
        if array.ndim == 0:
            raise McugenError(
                f"{name} is a single value, not one per sample",
                where=f"{where}, {name}",
                hint="x: [samples, *the model input's shape], y: [samples]",
            )
    if data.x.shape[0] == 0 or data.y.shape[0] == 0:
        raise McugenError(
            f"the dataset holds no sample (x has {data.x.shape[0]}, y {data.y.shape[0]})",
            where=where,
            hint="x: [samples, *the model input's shape], y: [samples]",
        )
    if data.y.shape[0] != data.x.shape[0]:
        raise McugenError(
            f"{data.y.shape[0]} labels for {data.x.shape[0]} samples",
            where=where,
            hint="y holds one label (or target) per sample of x, in the same order",
        )


def sample_shapes(shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The shapes one sample may have: the tensor's, and without its batch dimension of 1."""
    if len(shape) > 1 and shape[0] == 1:
        return (shape, shape[1:])
    return (shape,)


def _check_sample_shape(x: np.ndarray, x_t: Tensor, where: str) -> None:
    got = tuple(int(d) for d in x.shape[1:])
    if got in sample_shapes(x_t.shape):
        return
    raise McugenError(
        f"samples of shape {got}; the model takes {x_t.shape}",
        where=f"{where}, x",
        hint=_layout_hint(got, x_t.shape),
    )


def _layout_hint(got: tuple[int, ...], model: tuple[int, ...]) -> str:
    """The transpose of x that fixes channels-first samples, else what x should hold."""
    want = sample_shapes(model)[-1]
    offset = 1 if len(got) == len(want) + 1 and got[0] == 1 else 0
    core = got[offset:]
    if len(core) == len(want) >= 3 and core[0] == want[-1] and core[1:] == want[:-1]:
        channel = 1 + offset
        axes = (*range(channel), *range(channel + 1, 1 + len(got)), channel)
        return f"x looks channels-first (NCHW); the model takes channels last: x.transpose{axes}"
    if int(np.prod(got, dtype=np.int64)) == int(np.prod(want, dtype=np.int64)):
        return f"as many values in another layout: reshape or transpose x to [samples, *{want}]"
    return "x holds [samples, *the model input's shape]"


def _check_sample_type(x: np.ndarray, x_t: Tensor, where: str) -> None:
    want = np.dtype(DTYPES[x_t.dtype][0])
    if x.dtype == want:
        return
    raise McugenError(
        f"samples of type {x.dtype}; the model takes {x_t.dtype}",
        where=f"{where}, x",
        hint=_conversion(x, x_t, want),
    )


def _conversion(x: np.ndarray, x_t: Tensor, want: np.dtype) -> str:
    """How to turn x into the model input's type; mcugen train converts nothing itself."""
    if want == np.int8 and x.dtype == np.uint8:
        return (
            "uint8 data for an int8 input: subtract 128, (x.astype(np.int16) - 128).astype(np.int8)"
        )
    if want.kind in "iu" and x.dtype.kind in "iu" and x.size:
        info = np.iinfo(want)
        if info.min <= int(x.min()) and int(x.max()) <= info.max:
            return f"its values fit {want.name}: x = x.astype(np.{want.name})"
    if want.kind in "iu" and x_t.quant is not None:
        info = np.iinfo(want)
        scale, zero = x_t.quant.scale, x_t.quant.zero_point
        return (
            f"mcugen train does not quantize: quantize x with the input's scale {scale:.6g} and "
            f"zero point {zero}, np.clip(np.round(x / {scale:.6g}) + {zero}, {info.min}, "
            f"{info.max}).astype(np.{want.name})"
        )
    if want.kind == "f" and x.dtype.kind == "f":
        return f"x = x.astype(np.{want.name})"
    return f"convert x to {want.name} as the model's training data was"


def _check_finite(values: np.ndarray, name: str, where: str, held_out: bool) -> None:
    """A float array's first sample that holds NaN or an infinity, as an error."""
    if values.dtype.kind != "f":
        return
    with np.errstate(over="ignore"):
        as_float32 = values.astype(np.float32)
    bad = np.flatnonzero(~np.isfinite(as_float32.reshape(len(values), -1)).all(axis=1))
    if bad.size == 0:
        return
    first = int(bad[0])
    kind = "NaN" if np.isnan(values[first]).any() else "an infinity"
    verb = "holds" if bad.size == 1 else "hold"
    raise McugenError(
        f"sample {first} holds {kind} ({bad.size} of {len(values)} samples {verb} NaN or an "
        "infinity" + (" as float32" if values.dtype != np.float32 else "") + ")",
        where=f"{where}, {name}[{first}]",
        hint="remove or repair them"
        + ("" if held_out else ": one such sample turns every trained weight into NaN"),
    )


def _check_labels(tg: TrainingGraph, y: np.ndarray, where: str) -> None:
    classes = _classes(tg)
    per_sample = tg.graph.tensors[tg.label].num_elements
    if y[0].size != per_sample:
        one_hot = y.ndim == 2 and per_sample == 1 and y.shape[1] == classes
        raise McugenError(
            f"labels of shape {tuple(y.shape[1:])}; the model wants {per_sample} integer "
            "class per sample",
            where=f"{where}, y",
            hint="one-hot labels: y = y.argmax(axis=1)" if one_hot else "y: [samples]",
        )
    if y.dtype.kind not in "iu":
        integral = y.dtype.kind == "f" and bool(np.all(np.isfinite(y) & (np.round(y) == y)))
        raise McugenError(
            f"labels of type {y.dtype}; the model wants integer classes 0 to {classes - 1}",
            where=f"{where}, y",
            hint="y = y.astype(np.int64)" if integral else "y holds class indices",
        )
    labels = y.reshape(y.shape[0], -1)
    bad = np.flatnonzero(((labels < 0) | (labels >= classes)).any(axis=1))
    if bad.size:
        first = int(bad[0])
        value = int(labels[first][(labels[first] < 0) | (labels[first] >= classes)][0])
        verb = "has" if bad.size == 1 else "have"
        raise McugenError(
            f"label {value} of sample {first} is outside the model's {classes} classes "
            f"(0 to {classes - 1}; {bad.size} of {len(y)} samples {verb} such a label)",
            where=f"{where}, y[{first}]",
            hint="number the classes from 0, as the model's output does",
        )


def _classes(tg: TrainingGraph) -> int:
    out = tg.forward.tensors[tg.forward.outputs[0]]
    return out.shape[-1] if out.shape else 1


def _check_targets(label_t: Tensor, y: np.ndarray, where: str, held_out: bool) -> None:
    if tuple(y.shape[1:]) not in sample_shapes(label_t.shape):
        raise McugenError(
            f"targets of shape {tuple(y.shape[1:])}; the model's output is {label_t.shape}",
            where=f"{where}, y",
            hint="y holds [samples, *the model output's shape] (mean squared error)",
        )
    if y.dtype.kind != "f":
        raise McugenError(
            f"targets of type {y.dtype}; mean squared error wants float targets",
            where=f"{where}, y",
            hint="y = y.astype(np.float32), in the output's real values",
        )
    _check_finite(y, "y", where, held_out)
