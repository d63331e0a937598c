"""mcugen/model/overlap.py against a byte-level simulation of a kernel that runs output pixels in
row-major order and re-reads the pixel's window before each output channel (the reference
CONV_2D's order, the strictest of the kernels that declare `pixels_in_order`): with the input
`overlap_distance` bytes after the output's start no read ever sees a byte already written, and
one output pixel closer some read does (so the check can fail). The distance is exact for a
kernel that writes a pixel's channels between re-reads of its window; where the largest gap is
at a pixel's own window, the kernel's last write there comes after its last read, so up to a
pixel less would do for this one kernel: the same distance serves every declared kernel."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.model.overlap import overlap_distance
from mcugen.model.traits import Window


def window_taps(w: Window, in_hw: tuple[int, int], y: int, x: int) -> list[tuple[int, int]]:
    """The input pixels output pixel (y, x) reads, in tap order (padding skipped)."""
    taps = []
    for ky in range(w.kernel[0]):
        for kx in range(w.kernel[1]):
            r = y * w.stride[0] - w.pad[0] + ky * w.dilation[0]
            c = x * w.stride[1] - w.pad[1] + kx * w.dilation[1]
            if 0 <= r < in_hw[0] and 0 <= c < in_hw[1]:
                taps.append((r, c))
    return taps


def first_clobbered_read(
    w: Window, in_hwc: tuple[int, int, int], out_hwc: tuple[int, int, int], gap: int
) -> tuple[int, int] | None:
    """Run the kernel with the input `gap` bytes after the output's start: the first (output
    pixel, input byte) read after an output byte was written there, else None."""
    written: set[int] = set()
    in_c, out_c = in_hwc[2], out_hwc[2]
    for p in range(out_hwc[0] * out_hwc[1]):
        y, x = divmod(p, out_hwc[1])
        taps = window_taps(w, in_hwc[:2], y, x)
        for oc in range(out_c):
            for r, c in taps:
                for k in range(in_c):
                    at = gap + (r * in_hwc[1] + c) * in_c + k
                    if at in written:
                        return p, at
            written.add(p * out_c + oc)
    return None


@st.composite
def windows(draw: st.DrawFn) -> tuple[Window, tuple[int, int, int], tuple[int, int, int]]:
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, kernel[0] - 1)), draw(st.integers(0, kernel[1] - 1)))
    in_hwc = (draw(st.integers(3, 9)), draw(st.integers(3, 9)), draw(st.integers(1, 4)))
    spans = [(kernel[i] - 1) * dilation[i] + 1 for i in range(2)]
    out_hw = [max(1, (in_hwc[i] + 2 * pad[i] - spans[i]) // stride[i] + 1) for i in range(2)]
    out_hwc = (out_hw[0], out_hw[1], draw(st.integers(1, 6)))
    return Window(kernel, stride, dilation, pad), in_hwc, out_hwc


@settings(max_examples=150, deadline=None)
@given(windows())
def test_no_read_sees_a_written_byte_at_the_distance(
    case: tuple[Window, tuple[int, int, int], tuple[int, int, int]],
) -> None:
    w, in_hwc, out_hwc = case
    gap = max(overlap_distance(w, in_hwc, out_hwc, 1), 0)
    assert first_clobbered_read(w, in_hwc, out_hwc, gap) is None


def test_one_pixel_closer_some_read_is_clobbered() -> None:
    """The distance is not padded by more than a pixel: on these windows, one output pixel less
    corrupts a read."""
    cases = [
        (Window((3, 3), (2, 2), (1, 1), (0, 0)), (8, 8, 3), (4, 4, 8)),  # stride-2 stem
        (Window((3, 3), (1, 1), (1, 1), (1, 1)), (6, 5, 4), (6, 5, 4)),  # same-size 3x3
        (Window((1, 1), (1, 1), (1, 1), (0, 0)), (4, 4, 2), (4, 4, 6)),  # widening 1x1
        (Window((2, 2), (2, 2), (1, 1), (0, 0)), (6, 6, 4), (3, 3, 4)),  # 2x2 pooling
    ]
    for w, in_hwc, out_hwc in cases:
        distance = overlap_distance(w, in_hwc, out_hwc, 1)
        assert distance > 0
        assert first_clobbered_read(w, in_hwc, out_hwc, distance) is None
        closer = distance - out_hwc[2]
        assert first_clobbered_read(w, in_hwc, out_hwc, closer) is not None, (w, in_hwc)


def test_vww_stem_needs_about_a_row() -> None:
    """VWW's first layer (96x96x3 -> 48x48x8, 3x3 stride 2, TF SAME: no padding before): its
    output may start 102 bytes before the image, so the two need 27,750 bytes, not 46,080."""
    w = Window((3, 3), (2, 2), (1, 1), (0, 0))
    assert overlap_distance(w, (96, 96, 3), (48, 48, 8), 1) == 102
