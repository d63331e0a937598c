"""How far before its own input a windowed operator's output may start (`OpTraits.input_after`).

A kernel that computes output pixels in row-major order, each pixel's outputs written only once
the reads of every earlier pixel are done (pixel by pixel, or a pair or a strip of pixels gathered
into its scratch before any of them is written), never needs an input byte again once every later
pixel's window starts past it. Its output may then lie in the same buffer as its input, starting
D bytes before it: the output's first pixels take the input's rows no later window reads. This is
TinyEngine's in-place depthwise idea (Lin et al., MCUNet, 2020) without the staging copy, and the
segment-level overlap of vMCU (Zheng et al., MLSys 2024) for one operator: a stride-2 stem of a
27,648-byte image into an 18,432-byte output needs 27,744 bytes instead of 46,080.

Steps (NHWC, batch 1; bytes per pixel `cin` in, `cout` out):
1. R(p), the first input byte pixel p's window reads: its top-left tap clipped to the image,
   (max(y sh - pad_t, 0) in_w + max(x sw - pad_l, 0)) cin; clipping at the top or left can make a
   later pixel start lower than an earlier one, so S(p) = min over q >= p of R(q).
2. W(p), the end of pixel p's output bytes: (p + 1) cout.
3. D = max over p of W(p) - S(p): with the input at least D bytes after the output's start, no
   write reaches a byte a later read takes. D <= 0 would allow the same address, which kernels
   read as "in place with staging" (plan/aliasing.py step 5): the planner keeps a positive gap.
Dilated windows are treated as if their first tap were the clipped one (a lower R, so a safe D).
Complexity O(output pixels) with numpy, cached per shape. Weakness: one distance for the whole
operator; a kernel that runs pixels in another order (channel-major depthwise bands) must not
declare it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mcugen.model.traits import Window


@lru_cache(maxsize=4096)
def overlap_distance(
    window: Window, in_hwc: tuple[int, int, int], out_hwc: tuple[int, int, int], elem: int
) -> int:
    """Bytes the input must start after the output's start (may be <= 0): see the module."""
    in_h, in_w, in_c = in_hwc
    out_h, out_w, out_c = out_hwc
    pixels = out_h * out_w
    if pixels == 0 or in_h * in_w * in_c == 0:
        return 0
    p = np.arange(pixels, dtype=np.int64)
    y, x = p // out_w, p % out_w
    row = np.maximum(y * window.stride[0] - window.pad[0], 0)
    col = np.maximum(x * window.stride[1] - window.pad[1], 0)
    first = (row * in_w + col) * in_c * elem
    suffix_min = np.minimum.accumulate(first[::-1])[::-1]
    written = (p + 1) * out_c * elem
    return int(np.max(written - suffix_min))
