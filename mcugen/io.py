"""Reading user inputs (.npy/.npz) and saving a run's outputs (through mcugen/outputs.py, the one
writer of every file mcugen hands the user)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

from mcugen.errors import McugenError
from mcugen.model.ir import DTYPES, Graph, Tensor
from mcugen.outputs import write_file


def load_inputs(path: Path, graph: Graph, *, quantize: bool = False) -> list[np.ndarray]:
    """One array per model input, of exactly its shape and dtype: nothing is converted
    silently (uint8 200 would become int8 -56, a channels-first array of the right size would
    be read in the wrong order). With `quantize`, a float array for a quantized input is
    quantized with the input's own scale and zero point (`quantize_input`)."""
    arrays = _read_arrays(path)
    if len(arrays) != len(graph.inputs):
        raise McugenError(
            f"{len(arrays)} input arrays given, the model has {len(graph.inputs)}", where=str(path)
        )
    result = []
    for i, (arr, t_index) in enumerate(zip(arrays, graph.inputs, strict=True)):
        t = graph.tensors[t_index]
        where = f"{path}, input {i} ({_short(t.name)})"
        _check_shape(arr, t.shape, where)
        want = np.dtype(DTYPES[t.dtype][0])
        if arr.dtype == want:
            result.append(arr)
        elif quantize and arr.dtype.kind == "f" and _quantized(t):
            result.append(quantize_input(arr, t, where))
        else:
            raise McugenError(
                f"the array is {arr.dtype}, the model's input is {t.dtype}",
                where=where,
                hint=_dtype_hint(arr, t, want),
            )
    return result


def _read_arrays(path: Path) -> list[np.ndarray]:
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise McugenError("input file not found", where=str(path)) from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise McugenError(
            f"cannot read input ({exc})",
            where=str(path),
            hint="give a .npy file (one input) or a .npz file (several)",
        ) from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        try:
            with loaded:
                return [loaded[k] for k in loaded.files]
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise McugenError(f"cannot read input ({exc})", where=str(path)) from None
    return [loaded]


def _short(name: str) -> str:
    return name if len(name) <= 60 else name[:57] + "..."


def _check_shape(arr: np.ndarray, shape: tuple[int, ...], where: str) -> None:
    got, want = tuple(arr.shape), tuple(shape)
    if got == want:
        return
    hint = f"reshape it to {list(want)}"
    if len(want) == 4 and got == (want[0], want[3], want[1], want[2]) and want[3] != want[1]:
        hint = "it looks channels-first (NCHW); the model is NHWC: x.transpose(0, 2, 3, 1)"
    elif got == want[1:] and want[:1] == (1,):
        hint = "add the batch dimension: x[np.newaxis]"
    raise McugenError(
        f"the array has shape {list(got)}, the model's input is {list(want)}",
        where=where,
        hint=hint,
    )


def _quantized(t: Tensor) -> bool:
    return (
        t.quant is not None and len(t.quant.scales) == 1 and t.dtype in ("int8", "uint8", "int16")
    )


def quantize_input(arr: np.ndarray, t: Tensor, where: str) -> np.ndarray:
    """round(x / scale) + zero_point, saturated to the input's type (TFLite's quantization)."""
    assert t.quant is not None
    if not np.all(np.isfinite(arr)):
        raise McugenError("the float array holds NaN or Inf: it cannot be quantized", where=where)
    want = np.dtype(DTYPES[t.dtype][0])
    info = np.iinfo(want)
    q = np.round(arr.astype(np.float64) / t.quant.scales[0]) + t.quant.zero_points[0]
    return np.clip(q, info.min, info.max).astype(want)


def _dtype_hint(arr: np.ndarray, t: Tensor, want: np.dtype) -> str:
    if arr.dtype == np.uint8 and want == np.int8:
        return "subtract 128 for uint8 images: (x.astype(np.int16) - 128).astype(np.int8)"
    if arr.dtype == np.int8 and want == np.uint8:
        return "add 128: (x.astype(np.int16) + 128).astype(np.uint8)"
    if arr.dtype.kind == "f" and _quantized(t):
        assert t.quant is not None
        return (
            f"quantize it (round(x / {t.quant.scales[0]:.6g}) + {t.quant.zero_points[0]}), or "
            "add --quantize-input to let mcugen do exactly that"
        )
    fits = arr.size == 0 or (
        want.kind in "iu"
        and arr.dtype.kind in "iub"
        and np.iinfo(want).min <= arr.min()
        and arr.max() <= np.iinfo(want).max
    )
    if fits or (want.kind == "f" and arr.dtype.kind in "fiu"):
        return f"convert it: x.astype(np.{want.name})"
    return f"its values do not fit {t.dtype}: give data of the model's input type"


def save_outputs(path: Path, graph: Graph, outputs: list[np.ndarray]) -> None:
    """.npy for one output, .npz (named out0, out1, ...) for several; written atomically."""
    data = io.BytesIO()
    if path.suffix == ".npz" or len(outputs) > 1:
        named: dict[str, np.ndarray] = {f"out{i}": a for i, a in enumerate(outputs)}
        np.savez(data, **named)  # type: ignore[arg-type]
    else:
        np.save(data, outputs[0])
    write_file(Path(path), data.getvalue())
