"""Which arithmetic an ONNX model's requantising operators follow (`--onnx-numerics`, docs/onnx.md):
"ort", onnxruntime's (float32 scales rounded half to even, its own pools, Sigmoid and Softmax;
the default, since onnxruntime is the reference an ONNX user has), or "fixed", TFLite's
fixed-point multipliers, bit-exact with TFLM. The ONNX importer records the choice in the graph's
metadata, with the ONNX type of the activations (onnxruntime computes some steps in float on the
uint8 values themselves, which mcugen stores less 128); the lowering reads both from there. A
TFLite model has neither and is always "fixed"."""

from __future__ import annotations

from mcugen.model.ir import Graph

ORT, FIXED = "ort", "fixed"
CHOICES = (ORT, FIXED)
DEFAULT = ORT
#: graph metadata: the numerics of an imported ONNX model (b"ort" or b"fixed")
NUMERICS_METADATA = "onnx_numerics"
#: graph metadata: what was added to the ONNX model's activations to store them as int8
#: (b"-128" for uint8 activations, b"0" for int8)
SHIFT_METADATA = "onnx_activation_shift"


def numerics_of(graph: Graph) -> str:
    """"ort" for an ONNX import with onnxruntime's numerics, else "fixed"."""
    return graph.metadata.get(NUMERICS_METADATA, FIXED.encode()).decode(errors="replace")


def uses_ort(graph: Graph) -> bool:
    return numerics_of(graph) == ORT


def model_domain(graph: Graph) -> int:
    """What to add to a stored int8 activation to get the ONNX model's own value (128 for a
    uint8 model, 0 for an int8 one)."""
    try:
        return -int(graph.metadata.get(SHIFT_METADATA, b"0"))
    except ValueError:
        return 0
