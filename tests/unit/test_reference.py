"""How outputs are compared with TFLM's (mcugen.reference.first_difference): integers exactly,
floats within a relative tolerance, and a NaN or an infinity only against the same."""

from __future__ import annotations

import numpy as np

from mcugen.reference import first_difference

NAN, INF = float("nan"), float("inf")


def test_integers_compare_exactly() -> None:
    ref = np.array([1, 2, 3], np.int8)
    assert first_difference(ref.copy(), ref, 1e-5) is None
    assert first_difference(np.array([1, 2, 4], np.int8), ref, 1e-5) == (1, 2)


def test_floats_within_tolerance_of_the_largest_finite_magnitude() -> None:
    ref = np.array([0.0, 1.0, 100.0], np.float32)
    assert first_difference(ref + np.float32(1e-4), ref, 1e-5) is None
    assert first_difference(ref + np.array([0, 0.5, 0], np.float32), ref, 1e-5) == (1, 1)
    # an infinity in the reference does not widen the tolerance of the other elements
    ref = np.array([INF, 1.0], np.float32)
    assert first_difference(np.array([INF, 2.0], np.float32), ref, 1e-5) == (1, 1)


def test_nan_and_infinity_match_only_themselves() -> None:
    ref = np.array([NAN, INF, -INF, 1.0], np.float32)
    assert first_difference(ref.copy(), ref, 1e-5) is None
    assert first_difference(np.array([0.0, INF, -INF, 1.0], np.float32), ref, 1e-5) == (1, 0)
    assert first_difference(np.array([NAN, -INF, -INF, 1.0], np.float32), ref, 1e-5) == (1, 1)
    assert first_difference(np.array([NAN, INF, -INF, NAN], np.float32), ref, 1e-5) == (1, 3)
    finite = np.array([1.0, 2.0], np.float32)
    assert first_difference(np.array([NAN, 2.0], np.float32), finite, 1e-5) == (1, 0)
    assert first_difference(np.array([INF, 2.0], np.float32), finite, 1e-5) == (1, 0)
