"""Each phase's account from crafted run folders (evidence/accounts.py): which phases ran, what
each cost, and each effect, counted from the files by council's own rules."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from council import graph
from council.evidence import accounts
from council.runoptions import RunOptions
from council.store.state import AgentPhase, AgentRecord, RunState, SeatStatus
from council.store.workspace import Workspace
from council.views.status import epoch

SEATS = {"claude": "claude", "codex": "codex"}


def state(phases: dict[str, dict[str, AgentPhase]], steps: dict[str, str] | None = None
          ) -> RunState:
    agents = {seat: AgentRecord(cli) for seat, cli in SEATS.items()}
    for phase, by_seat in phases.items():
        for seat, record in by_seat.items():
            agents[seat].phases[phase] = record
    return RunState(id="r", topic="q", created_at="2026-01-01T00:00:00Z",
                    options=RunOptions(seats=()), agents=agents,
                    steps=steps if steps is not None else dict.fromkeys(phases, graph.DONE))


def done(iteration: int = 1, start: str = "2026-01-01T00:00:00Z",
         end: str | None = "2026-01-01T00:01:00Z", cost: float | None = 0.5) -> AgentPhase:
    return AgentPhase(status=SeatStatus.COMPLETE, iteration=iteration, started_at=start,
                      ended_at=end, usage={"tokens_in": 100, "tokens_cached": 40,
                                           "tokens_out": 10, "cost_usd": cost})


def account(tmp_path: Path, st: RunState, phase: str,
            requests: dict[tuple[str, str], int | None] | None = None) -> accounts.PhaseAccount:
    ws = Workspace(tmp_path)
    found = {a.phase: a for a in accounts.accounts(st, accounts.read(ws, st), requests or {},
                                                   epoch)}
    return found[phase]


def write(tmp_path: Path, name: str, text: str | dict[str, Any]) -> None:
    (tmp_path / name).write_text(text if isinstance(text, str) else json.dumps(text))


R1 = """# Report
- The moon raises two tidal bulges on opposite sides (https://a.example/moon).
- Spring tides arrive twice each lunar month (https://b.example/spring).
"""
R2 = """# Report
- The moon raises two tidal bulges on opposite sides (https://a.example/moon).
- Harbour pilots plan every crossing around the tide tables (https://c.example/pilots).
"""


def test_the_cost_of_a_phase_is_its_agents_summed(tmp_path: Path) -> None:
    st = state({"research": {"claude": done(2), "codex": done(
        3, "2026-01-01T00:00:30Z", "2026-01-01T00:02:00Z", cost=None)}})
    got = account(tmp_path, st, "research", {("claude", "research"): 4,
                                             ("codex", "research"): None})
    assert (got.turns, got.usage.tokens_in, got.usage.tokens_cached, got.usage.tokens_out) == \
        (5, 200, 80, 20)
    assert got.usage.cost_usd == pytest.approx(0.5)
    assert got.wall_s == 120.0  # first start to last end
    assert got.requests is None  # codex does not report them
    both = account(tmp_path, st, "research", {("claude", "research"): 4,
                                              ("codex", "research"): 2})
    assert both.requests == 6
    running = state({"research": {"claude": done(end=None)}})
    assert account(tmp_path, running, "research").wall_s is None


def test_only_the_phases_that_ran(tmp_path: Path) -> None:
    st = state({"research": {"claude": done()}},
               steps={"scope": "skipped: one agent", "research": graph.DONE,
                      "refinement": "skipped: one agent"})
    files = accounts.read(Workspace(tmp_path), st)
    assert accounts.ran(st, files) == [graph.RESEARCH]
    write(tmp_path, "final-report.md", "# Final\n")  # the host's session wrote it
    files = accounts.read(Workspace(tmp_path), st)
    assert accounts.ran(st, files) == [graph.RESEARCH, graph.SYNTHESIS]


def test_research_counts_reports_sources_and_cited_claims(tmp_path: Path) -> None:
    write(tmp_path, "claude-report.md", R1)
    write(tmp_path, "codex-report.md", R2)
    st = state({"research": {"claude": done(), "codex": done()}})
    assert account(tmp_path, st, "research").effect == {
        "reports": 2, "sources": 3, "claims_made": 4}
    # A failed seat's leftover report is not counted.
    st.agents["codex"].phases["research"].status = SeatStatus.FAILED
    assert account(tmp_path, st, "research").effect["reports"] == 1


def test_a_linked_report_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-secret.md"
    outside.write_text(R1)
    os.symlink(outside, tmp_path / "claude-report.md")
    st = state({"research": {"claude": done()}})
    assert account(tmp_path, st, "research").effect == {
        "reports": 0, "sources": 0, "claims_made": 0}


def test_refinement_counts_sources_and_claims_changed(tmp_path: Path) -> None:
    write(tmp_path, "claude-report.md", R1)
    write(tmp_path, "claude-refined.md", R2)  # dropped spring, added pilots
    st = state({"research": {"claude": done()}, "refinement": {"claude": done()}})
    assert account(tmp_path, st, "refinement").effect == {
        "reports": 1, "sources_added": 1, "sources_dropped": 1, "claims_changed": 1,
        "claims_new": 1}


SCOPE = {"status": "ok", "questions": [{"id": f"q{i}", "question": f"Q{i}?"} for i in (1, 2, 3)],
         "dimensions": [{"id": "d1", "dimension": "D1"}, {"id": "d2", "dimension": "D2"},
                        {"id": "d3", "dimension": "D3"}]}
BEFORE = {"questions": [{"id": "q1", "status": "answered"}, {"id": "q2", "status": "partial"},
                        {"id": "q3", "status": "open"}],
          "dimensions": [{"id": "d1", "covered": True}, {"id": "d2", "covered": False},
                         {"id": "d3", "covered": True}]}
PLAN = {"plan": {"claude": [{"id": "q3", "kind": "question"}],
                 "codex": [{"id": "d2", "kind": "dimension"}, {"id": "q2", "kind": "question"}]}}


def claims(n: int, verdicts: list[str] | None = None) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "agent": "claude", "claim": f"Claim number {i} about tides.",
             "verdict": (verdicts or [])[i] if verdicts else "UNVERIFIED"} for i in range(n)]


def test_scope_claims_gap_fill_and_recheck(tmp_path: Path) -> None:
    write(tmp_path, "scope.json", SCOPE)
    write(tmp_path, "claims-draft.json", {"claims": claims(4)})
    write(tmp_path, "recheck-draft.json", {"claims": claims(5)})
    write(tmp_path, "gaps.json", PLAN)
    write(tmp_path, "claude-refined.md", R1)
    write(tmp_path, "claude-gaps.md", "- Q3 is settled by the 2020 survey (https://d.example).\n")
    write(tmp_path, "codex-gaps.md", "- D2 is covered (https://a.example/moon).\n")
    after = {"questions": [{"id": "q1", "status": "answered"}, {"id": "q2", "status": "partial"},
                           {"id": "q3", "status": "answered"}],
             "dimensions": [{"id": "d1", "covered": True}, {"id": "d2", "covered": True},
                            {"id": "d3", "covered": True}]}
    write(tmp_path, "claims.json", {"status": "extracted", "judged_by": "recheck",
                                    "claims": claims(5), **after, "before": BEFORE})
    st = state({"scope": {"claude": done()}, "refinement": {"claude": done()},
                "claims": {"claude": done()}, "gapfill": {"claude": done(), "codex": done()},
                "recheck": {"claude": done()}})
    assert account(tmp_path, st, "scope").effect == {"questions": 3, "dimensions": 3}
    assert account(tmp_path, st, "claims").effect == {
        "claims_listed": 4, "questions_answered": 1, "questions_partial": 1,
        "questions_open": 1, "dimensions_covered": 2, "gaps_found": 3}
    # q3 answered and d2 covered after the gap fill; q2 still partial: 2 of 3 closed.
    assert account(tmp_path, st, "gapfill").effect == {
        "gaps": 3, "reports": 2, "sources_new": 1, "gaps_closed": 2}
    assert account(tmp_path, st, "recheck").effect == {
        "questions_answered_before": 1, "questions_partial_before": 1,
        "questions_open_before": 1, "dimensions_covered_before": 2,
        "questions_answered_after": 2, "questions_partial_after": 1,
        "questions_open_after": 0, "dimensions_covered_after": 3,
        "gaps_closed": 2, "claims_listed": 5}


def test_a_degraded_scope_and_claims_count_nothing(tmp_path: Path) -> None:
    write(tmp_path, "scope.json", {"status": "degraded", "error": "no answer"})
    write(tmp_path, "claims-draft.json", "not JSON")
    st = state({"scope": {"claude": done()}, "claims": {"claude": done()}})
    assert account(tmp_path, st, "scope").effect == {"questions": 0, "dimensions": 0}
    assert account(tmp_path, st, "claims").effect["claims_listed"] == 0


def test_verification_supported_softened_dropped_unverifiable(tmp_path: Path) -> None:
    verdicts = ["SUPPORTED", "SUPPORTED", "OVERSTATED", "UNSUPPORTED", "CONTRADICTED",
                "UNVERIFIED"]
    write(tmp_path, "claims.json", {"status": "partial", "claims": claims(6, verdicts)})
    st = state({"verification": {"claude": done(), "codex": done()}})
    assert account(tmp_path, st, "verification").effect == {
        "claims_checked": 6, "supported": 2, "softened": 1, "dropped": 2, "unverifiable": 1}


DISSENT = """# Dissent
## The Likely Consensus
The moon.
## The Opposing Case
### Wind setup dominates estuaries (strong)
Text.
### Gauges drift over decades (weak)
```
### not a point: inside a code block
```
## What Would Settle It
More data.
"""
COUNTER = """# Counterpoints
## Resonance in enclosed basins amplifies tides
Fundy.
## Sediment changes harbour depths
Silt.
## What Survives
The moon.
## Sources
- https://x.example
"""


def test_the_opposition_points_and_how_many_the_report_takes_up(tmp_path: Path) -> None:
    assert accounts.points(DISSENT) == ["Wind setup dominates estuaries (strong)",
                                        "Gauges drift over decades (weak)"]
    assert accounts.points(COUNTER) == ["Resonance in enclosed basins amplifies tides",
                                        "Sediment changes harbour depths"]
    listed = "# Dissent\n## The Opposing Case\n- One point here\n- Another point\n"
    assert accounts.points(listed) == ["One point here", "Another point"]
    write(tmp_path, "dissent.md", DISSENT)
    write(tmp_path, "counterpoints.md", COUNTER)
    st = state({"dissent": {"codex": done()}, "antagonist": {"codex": done()}})
    assert account(tmp_path, st, "dissent").effect == {"points": 2, "answered": None}
    write(tmp_path, "final-report.md", "# Final\n\nWind setup dominates estuaries, we read.\n"
          "\n## Counterpoints\n\n- Resonance in enclosed basins amplifies tides: it holds.\n")
    # Wind setup is outside the Counterpoints section: not taken up there.
    assert account(tmp_path, st, "dissent").effect == {"points": 2, "answered": 0}
    assert account(tmp_path, st, "antagonist").effect == {"points": 2, "answered": 1}


def test_synthesis_claims_carried_and_sources_cited(tmp_path: Path) -> None:
    write(tmp_path, "claims.json", {"status": "ok", "claims": [
        {"id": "c1", "claim": "Spring tides reach 20% above the mean range.",
         "verdict": "SUPPORTED"},
        {"id": "c2", "claim": "Wind causes the tides.", "verdict": "CONTRADICTED"}]})
    write(tmp_path, "final-report.md", (
        "# Final\n\nSpring tides reach 20% above the mean range (https://a.example/s).\n\n"
        "## Claims Dropped in Verification\n\n- c2: Wind causes the tides.\n\n"
        "## Sources\n\n1. <https://a.example/s>\n2. <https://z.example/only-listed>\n"))
    st = state({"synthesis": {"claude": done()}})
    assert account(tmp_path, st, "synthesis").effect == {
        "claims_given": 2, "claims_carried": 1, "sources_cited": 1}
    # A changed figure is not the same claim.
    write(tmp_path, "final-report.md", "Spring tides reach 40% above the mean range.\n")
    assert account(tmp_path, st, "synthesis").effect["claims_carried"] == 0
