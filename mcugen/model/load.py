"""The one place a model file is read: .tflite or .onnx, picked by suffix or content.

An ONNX file is a protobuf whose first field is `ir_version` (tag byte 0x08); a .tflite file
carries the identifier TFL3 at offset 4. The suffix decides first, so a corrupt file is reported
by the importer its name promises.
"""

from __future__ import annotations

from pathlib import Path

from mcugen.errors import ModelError, UnsupportedError
from mcugen.model import numerics as numerics_module
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model


def is_onnx(path: str | Path, head: bytes) -> bool:
    suffix = Path(path).suffix.lower()
    if suffix in (".onnx", ".tflite"):
        return suffix == ".onnx"
    return head[4:8] != b"TFL3" and head[:1] == b"\x08"


def read_model_file(path: str | Path) -> bytes:
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise ModelError("file not found", where=str(p), hint="check the path") from None
    except OSError as exc:
        raise ModelError(f"cannot read file ({exc.strerror})", where=str(p)) from None


def read_onnx_file(path: str | Path) -> bytes:
    """An ONNX file's bytes, its tensors stored in a side file (as PyTorch 2.x exports) read in:
    one self-contained model for the importer and the quantizer."""
    from mcugen.model.onnx_import.external import with_external_data

    return with_external_data(read_model_file(path), path)


def load_model(path: str | Path, *, numerics: str | None = None) -> Graph:
    """Read and import a .tflite or .onnx file; every failure is a one-line `ModelError`.
    `numerics` (mcugen/model/numerics.py, `--onnx-numerics`) is an ONNX model's arithmetic,
    onnxruntime's by default; a TFLite model has TFLite's, and naming one for it is refused."""
    buf = read_model_file(path)
    if is_onnx(path, buf):
        from mcugen.model.onnx_import import import_onnx  # onnx loads only for ONNX models

        buf = read_onnx_file(path)
        return import_onnx(buf, source=str(path), numerics=numerics or numerics_module.DEFAULT)
    if numerics is not None:
        raise UnsupportedError(
            f"--onnx-numerics {numerics} applies to ONNX models only",
            where=str(path),
            hint="a .tflite model runs TFLite's numerics (bit-exact with TFLM): drop the option",
        )
    return import_model(buf, source=str(path))


def reference_flatbuffer(path: str | Path) -> bytes:
    """The .tflite bytes TFLM's reference interpreter runs for the model at `path`: the file
    itself, or for an ONNX model its imported graph with TFLite's numerics (before any rewrite)
    written as TFLite: the same kernels' reference on the same converted graph (onnxruntime's
    outputs differ by the requantisation rounding, docs/onnx.md; with `--onnx-numerics ort`
    onnxruntime is the reference, mcugen/reference.py)."""
    buf = read_model_file(path)
    if not is_onnx(path, buf):
        return buf
    from mcugen.model.onnx_import import import_onnx

    buf = read_onnx_file(path)
    return write_model(import_onnx(buf, source=str(path), numerics=numerics_module.FIXED))
