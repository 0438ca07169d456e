"""How far two judges agree on which reports are better: Kendall's tau-b over the reports
both scored. Pure.

tau-b, not tau-a: rubric scores tie often (two reports meeting 4 of 5 criteria), and tau-b
counts a pair tied by one judge as neither agreement nor disagreement, scaling by the pairs
each judge did tell apart. It is undefined with fewer than two reports, or when a judge gave
every report the same score (it ranked nothing); both are said in words, never as 0."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

TOO_FEW = "not enough reports"
NO_ORDER = "one judge gave every report the same score"
TIE = 1e-9


@dataclass(frozen=True)
class Agreement:
    n: int  # reports both judges scored
    tau: float | None  # in [-1, 1]; None: `why`
    why: str | None = None

    def words(self) -> str:
        """`Kendall's tau-b +0.67 over 12 reports`, or why there is none."""
        reports = f"{self.n} report{'' if self.n == 1 else 's'}"
        if self.tau is None:
            return f"{self.why} ({reports} scored by both): no rank agreement"
        return f"Kendall's tau-b {self.tau:+.2f} over {reports}"


def kendall(pairs: Sequence[tuple[float, float]]) -> Agreement:
    """Kendall's tau-b of (first judge's score, second judge's score) pairs, one per report:
    (concordant − discordant) / √((pairs − ties of the first)(pairs − ties of the second))."""
    n = len(pairs)
    if n < 2:
        return Agreement(n, None, TOO_FEW)
    concordant = discordant = tied_first = tied_second = 0
    for i in range(n):
        a1, b1 = pairs[i]
        for a2, b2 in pairs[i + 1:]:
            da, db = _sign(a1 - a2), _sign(b1 - b2)
            tied_first += da == 0
            tied_second += db == 0
            concordant += da * db > 0
            discordant += da * db < 0
    total = n * (n - 1) // 2
    denominator = math.sqrt((total - tied_first) * (total - tied_second))
    if denominator == 0:
        return Agreement(n, None, NO_ORDER)
    return Agreement(n, (concordant - discordant) / denominator)


def _sign(value: float) -> int:
    """The difference's sign; a difference within TIE (float rounding of one score reached by
    two sums) is a tie."""
    return 0 if abs(value) <= TIE else (1 if value > 0 else -1)
