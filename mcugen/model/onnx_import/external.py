"""ONNX external data: weights kept in a side file next to the model (`torch.onnx.export` in
PyTorch 2.x writes `model.onnx.data` beside `model.onnx`), read in so that the importer and the
quantizer see one self-contained model.

Each tensor stored externally names a `location` (a path relative to the model's folder), an
`offset` and a `length` in bytes. The location must stay inside the model's folder (an absolute
path or one climbing out of it is refused: a model file cannot make mcugen read any other file),
the file must exist and hold the bytes named. Every failure is one `ModelError` line naming the
model and the tensor. Complexity: one read per externally stored tensor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import onnx

from mcugen.errors import ModelError


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """The graph's initializers and every tensor attribute, sub-graphs included."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _tensors(attr.g)
            for g in attr.graphs:
                yield from _tensors(g)


def with_external_data(buf: bytes, path: str | Path) -> bytes:
    """`buf` (the model file at `path`) with its externally stored tensors read in from beside
    it; `buf` itself when it has none (or is no ONNX protobuf: the importer says so)."""
    model = onnx.ModelProto()
    try:
        model.ParseFromString(buf)
    except Exception:  # noqa: BLE001 - the importer reports a corrupt file in its own words
        return buf
    external = [t for t in _tensors(model.graph) if t.data_location == onnx.TensorProto.EXTERNAL]
    if not external:
        return buf
    folder = Path(path).resolve().parent
    for tensor in external:
        fields = {entry.key: entry.value for entry in tensor.external_data}
        tensor.raw_data = _read(folder, fields, tensor.name, str(path))
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
    return model.SerializeToString()


def _read(folder: Path, fields: dict[str, str], name: str, where: str) -> bytes:
    location = fields.get("location", "")
    target = (folder / location).resolve()
    if not location or Path(location).is_absolute() or not target.is_relative_to(folder):
        raise ModelError(
            f"tensor {name!r} is stored in {location!r}, outside the model's folder",
            where=where,
            hint="external data must sit beside the model: re-export it or keep the data inline",
        )
    try:
        offset, length = int(fields.get("offset", "0")), fields.get("length")
        with target.open("rb") as f:
            f.seek(offset)
            data = f.read() if length is None else f.read(int(length))
    except FileNotFoundError:
        raise ModelError(
            f"tensor {name!r} is stored in {location!r}, which is not beside the model",
            where=where,
            hint="copy the data file the exporter wrote next to the .onnx file",
        ) from None
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"tensor {name!r}: cannot read its external data {location!r} ({exc})",
            where=where,
            hint="the data file is corrupt; re-export the model",
        ) from None
    if length is not None and len(data) != int(length):
        raise ModelError(
            f"tensor {name!r}: {location!r} holds {len(data)} of its {length} bytes",
            where=where,
            hint="the data file is truncated; re-export the model",
        )
    return data
