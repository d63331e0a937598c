"""Small int8 sub-graphs for patch-stage tests (issue 17), written with mcugen's `_Net` builder:
an inverted residual block, an Inception-like block, MUL of branches and by a constant."""

from __future__ import annotations

import numpy as np

from mcugen.model.ir import Graph
from testgraphs import _Net


def _block(net: _Net, x: int, expand: int) -> int:
    """Inverted residual: expand 1x1 (ReLU), depthwise 3x3 stride 1 (ReLU), project 1x1, ADD."""
    c = net.shape(x)[3]
    h = net.conv(x, expand, 1, relu=True)
    h = net.conv(h, 0, 3, relu=True, depthwise=True)
    return net.add(x, net.conv(h, c, 1))


def residual(hwc: tuple[int, int, int] = (11, 13, 6), stem: int = 0, seed: int = 3) -> Graph:
    """An inverted residual block on the input, or on a 3x3 convolution of `stem` channels."""
    net = _Net(seed, "residual")
    x = net.b.input((1, *hwc), "int8", scale=1 / 128, zero_point=-3)
    if stem:
        x = net.conv(x, stem, 3, relu=True)
    return net.finish(_block(net, x, 3 * net.shape(x)[3]))


def inception(hwc: tuple[int, int, int] = (13, 11, 4), seed: int = 4) -> Graph:
    """A 3x3 stem, then 1x1 / 1x1-3x3 / maxpool 3x3-1x1 branches concatenated (one shared output
    quantization, as TFLM's int8 CONCATENATION requires)."""
    net = _Net(seed, "inception")
    x = net.b.input((1, *hwc), "int8", scale=1 / 128, zero_point=5)
    x = net.conv(x, 8, 3, relu=True)
    q = net.new_quant(0.05, relu=True)
    a = net.conv(x, 4, 1, relu=True, quant=q)
    b = net.conv(net.conv(x, 6, 1, relu=True), 5, 3, relu=True, quant=q)
    c = net.conv(net.pool(x, "max", 3, 1), 3, 1, relu=True, quant=q)
    return net.finish(net.concat([a, b, c]))


def multiply(hwc: tuple[int, int, int] = (10, 9, 4), seed: int = 6) -> Graph:
    """MUL of a 3x3 and a 1x1 branch, then MUL by a per-channel constant, then a 3x3 conv."""
    net = _Net(seed, "multiply")
    x = net.b.input((1, *hwc), "int8", scale=1 / 128, zero_point=0)
    a, b = net.conv(x, 5, 3), net.conv(x, 5, 1, relu=True)
    shape = net.shape(a)
    y = net.b.activation(shape, "int8", scale=0.02, zero_point=3)
    net.b.op("MUL", [a, b], [y], fused_activation_function=0)
    scale = net.b.const(np.array([[[[7, -3, 12, 5, -9]]]], np.int8), scale=0.05, zero_point=0)
    z = net.b.activation(shape, "int8", scale=0.03, zero_point=-2)
    net.b.op("MUL", [y, scale], [z], fused_activation_function=0)
    return net.finish(net.conv(z, 4, 3, relu=True))


def image_stem(seed: int = 1, hw: int = 64, stride: int = 1) -> Graph:
    """VWW-like: a large image, a stride-1 stem and two stride-2 layers, a classifier; the peak
    is the stem's output with the image under it, so the stage starts at the model input. (With
    `stride` 2 the stem runs over the image, aliasing step 7, which leaves a stage nothing to
    gain unless that step is off.)"""
    net = _Net(seed, "overlap")
    x = net.image(hw, 3)
    x = net.conv(x, 8, 3, stride, relu=True)
    x = net.sep_conv(x, 16, stride=2, relu=True)
    x = net.sep_conv(x, 32, stride=2, relu=True)
    return net.finish(net.classifier(x, 4))
