"""The first-layer int8 CONV_2D's layout (runtime_c/kernels/opt/conv_2d_stem_s8.c): a filter of
three rows over one or three input channels, dilation 1.

The kernel widens the input once per strip of output pixels into a band of columns of 16-bit
lanes; a column holds the three filter rows' pixels at one input column in the lane order of
`column_lanes`, and a pixel's window is k_w columns, `window_words` words. The weights come as
16-bit pairs in the same lanes (`stem_weights`), a lane with no tap against weight 0.
"""

from __future__ import annotations

import numpy as np

#: (filter row, input channel) per lane of a band column, in pairs; None: no tap (weight 0)
Lane = tuple[int, int] | None
COLUMN_LANES: dict[int, tuple[Lane, ...]] = {
    3: ((0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2), (0, 1), (1, 1), (2, 1), None),
    1: ((0, 0), (1, 0), (2, 0), None),
}
#: output pixels per band: its columns are the scratch (strip - 1) * stride_w + k_w
STRIP = 8


def applies(in_c: int, k_h: int, dilation: tuple[int, int]) -> bool:
    """The kernel's shapes: three filter rows, one or three input channels, no dilation."""
    return in_c in COLUMN_LANES and k_h == 3 and dilation == (1, 1)


def window_words(in_c: int, k_w: int) -> int:
    """A window's words: k_w columns."""
    return k_w * len(COLUMN_LANES[in_c]) // 2


def window_lanes(in_c: int, k_w: int) -> list[Lane]:
    """The lanes of a window: (filter row, column, channel) flattened to the filter row's index
    ky * k_w * in_c + kx * in_c + c, None where no tap."""
    lanes: list[Lane] = []
    for kx in range(k_w):
        lanes += [None if t is None else (t[0], kx * in_c + t[1]) for t in COLUMN_LANES[in_c]]
    return lanes


def stem_weights(
    rows: np.ndarray, records: tuple[tuple[int, ...], ...], in_c: int, k_w: int
) -> tuple[int, ...] | None:
    """Filter rows [O][3 * k_w * in_c] (the order [ky][kx][c]) and their channel records
    (opt_conv_2d.channel_records: bias, multiplier, left, right, constant, sign) as the kernel's
    words, the left shift folded into the weights and the bias (so the sum comes out shifted);
    per group of four output channels (zero channels fill the last): the four biases, then per
    chunk of four window words (the last of the rest) each channel's words of the chunk, a
    word's low lane first, then per channel its multiplier, right shift and constant. None when
    a shifted weight leaves int16 or a right shift is 0 (the kernel takes the sign's -1 for a
    negative sum as given)."""
    out_c = rows.shape[0]
    lanes = window_lanes(in_c, k_w)
    per_ky = k_w * in_c
    left = np.array([r[2] for r in records], dtype=np.int64)[:, None]
    taps = np.zeros((out_c, len(lanes)), dtype=np.int64)
    for i, lane in enumerate(lanes):
        if lane is not None:
            taps[:, i] = rows[:, lane[0] * per_ky + lane[1]] << left[:, 0]
    if taps.size and (taps.min() < -(2**15) or taps.max() >= 2**15):
        return None
    if any(r[3] == 0 for r in records):
        return None
    words = (taps[:, 0::2] & 0xFFFF) | (taps[:, 1::2] << 16)
    groups = -(-out_c // 4)
    padded = np.zeros((groups * 4, words.shape[1]), dtype=np.int64)
    padded[:out_c] = np.where(words >= 2**31, words - 2**32, words)  # as int32
    recs = [(r[0] << r[2], r[1], r[3], r[4]) for r in records]
    recs += [(0, 0, 1, 0)] * (groups * 4 - out_c)
    out: list[int] = []
    for g in range(groups):
        mine = recs[4 * g : 4 * g + 4]
        out += [r[0] for r in mine]
        for j in range(0, words.shape[1], 4):
            out += padded[4 * g : 4 * g + 4, j : j + 4].reshape(-1).tolist()
        out += [v for r in mine for v in r[1:]]
    return tuple(int(v) for v in out)


def stem_scratch_bytes(in_c: int, k_w: int, stride_w: int, out_w: int) -> int:
    """A strip's band: (strip - 1) * stride_w + k_w columns."""
    strip = min(STRIP, out_w)
    return 4 * ((strip - 1) * stride_w + k_w) * (len(COLUMN_LANES[in_c]) // 2)
