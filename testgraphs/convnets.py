"""U-Net and Inception stacks."""

from __future__ import annotations

from mcugen.model.ir import Graph
from testgraphs.net import _Net


def unet(
    seed: int = 0, *, depth: int = 3, channels: int = 8, hw: int = 32, classes: int = 2
) -> Graph:
    """Encoder (two 3x3 convs, 2x2 max pool per level), bottleneck, decoder (x2 nearest
    upsample, 3x3 conv, CONCATENATION with the skip, two 3x3 convs), 1x1 conv to `classes`."""
    net = _Net(seed, f"unet{depth}_{seed}")
    x = net.image(hw, 3)
    skips = []
    for level in range(depth):
        c = channels << level
        x = net.conv(net.conv(x, c, 3, relu=True), c, 3, relu=True)
        skips.append(x)
        x = net.pool(x, "max", 2, 2)
    x = net.conv(net.conv(x, channels << depth, 3, relu=True), channels << depth, 3, relu=True)
    for level in reversed(range(depth)):
        c, skip = channels << level, skips[level]
        up = net.conv(net.upsample(x), c, 3, relu=True, quant=net.quant(skip))
        x = net.conv(net.conv(net.concat([skip, up]), c, 3, relu=True), c, 3, relu=True)
    return net.finish(net.conv(x, classes, 1))


def inception(
    seed: int = 0,
    *,
    blocks: int = 4,
    channels: int = 16,
    hw: int = 32,
    blocks_per_group: int = 2,
    classes: int = 10,
) -> Graph:
    """A stem (3x3 stride-2 conv), `blocks` Inception blocks with a 3x3 stride-2 max pool after
    every `blocks_per_group` (widths double there), a classifier. 9 ops per block."""
    net = _Net(seed, f"inception{blocks}_{seed}")
    x = net.conv(net.image(hw, 3), 2 * channels, 3, 2, relu=True)
    width = channels
    for i in range(blocks):
        if i and i % blocks_per_group == 0:
            x, width = net.pool(x, "max", 3, 2), 2 * width
        x = _inception_block(net, x, width)
    return net.finish(net.classifier(x, classes))


def _inception_block(net: _Net, x: int, width: int) -> int:
    """Branches 1x1 | 1x1-3x3 | 1x1-3x3-3x3 | maxpool-1x1, concatenated (Szegedy et al. 2015,
    the 5x5 factorised as in Inception-v3). Widths drawn around `width`."""

    def w(scale: float) -> int:
        return max(4, int(round(width * scale * net.rng.uniform(0.75, 1.25))))

    b1 = net.conv(x, w(1.0), 1, relu=True)
    q = net.quant(b1)
    b2 = net.conv(net.conv(x, w(0.75), 1, relu=True), w(1.0), 3, relu=True, quant=q)
    b3 = net.conv(net.conv(x, w(0.25), 1, relu=True), w(0.5), 3, relu=True)
    b3 = net.conv(b3, w(0.5), 3, relu=True, quant=q)
    b4 = net.conv(net.pool(x, "max", 3, 1), w(0.5), 1, relu=True, quant=q)
    return net.concat([b1, b2, b3, b4])
