"""Import a .tflite flatbuffer into the Graph IR.

Every structural problem (truncation, bad identifier, indices out of range, absurd vector lengths
from flipped bits) becomes one `ModelError` line naming the place; the flatbuffer accessors are
never trusted to fail cleanly by themselves. The imported graph then passes the model-level rules
of mcugen/model/validate.py before anything plans or lowers it.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
import tflite

from mcugen.errors import ModelError
from mcugen.model.ir import Graph, Operator, Quantization, Tensor
from mcugen.model.validate import validate_graph

_OPCODE_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
_OPTION_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_TENSOR_TYPES = {
    0: "float32",
    1: "float16",
    2: "int32",
    3: "uint8",
    4: "int64",
    6: "bool",
    7: "int16",
    9: "int8",
    10: "float64",
    12: "uint64",
    15: "uint32",
    16: "uint16",
}
_TENSOR_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
_SKIP_OPTION_METHODS = {"Init", "GetRootAs"}

T = TypeVar("T")

#: Custom operators whose kernel keeps state from one invoke to the next and copies it to an
#: output after each invoke (TFLM's spectral subtraction: its noise estimate, in a persistent
#: buffer reset at Prepare and by Reset, copied to output 1). That output is imported as a variable
#: tensor: it lives in the persistent state area, is reset with the other variables, and the
#: kernel updates it in place. Written back, the tensor stays variable, which TFLM runs alike.
KERNEL_STATE_OUTPUTS = {"SignalFilterBankSpectralSubtraction": 1}


def load_model(path: str | Path) -> Graph:
    """Read and import a .tflite file; every failure is a one-line `ModelError`."""
    p = Path(path)
    try:
        buf = p.read_bytes()
    except FileNotFoundError:
        raise ModelError("file not found", where=str(p), hint="check the path") from None
    except OSError as exc:
        raise ModelError(f"cannot read file ({exc.strerror})", where=str(p)) from None
    return import_model(buf, source=str(p))


def import_model(buf: bytes, *, source: str = "<bytes>") -> Graph:
    """Import the first (only) subgraph of a .tflite flatbuffer held in memory."""
    _check_header(buf, source)
    try:
        return _Importer(buf, source).run()
    except ModelError:
        raise
    except Exception:  # the flatbuffer accessors raise anything on corrupt offsets
        raise ModelError(
            f"malformed .tflite flatbuffer: an offset or length in it does not fit the "
            f"{len(buf)}-byte file",
            where=source,
            hint="the file is truncated or corrupt; re-export it from the converter",
        ) from None


def _check_header(buf: bytes, source: str) -> None:
    if len(buf) < 8:
        raise ModelError(
            f"file is {len(buf)} bytes, too short for a .tflite model",
            where=source,
            hint="the file is truncated or empty",
        )
    if buf[4:8] != b"TFL3":
        raise ModelError(
            f"wrong file identifier {buf[4:8]!r}, expected b'TFL3'",
            where=source,
            hint="this is not a TensorFlow Lite flatbuffer",
        )
    (root,) = struct.unpack_from("<I", buf, 0)
    if root + 4 > len(buf):
        raise ModelError(
            f"root table offset {root} lies past the end of the {len(buf)}-byte file",
            where=source,
            hint="the file is truncated",
        )


class _Importer:
    def __init__(self, buf: bytes, source: str) -> None:
        self.buf = buf
        self.source = source
        self.model = tflite.Model.GetRootAs(buf, 0)

    def fail(self, what: str, where: str = "", hint: str = "") -> ModelError:
        loc = f"{self.source}, {where}" if where else self.source
        return ModelError(what, where=loc, hint=hint)

    def count(self, n: int, what: str, elem: int = 4) -> int:
        """A vector length, checked against the file size so flipped bits cannot make it huge."""
        if n < 0 or n * elem > len(self.buf):
            raise self.fail(
                f"{what} claims {n} entries, more than the file can hold",
                hint="the file is corrupt",
            )
        return n

    def run(self) -> Graph:
        m = self.model
        nsub = self.count(m.SubgraphsLength(), "subgraph list")
        if nsub == 0:
            raise self.fail("model has no subgraph")
        if nsub > 1:
            raise self.fail(
                f"model has {nsub} subgraphs; mcugen supports one",
                hint="control flow (IF/WHILE/CALL_ONCE) is not supported yet",
            )
        sg = m.Subgraphs(0)
        codes = self.operator_codes()
        buffers = self.buffers()
        tensors = tuple(
            self.tensor(sg.Tensors(i), i, buffers)
            for i in range(self.count(sg.TensorsLength(), "tensor list"))
        )
        ntens = len(tensors)
        ops = tuple(
            self.operator(sg.Operators(i), i, codes, ntens)
            for i in range(self.count(sg.OperatorsLength(), "operator list"))
        )
        inputs = self.indices(
            sg.InputsAsNumpy() if sg.InputsLength() else [], ntens, "subgraph inputs"
        )
        outputs = self.indices(
            sg.OutputsAsNumpy() if sg.OutputsLength() else [], ntens, "subgraph outputs"
        )
        tensors = _kernel_state_as_variables(tensors, ops)
        graph = Graph(
            tensors=tensors,
            operators=ops,
            inputs=inputs,
            outputs=outputs,
            name=_text(sg.Name()),
            sha256=hashlib.sha256(self.buf).hexdigest(),
            metadata=MappingProxyType(self.metadata(buffers)),
        )
        validate_graph(graph, self.source)
        return graph

    def operator_codes(self) -> list[tuple[str, int, str | None]]:
        result = []
        for i in range(self.count(self.model.OperatorCodesLength(), "operator code list")):
            oc = self.model.OperatorCodes(i)
            code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
            name = _OPCODE_NAMES.get(code, f"BUILTIN_{code}")
            custom = _text(oc.CustomCode()) if name == "CUSTOM" else None
            result.append((name, oc.Version(), custom))
        return result

    def buffers(self) -> list[bytes | None]:
        result: list[bytes | None] = []
        for i in range(self.count(self.model.BuffersLength(), "buffer list")):
            b = self.model.Buffers(i)
            if b.Offset() > 1:
                start, size = b.Offset(), b.Size()
                if start + size > len(self.buf):
                    raise self.fail(f"buffer {i} lies past the end of the file", hint="truncated")
                result.append(bytes(self.buf[start : start + size]))
                continue
            n = self.count(b.DataLength(), f"buffer {i}", elem=1)
            result.append(b.DataAsNumpy().tobytes() if n else None)
        return result

    def tensor(self, t: Any, index: int, buffers: list[bytes | None]) -> Tensor:
        where = f"tensor {index}"
        ttype = t.Type()
        if ttype not in _TENSOR_TYPES:
            name = _TENSOR_TYPE_NAMES.get(ttype, str(ttype))
            raise self.fail(f"tensor type {name} is not supported", where)
        dtype = _TENSOR_TYPES[ttype]
        nshape = self.count(t.ShapeLength(), f"{where} shape")
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if nshape else ()
        if any(d < 0 for d in shape):
            raise self.fail(
                f"dynamic or negative shape {shape}",
                where,
                "export the model with fixed input shapes",
            )
        bidx = t.Buffer()
        if bidx >= len(buffers):
            raise self.fail(f"buffer index {bidx} out of range ({len(buffers)} buffers)", where)
        data = buffers[bidx] if bidx > 0 else None
        result = Tensor(
            index=index,
            name=_text(t.Name()),
            shape=shape,
            dtype=dtype,
            quant=self.quantization(t.Quantization(), where),
            data=data,
            is_variable=bool(t.IsVariable()),
        )
        if data is not None and len(data) != result.nbytes:
            raise self.fail(
                f"constant data is {len(data)} bytes but shape {shape} of {dtype} needs "
                f"{result.nbytes}",
                where,
                "the file is corrupt",
            )
        return result

    def quantization(self, q: Any, where: str) -> Quantization | None:
        if q is None:
            return None
        ns = self.count(q.ScaleLength(), f"{where} scales")
        if ns == 0:
            return None
        nz = self.count(q.ZeroPointLength(), f"{where} zero points", elem=8)
        scales = tuple(float(s) for s in q.ScaleAsNumpy())
        zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if nz else (0,) * ns
        if len(zps) != len(scales):
            raise self.fail(f"{len(scales)} scales but {len(zps)} zero points", where)
        return Quantization(scales=scales, zero_points=zps, axis=int(q.QuantizedDimension()))

    def operator(
        self, op: Any, index: int, codes: list[tuple[str, int, str | None]], ntens: int
    ) -> Operator:
        where = f"operator {index}"
        ci = op.OpcodeIndex()
        if ci >= len(codes):
            raise self.fail(f"opcode index {ci} out of range ({len(codes)} codes)", where)
        name, version, custom = codes[ci]

        def vec(n: int, get: Callable[[], Any], what: str) -> tuple[int, ...]:
            return self.indices(
                get() if self.count(n, f"{where} {what}") else [],
                ntens,
                f"{where} {what}",
                allow_missing=True,
            )

        return Operator(
            index=index,
            opcode=name,
            version=version,
            inputs=vec(op.InputsLength(), op.InputsAsNumpy, "inputs"),
            outputs=vec(op.OutputsLength(), op.OutputsAsNumpy, "outputs"),
            intermediates=vec(op.IntermediatesLength(), op.IntermediatesAsNumpy, "intermediates"),
            options=MappingProxyType(_decode_options(op)),
            custom_code=custom,
            options_type=_OPTION_NAMES.get(op.BuiltinOptionsType(), "")
            if op.BuiltinOptionsType()
            else "",
            custom_options=self.custom_options(op, where),
        )

    def custom_options(self, op: Any, where: str) -> bytes:
        n = self.count(op.CustomOptionsLength(), f"{where} custom options", elem=1)
        return op.CustomOptionsAsNumpy().tobytes() if n else b""

    def indices(
        self, arr: Any, ntens: int, what: str, allow_missing: bool = False
    ) -> tuple[int, ...]:
        result = tuple(int(i) for i in arr)
        lo = -1 if allow_missing else 0
        for i in result:
            if i < lo or i >= ntens:
                raise self.fail(f"{what} refer to tensor {i}, out of range ({ntens} tensors)")
        return result

    def metadata(self, buffers: list[bytes | None]) -> dict[str, bytes]:
        result = {}
        for i in range(self.count(self.model.MetadataLength(), "metadata list")):
            md = self.model.Metadata(i)
            b = md.Buffer()
            if 0 <= b < len(buffers):
                result[_text(md.Name())] = buffers[b] or b""
        return result


def _kernel_state_as_variables(
    tensors: tuple[Tensor, ...], ops: tuple[Operator, ...]
) -> tuple[Tensor, ...]:
    """`tensors` with the state outputs of KERNEL_STATE_OUTPUTS' operators made variable."""
    marked = list(tensors)
    for op in ops:
        k = KERNEL_STATE_OUTPUTS.get(op.custom_code or "")
        if k is not None and k < len(op.outputs) and tensors[op.outputs[k]].data is None:
            marked[op.outputs[k]] = replace(tensors[op.outputs[k]], is_variable=True)
    return tuple(marked)


