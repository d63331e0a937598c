"""Trainable and convolutional networks shared by the training and planner tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen.codegen.quant import out_size
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from support.op_models import window_options


def int8_classifier(seed: int = 0, depth: int = 16, hidden: int = 12, classes: int = 4) -> Graph:
    """An int8 model for training tests: FULLY_CONNECTED (relu) -> FULLY_CONNECTED -> SOFTMAX,
    per-channel weights, the converter's quantization of a softmax output."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, depth), "int8", scale=0.05, zero_point=0)
    h, width, scale = x, depth, 0.05
    for units, act, out_scale in ((hidden, 1, 0.08), (classes, 0, 0.15)):
        w_scales = rng.uniform(0.004, 0.01, units)
        w = b.const(rng.integers(-127, 128, (units, width), dtype=np.int8), scale=w_scales)
        bias = b.const(
            rng.integers(-400, 400, units, dtype=np.int32), scale=scale * w_scales, zero_point=0
        )
        y = b.activation((1, units), "int8", scale=out_scale, zero_point=-20 if act else 3)
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=act)
        h, width, scale = y, units, out_scale
    probs = b.activation((1, classes), "int8", scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [h], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


def synthetic_dataset(graph: Graph, samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) a linear model can learn: int8 samples of the model's input, labels the argmax of
    a fixed random projection of them."""
    rng = np.random.default_rng(seed)
    x_t = graph.tensors[graph.inputs[0]]
    classes = graph.tensors[graph.outputs[0]].shape[-1]
    x = rng.integers(-100, 101, (samples, *x_t.shape[1:]), dtype=np.int8)
    projection = rng.normal(0, 1, (int(np.prod(x_t.shape[1:])), classes))
    y = np.argmax(x.reshape(samples, -1).astype(np.float64) @ projection, axis=1)
    return x, y.astype(np.int64)


def classifier_file(folder: Path, samples: int, seed: int) -> tuple[Path, np.ndarray, np.ndarray]:
    """int8_classifier(seed) written as clf.tflite in `folder`, and `samples` of its synthetic
    dataset (seed + 1)."""
    graph = int8_classifier(seed=seed)
    path = folder / "clf.tflite"
    path.write_bytes(write_model(graph))
    return (path, *synthetic_dataset(graph, samples, seed=seed + 1))


def mobilenet_stem(seed: int, hw: int = 40, width: int = 8) -> Graph:
    """MobileNetV2-like: a stride-2 stem, a separable block, an inverted bottleneck (1x1
    expansion to 6x, depthwise stride 2, 1x1 projection: the high-resolution expansion is the
    peak), two more stride-2 separable blocks, a classifier."""
    from testgraphs import _Net

    net = _Net(seed, "stem")
    x = net.image(hw, 3)
    x = net.conv(x, width, 3, 2, relu=True)
    x = net.sep_conv(x, width // 2, relu=True)
    x = net.conv(x, 6 * width, 1, relu=True)
    x = net.sep_conv(x, width, stride=2)
    x = net.sep_conv(x, 2 * width, stride=2, relu=True)
    x = net.sep_conv(x, 4 * width, stride=2, relu=True)
    return net.finish(net.classifier(x, 4))


def conv_chain(seed: int = 3) -> Graph:
    """A float model: CONV_2D, DEPTHWISE_CONV_2D, CONV_2D, a strided CONV_2D (ReLU, 3 x 3, SAME),
    FULLY_CONNECTED and SOFTMAX over a 12 x 12 x 4 input; trained whole, every activation is
    kept for the backward pass."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    h = b.input((1, 12, 12, 4), "float32")
    shape = (12, 12, 4)
    window = {"padding": 0, "dilation_h_factor": 1, "dilation_w_factor": 1}
    for kind, channels, stride in (
        ("CONV_2D", 8, 1),
        ("DEPTHWISE_CONV_2D", 8, 1),
        ("CONV_2D", 8, 1),
        ("CONV_2D", 8, 2),
    ):
        depthwise = kind == "DEPTHWISE_CONV_2D"
        filt = (1, 3, 3, shape[2]) if depthwise else (channels, 3, 3, shape[2])
        w = b.const(rng.normal(0, 0.3, filt).astype(np.float32))
        bias = b.const(rng.normal(0, 0.1, channels).astype(np.float32))
        shape = (shape[0] // stride, shape[1] // stride, channels)
        y = b.activation((1, *shape), "float32")
        extra = {"depth_multiplier": 1} if depthwise else {}
        b.op(
            kind,
            [h, w, bias],
            [y],
            **window,
            stride_h=stride,
            stride_w=stride,
            **extra,
            fused_activation_function=1,
        )
        h = y
    depth = int(np.prod(shape))
    w = b.const(rng.normal(0, depth**-0.5, (5, depth)).astype(np.float32))
    logits = b.activation((1, 5), "float32")
    b.op(
        "FULLY_CONNECTED",
        [h, w, b.const(np.zeros(5, np.float32))],
        [logits],
        fused_activation_function=0,
    )
    probs = b.activation((1, 5), "float32")
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


# --- float convolution chains (train/test_grad_conv*) -----------------------------------------


@dataclass(frozen=True)
class ConvLayer:
    """One convolution: CONV_2D (`channels` outputs in `groups` groups) or DEPTHWISE_CONV_2D
    (`channels` is the depth multiplier)."""

    kind: str
    channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: int
    act: int
    bias: bool
    groups: int = 1

    def out_hwc(self, in_hwc: tuple[int, int, int]) -> tuple[int, int, int]:
        hw = [
            out_size(self.padding, in_hwc[i], self.kernel[i], self.stride[i], self.dilation[i])
            for i in (0, 1)
        ]
        depth = self.channels * (in_hwc[2] if self.kind == "DEPTHWISE_CONV_2D" else 1)
        return hw[0], hw[1], depth

    def filter_shape(self, in_c: int) -> tuple[int, int, int, int]:
        if self.kind == "DEPTHWISE_CONV_2D":
            return (1, *self.kernel, in_c * self.channels)
        return (self.channels, *self.kernel, in_c // self.groups)

    def options(self) -> dict[str, int]:
        extra = {"depth_multiplier": self.channels} if self.kind == "DEPTHWISE_CONV_2D" else {}
        return window_options(self.padding, self.stride, self.dilation, self.act, **extra)


def float_conv_model(
    seed: int, in_hwc: tuple[int, int, int], convs: list[ConvLayer], classes: int | None
) -> tuple[Graph, tuple[int, ...]]:
    """A float32 model: the convolutions in a chain, then FULLY_CONNECTED to `classes` and
    SOFTMAX, or (`classes` None) SOFTMAX over the last convolution's channels at every pixel.
    Returns the model and its softmax input's shape."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    h = b.input((1, *in_hwc), "float32")
    shape = in_hwc
    for layer in convs:
        filt = layer.filter_shape(shape[2])
        fan_in = filt[1] * filt[2] * (1 if layer.kind == "DEPTHWISE_CONV_2D" else filt[3])
        w = b.const(rng.normal(0, 1.5 / fan_in**0.5, filt).astype(np.float32))
        shape = layer.out_hwc(shape)
        bias = b.const(rng.normal(0, 0.3, shape[2]).astype(np.float32)) if layer.bias else -1
        y = b.activation((1, *shape), "float32")
        b.op(layer.kind, [h, w, bias], [y], **layer.options())
        h = y
    logits_shape: tuple[int, ...] = (1, *shape)
    if classes is not None:
        depth = int(np.prod(shape))
        w = b.const(rng.normal(0, depth**-0.5, (classes, depth)).astype(np.float32))
        bias = b.const(rng.normal(0, 0.1, classes).astype(np.float32))
        logits_shape = (1, classes)
        y = b.activation(logits_shape, "float32")
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=0)
        h = y
    probs = b.activation(logits_shape, "float32")
    b.op("SOFTMAX", [h], [probs], beta=1.0)
    b.output(probs)
    return b.graph(), logits_shape
