"""The plan's cost estimate (council/evidence/estimate.py) against what the scripted runs sent."""

from __future__ import annotations

from typing import Any

import pytest

from council.config import Overrides, load_options
from council.evidence.estimate import estimate, plan_lines

# Measured with benchmarks/run.py --only volume (docs/cost.md): the real CLIs against the
# scripted model, `council run --test` and these options: requests, request bytes.
MEASURED: dict[str, tuple[dict[str, Any], int, int]] = {
    "default pipeline": ({"verify": True}, 58, 865_500),
    "one agent": ({"agents": "claude", "verify": False, "debate": "off"}, 8, 131_900),
    "no verify, no debate": ({"verify": False, "debate": "off"}, 28, 432_000),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_estimate_stays_within_twice_what_the_scripted_run_sent(name: str) -> None:
    overrides, requests, sent = MEASURED[name]
    e = estimate(load_options(Overrides(test=True, **overrides)))
    assert 0.5 <= e.requests / requests <= 2, (e.requests, requests)
    assert 0.5 <= e.sent_bytes / sent <= 2, (e.sent_bytes, sent)


def test_more_agents_and_loops_cost_more() -> None:
    one = estimate(load_options(Overrides(test=True, agents="claude")))
    three = estimate(load_options(Overrides(test=True)))
    full = estimate(load_options(Overrides()))
    assert one.tokens_in < three.tokens_in < full.tokens_in
    assert full.cost_usd is not None
    assert three.cost_usd is not None
    assert full.cost_usd > three.cost_usd > 0


def test_the_plan_says_what_it_estimates() -> None:
    (line,) = plan_lines(load_options(Overrides(test=True)))
    assert line.startswith("estimate: at least ")
    assert "model requests" in line
    assert "$" in line
