"""Which arithmetic an ONNX model's requantising operators follow (`--onnx-numerics`, docs/onnx.md):
"ort", onnxruntime's (float32 scales rounded half to even, its own pools, Sigmoid and Softmax;
the default, since onnxruntime is the reference an ONNX user has), or "fixed", TFLite's
fixed-point multipliers, bit-exact with TFLM. The ONNX importer records the choice in the graph's
metadata; the lowering reads it from there. A TFLite model has none and is always "fixed".

onnxruntime on x86-64 runs its fused kernels on uint8 activations: it converts an int8 model's
(QDQS8ToU8Transformer, zero points + 128) before fusing, and some steps (QLinearAdd's constant
term, QLinearAveragePool's and QLinearMul's zero point added in float) round differently on other
values. mcugen stores both kinds less 128 (an int8 model's as they are): `model_domain` is what to
add back."""

from __future__ import annotations

from mcugen.model.ir import Graph

ORT, FIXED = "ort", "fixed"
CHOICES = (ORT, FIXED)
DEFAULT = ORT
#: graph metadata: the numerics of an imported ONNX model (b"ort" or b"fixed")
NUMERICS_METADATA = "onnx_numerics"
#: graph metadata: the ONNX nodes onnxruntime runs in float (onnx_import/fusion.py), comma-separated
FLOAT_NODES_METADATA = "onnx_float_nodes"
#: graph metadata: those of them onnxruntime has no quantized kernel for (ReduceMean)
UNFUSABLE_METADATA = "onnx_unfusable_nodes"


def numerics_of(graph: Graph) -> str:
    """ "ort" for an ONNX import with onnxruntime's numerics, else "fixed"."""
    return graph.metadata.get(NUMERICS_METADATA, FIXED.encode()).decode(errors="replace")


def uses_ort(graph: Graph) -> bool:
    return numerics_of(graph) == ORT


def model_domain(graph: Graph) -> int:
    """What to add to a stored int8 activation to get the uint8 value onnxruntime computes on
    (128 with onnxruntime's numerics, else 0)."""
    return 128 if uses_ort(graph) else 0


def float_nodes_of(graph: Graph) -> list[str]:
    """The ONNX nodes onnxruntime leaves unfused and runs in float (onnx_import/fusion.py), where
    `ort`'s fused-kernel arithmetic can round otherwise."""
    names = graph.metadata.get(FLOAT_NODES_METADATA, b"").decode(errors="replace")
    return [n for n in names.split(",") if n]


def float_nodes_note(graph: Graph) -> str | None:
    """One line saying where onnxruntime computes in float and the outputs may differ, or None."""
    names = float_nodes_of(graph)
    if not uses_ort(graph) or not names:
        return None
    listed = graph.metadata.get(UNFUSABLE_METADATA, b"").decode(errors="replace").split(",")
    unfusable = [n for n in names if n in listed]
    forked = [n for n in names if n not in listed]
    why = []
    if forked:
        why.append(
            f"{_shown(forked)}: int8 tensors it cannot convert to uint8 on x86-64, such as one "
            "read by two operators; `mcugen quantize` (uint8 activations) gives a model it fuses "
            "throughout"
        )
    if unfusable:
        why.append(
            f"{_shown(unfusable)}: operators it has no quantized kernel for; a mean over the map "
            "as GlobalAveragePool (nn.AdaptiveAvgPool2d(1)) is fused"
        )
    return (
        f"onnxruntime leaves {len(names)} quantized node(s) unfused and runs them in float "
        f"({'; '.join(why)}); mcugen computes them as fused kernels, so outputs can differ from "
        "onnxruntime's by a few steps (docs/onnx.md)"
    )


def _shown(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
