"""The arithmetic of the summary: means with 95% intervals, paired differences, proportions.

Pure and dependency-free (no scipy): an evaluation of ten questions is small, so the intervals
use Student's t, not the normal approximation, and say how many values they rest on."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Student's t, two-sided 95% (the 0.975 quantile), for 1 to 30 degrees of freedom.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
Z975 = 1.959964


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom (a Cornish-Fisher
    expansion beyond the table, within 0.001 there)."""
    if df < 1:
        raise ValueError("at least one degree of freedom")
    if df <= len(T975):
        return T975[df - 1]
    z = Z975
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


@dataclass(frozen=True)
class Estimate:
    """A mean and its 95% interval; no interval from fewer than two values."""

    n: int
    mean: float | None
    low: float | None = None
    high: float | None = None

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None or self.mean is None:
            return None
        return self.high - self.mean

    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or
                                                                   self.high < 0)


def mean_ci(values: Sequence[float]) -> Estimate:
    """The mean of `values` with a t-based 95% interval."""
    n = len(values)
    if n == 0:
        return Estimate(0, None)
    mean = math.fsum(values) / n
    if n == 1:
        return Estimate(1, mean)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t975(n - 1) * math.sqrt(variance / n)
    return Estimate(n, mean, mean - half, mean + half)


def paired(a: Mapping[str, float], b: Mapping[str, float]) -> Estimate:
    """The mean of a − b over the questions both answered, with its 95% interval: the
    question-to-question spread cancels, so a real difference shows with fewer questions
    than two separate intervals would need."""
    common = sorted(set(a) & set(b))
    return mean_ci([a[q] - b[q] for q in common])


def wilson(successes: int, trials: int) -> Estimate:
    """A proportion with its Wilson 95% interval (sound near 0 and 1 and for few trials)."""
    if trials <= 0:
        return Estimate(0, None)
    p = successes / trials
    z2 = Z975 ** 2
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z975 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials ** 2)) / (1 + z2 / trials)
    return Estimate(trials, p, max(0.0, centre - half), min(1.0, centre + half))
