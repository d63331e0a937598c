"""Write the Graph IR as a .tflite flatbuffer (schema v3) that TFLite and TFLM load.

Used for rewritten models (reordered operators, offline memory plans) and for the project's own test
models. Options are serialised generically from the decoded option mapping.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import flatbuffers
import numpy as np
import tflite

from mcugen.model.ir import Graph, Operator, Tensor

_OPCODES = {k: v for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
_OPTION_TYPES = {k: v for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_TENSOR_TYPES = {
    "float32": 0,
    "float16": 1,
    "int32": 2,
    "uint8": 3,
    "int64": 4,
    "bool": 6,
    "int16": 7,
    "int8": 9,
    "float64": 10,
    "uint64": 12,
    "uint32": 15,
    "uint16": 16,
}

#: Options table of each builtin operator, where the name is not derivable.
DEFAULT_OPTIONS: Mapping[str, str] = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "ADD": "AddOptions",
    "MUL": "MulOptions",
    "SUB": "SubOptions",
    "RESHAPE": "ReshapeOptions",
    "SQUEEZE": "SqueezeOptions",
    "SOFTMAX": "SoftmaxOptions",
    "CONCATENATION": "ConcatenationOptions",
    "PAD": "PadOptions",
    "PADV2": "PadV2Options",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "QUANTIZE": "QuantizeOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "HARD_SWISH": "HardSwishOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions",
    "PACK": "PackOptions",
    "UNPACK": "UnpackOptions",
    "SHAPE": "ShapeOptions",
    "EXPAND_DIMS": "ExpandDimsOptions",
    "TRANSPOSE": "TransposeOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "GATHER": "GatherOptions",
    "SLICE": "SliceOptions",
    "TILE": "TileOptions",
    "CAST": "CastOptions",
    "DIV": "DivOptions",
    "SVDF": "SVDFOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
}


def write_model(graph: Graph, *, description: str = "mcugen") -> bytes:
    """Serialise `graph` as a single-subgraph .tflite model."""
    return _Writer(graph).run(description)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


class _Writer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.b = flatbuffers.Builder(1024)
        self.buffers: list[bytes] = [b""]  # buffer 0: the empty sentinel

    def run(self, description: str) -> bytes:
        g = self.graph
        codes, code_index = self.operator_codes()
        tensor_offsets = [self.tensor(t) for t in g.tensors]
        op_offsets = [self.operator(op, code_index) for op in g.operators]
        sub = self.subgraph(tensor_offsets, op_offsets)
        self.buffers.extend(g.metadata.values())
        meta = self.metadata(len(self.buffers) - len(g.metadata))
        buffers = [self.buffer(data) for data in self.buffers]
        desc = self.b.CreateString(description)
        m = importlib.import_module("tflite.Model")
        subs = self.vector_of_offsets(m.ModelStartSubgraphsVector, [sub])
        code_vec = self.vector_of_offsets(m.ModelStartOperatorCodesVector, codes)
        buf_vec = self.vector_of_offsets(m.ModelStartBuffersVector, buffers)
        meta_vec = self.vector_of_offsets(m.ModelStartMetadataVector, meta) if meta else None
        m.ModelStart(self.b)
        m.ModelAddVersion(self.b, 3)
        m.ModelAddOperatorCodes(self.b, code_vec)
        m.ModelAddSubgraphs(self.b, subs)
        m.ModelAddDescription(self.b, desc)
        m.ModelAddBuffers(self.b, buf_vec)
        if meta_vec is not None:
            m.ModelAddMetadata(self.b, meta_vec)
        self.b.Finish(m.ModelEnd(self.b), file_identifier=b"TFL3")
        return bytes(self.b.Output())

    def vector_of_offsets(self, start: Any, offsets: list[int]) -> int:
        start(self.b, len(offsets))
        for off in reversed(offsets):
            self.b.PrependUOffsetTRelative(off)
        return self.b.EndVector()

    def ints(self, values: Any, dtype: Any = np.int32) -> int:
        return self.b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def operator_codes(self) -> tuple[list[int], dict[tuple[str, str | None, int], int]]:
        oc = importlib.import_module("tflite.OperatorCode")
        keys: dict[tuple[str, str | None, int], int] = {}
        for op in self.graph.operators:
            keys.setdefault((op.opcode, op.custom_code, op.version), len(keys))
        offsets = []
        for opcode, custom, version in keys:
            code = _OPCODES[opcode]
            custom_off = self.b.CreateString(custom) if custom is not None else None
            oc.OperatorCodeStart(self.b)
            oc.OperatorCodeAddDeprecatedBuiltinCode(self.b, min(code, 127))
            oc.OperatorCodeAddBuiltinCode(self.b, code)
            oc.OperatorCodeAddVersion(self.b, version)
            if custom_off is not None:
                oc.OperatorCodeAddCustomCode(self.b, custom_off)
            offsets.append(oc.OperatorCodeEnd(self.b))
        return offsets, keys

    def tensor(self, t: Tensor) -> int:
        tm = importlib.import_module("tflite.Tensor")
        name = self.b.CreateString(t.name)
        shape = self.ints(t.shape)
        quant = self.quantization(t)
        buffer_index = 0
        if t.data is not None:
            self.buffers.append(t.data)
            buffer_index = len(self.buffers) - 1
        tm.TensorStart(self.b)
        tm.TensorAddShape(self.b, shape)
        tm.TensorAddType(self.b, _TENSOR_TYPES[t.dtype])
        tm.TensorAddBuffer(self.b, buffer_index)
        tm.TensorAddName(self.b, name)
        if quant is not None:
            tm.TensorAddQuantization(self.b, quant)
        tm.TensorAddIsVariable(self.b, t.is_variable)
        return tm.TensorEnd(self.b)

    def quantization(self, t: Tensor) -> int | None:
        if t.quant is None:
            return None
        qm = importlib.import_module("tflite.QuantizationParameters")
        scales = self.ints(t.quant.scales, np.float32)
        zps = self.ints(t.quant.zero_points, np.int64)
        qm.QuantizationParametersStart(self.b)
        qm.QuantizationParametersAddScale(self.b, scales)
        qm.QuantizationParametersAddZeroPoint(self.b, zps)
        qm.QuantizationParametersAddQuantizedDimension(self.b, t.quant.axis)
        return qm.QuantizationParametersEnd(self.b)

    def operator(self, op: Operator, code_index: dict[tuple[str, str | None, int], int]) -> int:
        om = importlib.import_module("tflite.Operator")
        inputs = self.ints(op.inputs)
        outputs = self.ints(op.outputs)
        inter = self.ints(op.intermediates) if op.intermediates else None
        custom = (
            self.ints(np.frombuffer(op.custom_options, np.uint8), np.uint8)
            if op.custom_options
            else None
        )
        opt_type = op.options_type or (DEFAULT_OPTIONS.get(op.opcode, "") if op.options else "")
        opt = self.options(opt_type, op.options) if opt_type else None
        om.OperatorStart(self.b)
        om.OperatorAddOpcodeIndex(self.b, code_index[(op.opcode, op.custom_code, op.version)])
        om.OperatorAddInputs(self.b, inputs)
        om.OperatorAddOutputs(self.b, outputs)
        if inter is not None:
            om.OperatorAddIntermediates(self.b, inter)
        if custom is not None:
            om.OperatorAddCustomOptions(self.b, custom)
        if opt is not None:
            om.OperatorAddBuiltinOptionsType(self.b, _OPTION_TYPES[opt_type])
            om.OperatorAddBuiltinOptions(self.b, opt)
        return om.OperatorEnd(self.b)

    def options(self, opt_type: str, options: Mapping[str, Any]) -> int:
        mod = importlib.import_module(f"tflite.{opt_type}")
        vectors = {k: self.ints(v) for k, v in options.items() if isinstance(v, tuple | list)}
        getattr(mod, f"{opt_type}Start")(self.b)
        for key, value in options.items():
            adder = getattr(mod, f"{opt_type}Add{_camel(key)}", None)
            if adder is None:
                raise ValueError(f"{opt_type} has no field {key}")
            adder(self.b, vectors.get(key, value))
        return int(getattr(mod, f"{opt_type}End")(self.b))

    def subgraph(self, tensors: list[int], ops: list[int]) -> int:
        sm = importlib.import_module("tflite.SubGraph")
        tvec = self.vector_of_offsets(sm.SubGraphStartTensorsVector, tensors)
        ovec = self.vector_of_offsets(sm.SubGraphStartOperatorsVector, ops)
        ins = self.ints(self.graph.inputs)
        outs = self.ints(self.graph.outputs)
        name = self.b.CreateString(self.graph.name or "main")
        sm.SubGraphStart(self.b)
        sm.SubGraphAddTensors(self.b, tvec)
        sm.SubGraphAddInputs(self.b, ins)
        sm.SubGraphAddOutputs(self.b, outs)
        sm.SubGraphAddOperators(self.b, ovec)
        sm.SubGraphAddName(self.b, name)
        return int(sm.SubGraphEnd(self.b))

    def metadata(self, first_buffer: int) -> list[int]:
        mm = importlib.import_module("tflite.Metadata")
        result = []
        for i, name in enumerate(self.graph.metadata):
            s = self.b.CreateString(name)
            mm.MetadataStart(self.b)
            mm.MetadataAddName(self.b, s)
            mm.MetadataAddBuffer(self.b, first_buffer + i)
            result.append(mm.MetadataEnd(self.b))
        return result

    def buffer(self, data: bytes) -> int:
        bm = importlib.import_module("tflite.Buffer")
        vec = None
        if data:
            self.b.StartVector(1, len(data), 16)
            self.b.head = self.b.head - len(data)
            self.b.Bytes[self.b.head : self.b.head + len(data)] = data
            vec = self.b.EndVector()
        bm.BufferStart(self.b)
        if vec is not None:
            bm.BufferAddData(self.b, vec)
        return int(bm.BufferEnd(self.b))
