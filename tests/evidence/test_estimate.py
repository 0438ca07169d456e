"""The plan's cost estimate (council/evidence/estimate.py) against what the scripted runs sent."""

from __future__ import annotations

from typing import Any

import pytest

from council import graph
from council.config import Overrides, load_options
from council.evidence.estimate import (
    EXPECTED_READS,
    MOST_READS,
    SECONDS_PER_TURN,
    duration,
    estimate,
    longest,
    plan_lines,
    rough,
    share_done,
    time_left,
)
from council.store.state import AgentPhase, AgentRecord, RunState, SeatStatus

# Measured with benchmarks/run.py --only volume (docs/cost.md): the real CLIs against the
# scripted model, `council run --test` and these options: requests, request bytes.
MEASURED: dict[str, tuple[dict[str, Any], int, int]] = {
    # The three depths with their checks on (`--depth D --verify`), measured on 76efffc+.
    "depth quick": ({"depth": "quick", "verify": True}, 16, 233_100),
    "depth standard": ({"depth": "standard", "verify": True}, 36, 508_600),
    "depth deep": ({"depth": "deep", "verify": True}, 58, 820_600),
    "one agent": ({"agents": "claude", "verify": False, "debate": "off"}, 8, 131_900),
    "no verify, no debate": ({"verify": False, "debate": "off"}, 28, 432_000),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_estimate_stays_within_twice_what_the_scripted_run_sent(name: str) -> None:
    overrides, requests, sent = MEASURED[name]
    e = estimate(load_options(Overrides(test=True, **overrides)))
    assert 0.5 <= e.requests / requests <= 2, (e.requests, requests)
    assert 0.5 <= e.sent_bytes / sent <= 2, (e.sent_bytes, sent)


def test_the_production_profile_pays_for_the_depth_asked() -> None:
    """Issue 34's targets on the production profile (10 turns a seat, verification on), not
    only on --test: standard at most 65% of deep's requests, quick at most twice one agent's
    (one production seat with its whole cap: --agents claude --depth deep, 26 requests)."""
    requests = {d: estimate(load_options(Overrides(depth=d))).requests for d in graph.DEPTHS}
    one = estimate(load_options(Overrides(agents=("claude",), depth="deep"))).requests
    one_standard = estimate(load_options(Overrides(agents=("claude",)))).requests
    assert requests["standard"] <= 0.65 * requests["deep"], requests
    assert requests["quick"] <= 2 * min(one, one_standard), (requests, one, one_standard)
    assert requests["deep"] == 162  # deep is today's pipeline at the profile's caps


def test_more_agents_and_loops_cost_more() -> None:
    one = estimate(load_options(Overrides(test=True, agents="claude")))
    three = estimate(load_options(Overrides(test=True)))
    full = estimate(load_options(Overrides()))
    assert one.tokens_in < three.tokens_in < full.tokens_in
    assert full.cost_usd is not None
    assert three.cost_usd is not None
    assert full.cost_usd > three.cost_usd > 0


def test_the_plan_says_what_it_estimates() -> None:
    requests, _time = plan_lines(load_options(Overrides(test=True)))
    assert requests.startswith("estimate: ~")
    assert "model requests" in requests
    assert "$" in requests


def test_each_figure_of_the_plan_is_a_range_of_what_is_expected_and_the_most() -> None:
    """Issue 43: "at least 100 model requests … ~1 h 10 min at the caps" put a floor and a
    ceiling in one line. Requests, cost and time each say what is expected and the most."""
    options = load_options(Overrides())
    requests, time = plan_lines(options)
    assert "at least" not in requests + time
    expected, most = estimate(options, EXPECTED_READS), estimate(options, MOST_READS)
    assert expected.requests < most.requests
    assert (f"~{expected.requests} model requests expected, at most ~{most.requests}"
            in requests)
    assert expected.cost_usd is not None
    assert f"cost: ~${expected.cost_usd:.2f} expected, at most " in requests
    bound = longest(options)
    assert bound is not None
    assert bound > duration(options)
    assert time.startswith(f"time: {rough(duration(options))} expected")
    assert time.endswith(f"at most {rough(bound)} (each phase's time limit)")


def test_the_spend_limit_bounds_the_most_the_plan_says_a_run_costs() -> None:
    limited = load_options(Overrides(depth="deep", max_cost=5))
    requests, _time = plan_lines(limited)
    most = estimate(limited, MOST_READS).cost_usd
    assert most is not None
    assert most > 5
    assert "at most $5 (the spend limit)" in requests or \
        "cost: at most $5, the spend limit" in requests
    tiny = load_options(Overrides(max_cost=0.5))
    assert "cost: at most $0.5, the spend limit, which stops the run short of" in \
        plan_lines(tiny)[0]


# ---------------------------------------------------------------- time: planned, done, left
TEST_SEATS = ("claude", "codex", "gemini")
FULL_TURN = SECONDS_PER_TURN[graph.FULL]


def test_the_plan_times_each_stage_by_its_slowest_seat_or_its_queue() -> None:
    # --test: research, refinement and synthesis, 2 turns each; the seats of a phase work
    # at once, so each stage takes two turns...
    options = load_options(Overrides(test=True))
    assert duration(options) == 3 * 2 * FULL_TURN
    # ...unless one process at a time queues them: six turns for each of the first two.
    one_at_a_time = load_options(Overrides(test=True, max_parallel=1))
    assert duration(one_at_a_time) == (6 + 6 + 2) * FULL_TURN
    _requests, line = plan_lines(options)
    assert f"{rough(duration(options))} expected" in line
    assert "rough" in line
    # The most: each stage stopped at its phases' time limit, queued seats one after another.
    assert longest(options) == 3 * 3600
    assert longest(one_at_a_time) == (3 + 3 + 1) * 3600
    assert longest(load_options(Overrides(test=True, verify=True))) == 3 * 3600 + 3 * 900


def test_a_duration_is_said_to_the_minute_and_past_an_hour_to_five() -> None:
    assert rough(59) == "under a minute"
    assert rough(24 * 60 + 20) == "~24 min"
    assert rough(99 * 60) == "~1 h 40 min"


def running(iteration: int) -> AgentPhase:
    return AgentPhase(status=SeatStatus.RUNNING, iteration=iteration, max_iterations=2)


def state_with(phases: dict[str, dict[str, AgentPhase]],
               steps: dict[str, str] | None = None, phase: str = "research") -> RunState:
    options = load_options(Overrides(test=True))
    return RunState(id="r", topic="q", created_at="2026-11-27T10:00:00Z", options=options,
                    phase=phase, steps=steps, agents={
                        seat: AgentRecord(cli=seat, phases=phases.get(seat, {}))
                        for seat in TEST_SEATS})


def test_the_share_done_weighs_each_turn_by_the_time_its_stage_is_planned() -> None:
    assert share_done(state_with({})) == 0.0
    # Research (a third of the planned time): claude is in its second turn, the others in
    # their first: one turn of the stage's six is behind.
    research = {"claude": {"research": running(2)}, "codex": {"research": running(1)},
                "gemini": {"research": running(1)}}
    assert share_done(state_with(research)) == pytest.approx(1 / 3 * 1 / 6)
    # A seat that ended its loop early has all its turns behind it.
    early = {**research, "codex": {"research": AgentPhase(
        status=SeatStatus.COMPLETE, iteration=1, max_iterations=2)}}
    assert share_done(state_with(early)) == pytest.approx(1 / 3 * 3 / 6)
    # The research over (steps), the refinement half done, the synthesis not begun.
    refining = {seat: {"refinement": AgentPhase(status=SeatStatus.CAPPED, iteration=2)}
                for seat in ("claude", "codex")}
    half = state_with({**refining, "gemini": {"refinement": running(1)}},
                      steps={"research": "done"}, phase="refinement")
    assert share_done(half) == pytest.approx(1 / 3 + 1 / 3 * 4 / 6)
    # A phase skipped counts as behind the run; a run done is all done.
    skipped = state_with({}, steps={"research": "done", "refinement": "skipped: budget"},
                         phase="synthesis")
    assert share_done(skipped) == pytest.approx(2 / 3)
    assert share_done(state_with({}, phase="done")) == 1.0


def test_the_time_left_is_the_plans_until_a_turn_is_done_then_the_runs_pace() -> None:
    assert time_left(1440, 0.0, 0) == 1440
    assert time_left(1440, 0.0, 600) == 840
    assert time_left(1440, 0.0, 2000) == 0  # slower than planned, nothing done: no guess
    # A quarter done in 10 minutes of a 24-minute plan: the plan's 18 minutes left and the
    # pace's 30, the pace weighing the share of the planned time gone (10 of 24).
    assert time_left(1440, 0.25, 600) == pytest.approx(14 / 24 * 1080 + 10 / 24 * 1800)
    # Past the planned time, the pace alone, whatever the plan said.
    assert time_left(600, 0.25, 600) == pytest.approx(1800)
    assert time_left(1440, 1.0, 600) == 0


def test_the_time_left_does_not_jump_tenfold_in_the_first_minute() -> None:
    """Issue 43: the live view's first "time left" swung from 1 h 10 min to 7 min within
    seconds, when a phase was skipped (or a seat's loop ended) early and the share done
    jumped. In a run's first minute, whatever the share done, it stays within a factor of
    two of the plan's time left."""
    planned = duration(load_options(Overrides()))
    for elapsed in (1, 5, 20, 60):
        for share in (0.01, 0.1, 0.3, 0.5):
            left = time_left(planned, share, elapsed)
            plan_left = planned * (1 - share)
            assert plan_left / 2 <= left <= plan_left * 2, (elapsed, share, left)
    # The first seconds of a run: the plan's time, then a tenth of it done in 10 seconds.
    first = [time_left(planned, 0.0, 5), time_left(planned, 0.1, 10),
             time_left(planned, 0.1, 60)]
    assert max(first) / min(first) < 1.25, first


def test_the_plan_prices_a_self_hosted_seat_at_nothing() -> None:
    from council.runoptions import RunOptions, Seat

    def seat(**more: object) -> Seat:
        return Seat.from_dict("local", {"cli": "codex", "model": "gpt-5.5", **more}, "agents")

    vendor = estimate(RunOptions(seats=(seat(),)))
    local = estimate(RunOptions(seats=(seat(base_url="http://127.0.0.1:8080/v1",
                                            context_window=65536),)))
    assert vendor.cost_usd
    assert vendor.cost_usd > 0
    assert local.cost_usd == 0.0
    assert local.tokens_in == vendor.tokens_in > 0
