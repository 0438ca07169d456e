"""The summary's arithmetic, against values worked out by hand or from tables."""

from __future__ import annotations

import math

import pytest

from council.evaluation import stats


def test_student_t_quantiles() -> None:
    assert stats.t975(1) == 12.706
    assert stats.t975(9) == 2.262
    assert stats.t975(31) == pytest.approx(2.0395, abs=0.001)
    assert stats.t975(120) == pytest.approx(1.9799, abs=0.001)
    with pytest.raises(ValueError):
        stats.t975(0)


def test_mean_and_interval() -> None:
    est = stats.mean_ci([0.5, 0.7, 0.9])
    half = 4.303 * 0.2 / math.sqrt(3)  # sd 0.2, n 3
    assert est.mean == pytest.approx(0.7)
    assert est.low == pytest.approx(0.7 - half)
    assert est.high == pytest.approx(0.7 + half)
    assert est.excludes_zero()
    assert not stats.mean_ci([-0.1, 0.2, 0.1]).excludes_zero()
    assert stats.mean_ci([]).mean is None
    one = stats.mean_ci([0.4])
    assert (one.mean, one.low, one.half_width) == (0.4, None, None)


def test_paired_differences_use_only_questions_both_answered() -> None:
    a = {"q1": 0.9, "q2": 0.8, "q3": 0.7, "only-a": 0.0}
    b = {"q1": 0.5, "q2": 0.5, "q3": 0.4}
    est = stats.paired(a, b)
    assert est.n == 3
    assert est.mean == pytest.approx((0.4 + 0.3 + 0.3) / 3)
    assert est.excludes_zero()
    assert stats.paired(b, a).mean == pytest.approx(-est.mean)  # type: ignore[operator]


def test_wilson_interval() -> None:
    est = stats.wilson(8, 10)
    assert est.mean == 0.8
    assert est.low == pytest.approx(0.4902, abs=1e-3)
    assert est.high == pytest.approx(0.9433, abs=1e-3)
    assert stats.wilson(0, 0).mean is None
    full = stats.wilson(5, 5)
    assert full.high == 1.0
    assert full.low is not None
    assert full.low < 1.0
