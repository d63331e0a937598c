"""Reading user inputs (.npy/.npz) and writing outputs atomically (`write_atomic`, the one writer
of every file mcugen hands the user)."""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from mcugen.errors import McugenError
from mcugen.model.ir import DTYPES, Graph


def load_inputs(path: Path, graph: Graph) -> list[np.ndarray]:
    """One array per model input, checked against its shape and converted to its dtype."""
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise McugenError("input file not found", where=str(path)) from None
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise McugenError(
            f"cannot read input ({exc})",
            where=str(path),
            hint="give a .npy file (one input) or a .npz file (several)",
        ) from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            arrays = [loaded[k] for k in loaded.files]
    else:
        arrays = [loaded]
    if len(arrays) != len(graph.inputs):
        raise McugenError(
            f"{len(arrays)} input arrays given, the model has {len(graph.inputs)}", where=str(path)
        )
    result = []
    for i, (arr, t_index) in enumerate(zip(arrays, graph.inputs, strict=True)):
        t = graph.tensors[t_index]
        if arr.size != t.num_elements:
            raise McugenError(
                f"input {i} has shape {list(arr.shape)}, the model wants {list(t.shape)}",
                where=str(path),
            )
        want = np.dtype(DTYPES[t.dtype][0])
        if arr.dtype != want and not np.can_cast(arr.dtype, want, casting="same_kind"):
            raise McugenError(
                f"input {i} has dtype {arr.dtype}, the model wants {t.dtype}", where=str(path)
            )
        result.append(arr.astype(want).reshape(t.shape))
    return result


def save_outputs(path: Path, graph: Graph, outputs: list[np.ndarray]) -> None:
    """.npy for one output, .npz (named out0, out1, ...) for several; written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = io.BytesIO()
    if path.suffix == ".npz" or len(outputs) > 1:
        named: dict[str, np.ndarray] = {f"out{i}": a for i, a in enumerate(outputs)}
        np.savez(data, **named)  # type: ignore[arg-type]
    else:
        np.save(data, outputs[0])
    write_atomic(path, data.getvalue())


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_directory(path: Path) -> Path:
    """The directory `path` would be written in; one error line when it cannot hold the file
    (commands call it before any long work, write_atomic again)."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise McugenError(
            "the output directory does not exist", where=str(parent), hint="create it first"
        )
    if path.is_dir():
        raise McugenError("the output is a directory", where=str(path), hint="give a file name")
    return parent


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` (text as UTF-8) to `path` through a temporary file in the same directory and
    a rename: `path` is either as it was or complete, and the temporary file never stays."""
    path = Path(path)
    parent = output_directory(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, 0o666 & ~current_umask())  # as open() would create it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