def _text(b: bytes | None) -> str:
    return b.decode("utf-8", errors="replace") if b else ""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _decode_options(op: Any) -> dict[str, Any]:
    """Read a builtin options table generically: every scalar getter and every vector field."""
    otype = op.BuiltinOptionsType()
    table = op.BuiltinOptions()
    if otype == 0 or table is None:
        return {}
    cls_name = _OPTION_NAMES.get(otype)
    cls = getattr(tflite, cls_name, None) if cls_name else None
    if cls is None:
        return {}
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    methods = {m for m in dir(cls) if not m.startswith("_") and m not in _SKIP_OPTION_METHODS}
    result: dict[str, Any] = {}
    for m in sorted(methods):
        if m.startswith("GetRootAs") or m.endswith("BufferHasIdentifier"):
            continue
        if m.endswith(("Length", "IsNone", "AsNumpy")):
            continue
        if f"{m}AsNumpy" in methods:
            n = getattr(obj, f"{m}Length")()
            arr = getattr(obj, f"{m}AsNumpy")() if n else np.zeros(0, dtype=np.int32)
            result[_snake(m)] = tuple(int(x) for x in arr)
        else:
            try:
                result[_snake(m)] = getattr(obj, m)()
            except TypeError:  # a getter that needs an index (vector of tables): not used by us
                continue
    return result
