"""Branch-and-concatenate graphs for the tests of channel concatenation in place (issue 34 item
2): tests/planners/test_concat_in_place.py and tests/qemu/test_concat_in_place_twin.py."""

from __future__ import annotations

from mcugen.model.ir import Graph
from testgraphs.net import Quant, _Net

#: a branch: (kind, output channels); kinds: "1x1", "3x3", "add" (ADD of a 1x1 and a 3x3),
#: "sep" (depthwise 3x3 then 1x1), "requant" (a 1x1 whose output a QUANTIZE brings to the
#: concatenation's parameters), "pool" (max pool: no stride in its kernel)
Branch = tuple[str, int]


def branchy(
    branches: list[Branch],
    *,
    hw: int = 8,
    in_c: int = 8,
    shared: tuple[int, ...] = (),
    seed: int = 0,
    concats: int = 1,
) -> Graph:
    """An image, a stem convolution, then `concats` blocks of `branches` concatenated along the
    channels, each block's output through a 1x1 convolution; a branch whose index is in `shared`
    is also read by an ADD after the block (so its concatenation must copy it)."""
    net = _Net(seed, "concat_in_place")
    x = net.conv(net.image(hw, 3), in_c, 3, relu=True)
    for _ in range(concats):
        q: Quant = net.new_quant(0.05)
        outs = [_branch(net, x, kind, c, q) for kind, c in branches]
        y = net.concat(outs)
        x = net.conv(y, in_c, 1, relu=True)
        for k in shared:
            if k < len(outs):
                side = net.conv(outs[k], in_c, 1, quant=net.quant(x))
                x = net.add(x, side)
    return net.finish(x)


def _branch(net: _Net, x: int, kind: str, c: int, q: Quant) -> int:
    if kind == "1x1":
        return net.conv(x, c, 1, quant=q)
    if kind == "3x3":
        return net.conv(x, c, 3, quant=q)
    if kind == "sep":
        return net.conv(net.conv(x, 0, 3, depthwise=True), c, 1, quant=q)
    if kind == "add":
        return net.add(net.conv(x, c, 1), net.conv(x, c, 3), q)
    if kind == "pool":
        return net.pool(net.conv(x, c, 1, quant=q), "max")
    assert kind == "requant"
    y = net.conv(x, c, 1)
    z = net.b.activation(net.shape(y), "int8", scale=q[0], zero_point=q[1])
    net.b.op("QUANTIZE", [y], [z])
    return z


#: an Inception-like block with a branch of each kind that takes the stride
INCEPTION_LIKE: list[Branch] = [("1x1", 8), ("3x3", 12), ("sep", 6), ("add", 10)]
