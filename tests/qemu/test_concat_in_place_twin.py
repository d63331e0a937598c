"""Channel concatenation in place (issue 34 item 2) on the NUCLEO-F767ZI twin, where the DSP
paths of the optimised kernels run: producers write their slices at the concatenation's pixel
stride (the optimised ADD, the 1x1 product two pixels at a time, the general convolution's
pairs of windows; then with those removed, its byte-window rungs and the 1x1 rungs: two pixels
staged, then a pixel at a time), bit for bit with TFLM."""

from __future__ import annotations

from pathlib import Path

import pytest
from concat_graphs import INCEPTION_LIKE, branchy

from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from support import NEEDS_TWIN, exact_on_twin, without_variants

pytestmark = NEEDS_TWIN

#: the fast kernels removed for the second build: the general convolution then runs its
#: byte-window rung (conv_2d_s8_col2) and the 1x1 layers the rungs below conv_2d_1x1_s8
FAST = {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8"}


#: the second build's 1x1 layers run conv_2d_1x1_s8_staged; the third's, without it, the direct
#: or lean rung (mcu_pointwise_pixels)
BUILDS = [(), tuple(sorted(FAST)), tuple(sorted(FAST | {"conv_2d_1x1_s8_staged"}))]


@pytest.mark.parametrize("removed", BUILDS, ids=["fast", "rungs", "pixel_rungs"])
def test_slices_bit_exact_on_f767_twin(removed: tuple[str, ...], workdir: Path) -> None:
    graph = branchy(INCEPTION_LIKE, hw=7, concats=2, seed=5)
    model = write_model(graph)
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    with without_variants(set(removed)):
        gen = generate(graph, options=PlanOptions(kernels="opt", core="cortex-m7"))
    assert gen.plan.channel_slices, "no concatenation planned in place"
    variants = {gen.lowered[s.producer].variant for s in gen.plan.channel_slices}
    assert ("conv_2d_s8_col2" in variants) == bool(removed), variants
    exact_on_twin(gen, model, target, workdir / "concat-in-place")
