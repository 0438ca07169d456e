"""Each phase's account (evidence/accounts.py) in `council status --json`, end to end with the
fake CLIs: every phase that ran is listed, with what it cost and a non-empty effect."""

from __future__ import annotations

import json
from typing import Any

import yaml
from conftest import Council
from test_completeness import CLAIMS, CLAIMS_AFTER, GEMINI_RESEARCH, SCOPE, VERDICTS

from council import graph
from council.store.loop import MARKER

DISSENT = f"""# Dissent

## The Likely Consensus

The moon drives the tides.

## The Opposing Case

### Wind setup dominates shallow estuaries (moderate)

Storm surges add metres (https://example.org/surge).

### Tide gauges drift over decades (weak)

Old datums were never corrected.

## Sources

- https://example.org/surge
{MARKER}
"""
COUNTERPOINTS = f"""# Counterpoints

## Resonance in enclosed basins amplifies tides

The Bay of Fundy shows it (https://example.org/fundy).

## What Survives

The lunar mechanism.
{MARKER}
"""
# Takes up the dissent's first point and the antagonist's only one; carries claim c1.
FINAL = f"""# Tides

Tides follow the moon, as every report found (https://example.org/tides).

## Counterpoints

- Wind setup dominates shallow estuaries only during storms: it does not hold in general.
- Resonance in enclosed basins amplifies tides locally, which the report now says.

## Sources

- https://example.org/not-counted
{MARKER}
"""


def by_phase(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["phase"]: a for a in data["phases"]}


def test_status_json_lists_every_phase_that_ran(council: Council) -> None:
    council.script({"*": {"finish_after": 1}, "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)},
                    "claude:recheck": {"content": json.dumps(CLAIMS_AFTER)},
                    "gemini:research": {"content": GEMINI_RESEARCH}, **VERDICTS,
                    "codex:dissent": {"content": DISSENT},
                    "codex:antagonist": {"content": COUNTERPOINTS},
                    "claude:synthesis": {"content": FINAL}})
    proc = council.run("run", "--test", "--verify", "--depth", "deep", "How do tides work?")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    state = yaml.safe_load((run / "state.yaml").read_text())
    data = json.loads(council.run("status", "--json", run.name).stdout)

    # Every phase that ran, in the graph's order, none that did not; each with an effect.
    done = [p.name for p in graph.GRAPH if state["steps"].get(p.name) == graph.DONE]
    assert [a["phase"] for a in data["phases"]] == done
    assert len(done) == len(graph.GRAPH)  # this run runs them all
    assert all(a["effect"] for a in data["phases"])
    accounts = by_phase(data)

    # The cost is the ledger's, phase by phase; turns are the agents' iterations.
    for name, account in accounts.items():
        rows = [u for u in data["usage"] if u["phase"] == name]
        assert account["tokens_in"] == sum(u["tokens_in"] for u in rows) > 0
        assert account["tokens_out"] == sum(u["tokens_out"] for u in rows) > 0
        assert account["turns"] == sum(rec["phases"][name]["iteration"]
                                       for rec in state["agents"].values()
                                       if name in rec["phases"]) > 0
        assert account["wall_s"] is not None
        assert account["wall_s"] >= 0
    # Requests: claude reports them (num_turns), codex and gemini do not.
    assert accounts["scope"]["requests"] == 1  # claude alone, one turn
    assert accounts["research"]["requests"] is None

    assert accounts["scope"]["effect"] == {"questions": 3, "dimensions": 3}
    assert accounts["research"]["effect"]["reports"] == 3
    assert accounts["research"]["effect"]["claims_made"] == 2  # gemini's two cited bullets
    assert accounts["claims"]["effect"]["claims_listed"] == 3
    assert accounts["claims"]["effect"]["gaps_found"] == 2  # q2 partly answered, d3 uncovered
    recheck = accounts["recheck"]["effect"]
    assert (recheck["questions_answered_before"], recheck["questions_answered_after"]) == (2, 3)
    assert (recheck["dimensions_covered_before"], recheck["dimensions_covered_after"]) == (2, 3)
    assert recheck["gaps_closed"] == accounts["gapfill"]["effect"]["gaps_closed"] == 2
    assert accounts["verification"]["effect"] == {
        "claims_checked": 3, "supported": 1, "softened": 1, "dropped": 1, "unverifiable": 0}
    assert accounts["dissent"]["effect"] == {"points": 2, "answered": 1}
    assert accounts["antagonist"]["effect"] == {"points": 1, "answered": 1}
    synthesis = accounts["synthesis"]["effect"]
    assert (synthesis["claims_given"], synthesis["claims_carried"]) == (3, 1)
    # Cited outside council's Sources section: the final report's own tides link (council
    # rebuilds Sources from every report, which is not what the synthesis cited).
    assert synthesis["sources_cited"] == 1


def test_a_lighter_run_lists_only_what_ran(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--no-verify", "--debate", "off", "q")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(council.run("status", "--json", council.only_run().name).stdout)
    assert [a["phase"] for a in data["phases"]] == ["research", "refinement", "synthesis"]
    assert all(a["effect"] for a in data["phases"])
