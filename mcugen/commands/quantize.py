"""`mcugen quantize MODEL.onnx --data CALIB.npz -o OUT.onnx`: a float ONNX model (a PyTorch
export) quantized by onnxruntime's static quantizer from calibration samples, in the QDQ form
every other command takes (docs/onnx.md). onnxruntime is needed for this command only.

Activations are uint8 by default: onnxruntime on x86-64 fuses every uint8 QDQ group into its
quantized kernels, which `--onnx-numerics ort` reproduces bit for bit, where it runs int8 groups
at a fork (a tensor read by two operators) or with an int8 constant operand in float
(onnx_import/fusion.py); mcugen runs both the same way (uint8 stored as int8, zero point - 128).
int8 activations in the QOperator form (`--format qoperator`) are fused throughout as well.
Before quantizing, a mean over the map written as ReduceMean (PyTorch 2.x's export of
`x.mean((2, 3))` and `nn.AdaptiveAvgPool2d(1)`) becomes GlobalAveragePool, which onnxruntime
fuses (onnx_import/means.py); weights stored beside the model are read in
(onnx_import/external.py)."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from mcugen.errors import McugenError, ModelError
from mcugen.model.load import read_onnx_file
from mcugen.model.numerics import float_nodes_note
from mcugen.model.onnx_import import import_onnx
from mcugen.outputs import write_file

HELP = "quantize a float .onnx model from calibration data (onnxruntime's static quantizer)"
OUTPUTS = (("output", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="the float .onnx model")
    p.add_argument(
        "--data",
        type=Path,
        required=True,
        help=".npz of calibration samples, one array per model input named as it (any name for "
        "a one-input model), the samples along the first axis",
    )
    p.add_argument("-o", "--output", type=Path, required=True, help="the quantized .onnx model")
    p.add_argument(
        "--activations",
        choices=("uint8", "int8"),
        default="uint8",
        help="activation type (default uint8: onnxruntime fuses every uint8 QDQ group, so its "
        "outputs and mcugen's agree exactly; int8 QDQ groups at forks it runs in float)",
    )
    p.add_argument(
        "--format",
        choices=("qdq", "qoperator"),
        default="qdq",
        help="QuantizeLinear/DequantizeLinear around float operators (default), or QLinearConv, "
        "QLinearAdd, ... (onnxruntime runs those as they are, int8 included)",
    )
    p.add_argument(
        "--per-tensor",
        action="store_true",
        help="one weight scale per tensor (default: per channel)",
    )


def _inputs(model: bytes, where: str) -> dict[str, tuple[int, ...]]:
    import onnx

    m = onnx.ModelProto()
    try:
        m.ParseFromString(model)
    except Exception:
        raise ModelError("not a valid ONNX protobuf", where=where) from None
    if any(
        n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.op_type.startswith("QLinear")
        for n in m.graph.node
    ):
        raise McugenError(
            "the model is quantized already", where=where, hint="plan, build or verify it as it is"
        )
    consts = {t.name for t in m.graph.initializer}
    return {
        i.name: tuple(d.dim_value for d in i.type.tensor_type.shape.dim)
        for i in m.graph.input
        if i.name not in consts
    }


def _samples(path: Path, inputs: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Each input's calibration samples, shaped (samples, *input shape)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k], np.float32) for k in data.files}
    except (OSError, ValueError) as exc:
        raise McugenError(f"cannot read the calibration data ({exc})", where=str(path)) from None
    if len(inputs) == 1 and len(arrays) == 1:
        arrays = {next(iter(inputs)): next(iter(arrays.values()))}
    found = {}
    for name, shape in inputs.items():
        if name not in arrays:
            raise McugenError(
                f"no array for input {name!r}",
                where=str(path),
                hint=f"name the arrays as the inputs: {', '.join(inputs)}",
            )
        arr = arrays[name]
        if arr.shape[1:] == shape[1:] and shape[:1] == (1,):
            arr = arr[:, None]
        if arr.ndim < 1 or arr.shape[1:] != shape or arr.shape[0] < 1:
            raise McugenError(
                f"input {name!r} samples have shape {arr.shape}; expected (samples, *{shape})",
                where=str(path),
            )
        found[name] = arr
    return found


def _pooled(buf: bytes) -> tuple[bytes, int]:
    """The float model with its means over the map as GlobalAveragePool, and how many."""
    import onnx

    from mcugen.model.onnx_import.means import pooled_means

    model = onnx.ModelProto()
    try:
        model.ParseFromString(buf)
    except Exception:  # noqa: BLE001 - the checks after it report a corrupt file
        return buf, 0
    rewritten, count = pooled_means(model)
    return (rewritten.SerializeToString(), count) if count else (buf, 0)


def cmd_quantize(args: argparse.Namespace) -> int:
    try:
        from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    except ImportError:
        raise McugenError(
            "onnxruntime is not installed", hint="pip install 'mcugen[onnx]'"
        ) from None
    model, pooled = _pooled(read_onnx_file(args.model))
    samples = _samples(args.data, _inputs(model, str(args.model)))
    count = min(len(a) for a in samples.values())

    class Reader:  # onnxruntime's CalibrationDataReader protocol
        def __init__(self) -> None:
            self.batches: Iterator[dict[str, np.ndarray]] = iter(
                {name: arr[k] for name, arr in samples.items()} for k in range(count)
            )

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    kind = QuantType.QInt8 if args.activations == "int8" else QuantType.QUInt8
    with tempfile.TemporaryDirectory(prefix="mcugen-quantize-") as tmp:
        source, out = Path(tmp) / "float.onnx", Path(tmp) / "quantized.onnx"
        source.write_bytes(model)
        logging.disable(logging.WARNING)  # its advice to pre-process first
        try:
            quantize_static(
                str(source),
                str(out),
                Reader(),
                quant_format=QuantFormat.QDQ if args.format == "qdq" else QuantFormat.QOperator,
                per_channel=not args.per_tensor,
                activation_type=kind,
                weight_type=QuantType.QInt8,
            )
        except Exception as exc:
            raise McugenError(
                f"onnxruntime's quantizer failed: {exc}",
                where=str(args.model),
                hint="is it a float ONNX model with fixed input shapes?",
            ) from None
        finally:
            logging.disable(logging.NOTSET)
        data = out.read_bytes()
        graph = import_onnx(data, source=str(args.output))  # refused here, not by the next command
        write_file(args.output, data)
    print(
        f"mcugen: wrote {args.output}: {len(graph.operators)} operators, int8 weights "
        f"({'per tensor' if args.per_tensor else 'per channel'}), {args.activations} "
        f"activations ({args.format}), calibrated on {count} samples"
    )
    if pooled:
        print(
            f"mcugen: {args.model}: {pooled} ReduceMean over H and W written as GlobalAveragePool "
            "(the same float values; onnxruntime quantizes it, ReduceMean it runs in float)"
        )
    note = float_nodes_note(graph)
    if note is not None:
        print(f"mcugen: note: {args.output}: {note}", file=sys.stderr)
    return 0
