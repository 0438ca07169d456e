"""The phase graph as data (graph.py) and the engine that runs it (pipeline.py): the order,
the parallel branches, the skips, resume, and --max-parallel."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import yaml
from conftest import Council

from council import graph
from council.config import Overrides, load_options
from council.graph import GRAPH, Facts
from council.runoptions import RunOptions
from council.store.state import PHASES


def test_the_declaration_is_a_dag_in_dependency_order_and_names_every_state_phase() -> None:
    graph.check()
    assert graph.NAMES == PHASES
    assert {p.name for p in (*GRAPH, *graph.TASKS)} == set(graph.BY_NAME)
    assert graph.ASK.name not in graph.NAMES
    assert graph.ASK.name in graph.RECORDED
    # a task outside the graph is never planned, at any depth
    assert not graph.ASK.depths


def test_a_phase_depending_on_a_later_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = (replace(GRAPH[0], after=("research",)), *GRAPH[1:])
    monkeypatch.setattr(graph, "GRAPH", broken)
    with pytest.raises(ValueError, match="scope depends on research"):
        graph.check()


def test_phases_waiting_for_the_same_ones_start_together() -> None:
    assert graph.groups(set(graph.NAMES)) == [
        ["scope"], ["research", "dissent"], ["refinement"], ["claims"], ["gapfill"],
        ["recheck"], ["verification", "antagonist"], ["synthesis"]]
    # A skipped phase is looked through: the synthesis waits for what ran before it.
    assert graph.groups({"research", "dissent", "synthesis"}) == [
        ["research", "dissent"], ["synthesis"]]


def test_each_phase_declares_its_facts() -> None:
    by = graph.BY_NAME
    assert [p.name for p in GRAPH if p.loops] == [
        "research", "dissent", "refinement", "gapfill", "antagonist", "synthesis"]
    assert [p.name for p in graph.FEEDS] == ["research", "refinement"]
    assert [p.name for p in GRAPH if p.report] == ["research", "dissent", "refinement",
                                                   "gapfill"]
    assert [p.name for p in GRAPH if p.attempts > 1] == ["scope", "claims", "recheck"]
    assert [p.name for p in GRAPH if not p.snapshot] == ["synthesis"]
    assert [p.name for p in GRAPH if p.own_folder] == ["dissent"]
    assert [p.name for p in GRAPH if p.who == graph.EVERY] == [
        "research", "refinement", "verification"]
    assert {p.file("codex") for p in GRAPH} == {
        "scope-draft.json", "codex-report.md", "dissent.md", "codex-refined.md",
        "claims-draft.json", "codex-gaps.md", "recheck-draft.json", "codex-verdicts.json",
        "counterpoints.md", "final-report.md"}
    assert (by["gapfill"].label, by["gapfill"].step) == ("gap fill",
                                                        "gap fill (when gaps are found)")
    assert (by["recheck"].prompt, by["verification"].prompt) == ("claims", "verify")
    # Turns: the seat's own cap, or the phase's when lower.
    assert (by["research"].turns(10), by["dissent"].turns(10), by["dissent"].turns(3),
            by["claims"].turns(10)) == (10, 4, 3, 1)
    assert graph.before(by["refinement"]) is by["research"]


@pytest.mark.parametrize(("steps", "reports", "feeds"), [
    ({"scope": "done"}, set(), "research"),  # the research is under way
    ({"research": "done"}, {"research", "refinement"}, "research"),  # refinement under way
    ({"research": "done", "refinement": "done"}, {"research", "refinement"}, "refinement"),
    # A resume whose budget skipped an interrupted refinement: the reports a few seats had
    # refined are left unused, and every later phase builds on the research.
    ({"research": "done", "refinement": "skipped: cost $2.00 reached the budget"},
     {"research", "refinement"}, "research"),
    # A run that recorded no steps (made before the graph was): what its reports show.
    (None, {"research", "refinement"}, "refinement"),
    (None, {"research"}, "research"),
    (None, set(), "research"),
])
def test_one_rule_says_which_reports_feed_the_phases_after_the_research(
        steps: dict[str, str] | None, reports: set[str], feeds: str) -> None:
    assert graph.feeding(steps, lambda p: p.name in reports).name == feeds


@pytest.mark.parametrize(("overrides", "phases"), [
    ({"depth": "deep"}, ["scope", "research", "dissent", "refinement", "claims", "gapfill",
                         "recheck", "verification", "antagonist", "synthesis"]),
    ({"test": True}, ["research", "refinement", "synthesis"]),
    ({"test": True, "debate": "force"}, ["research", "refinement", "antagonist", "synthesis"]),
    ({"test": True, "dissent": "gemini"}, ["research", "dissent", "refinement", "synthesis"]),
    ({"depth": "deep", "dissent": "off", "debate": "off"}, [
        "scope", "research", "refinement", "claims", "gapfill", "recheck", "verification",
        "synthesis"]),
    ({"agents": ("claude",)}, ["research", "synthesis"]),
    ({"agents": ("claude",), "dissent": "claude"}, ["research", "dissent", "synthesis"]),
])
def test_the_planned_phases_follow_the_options(overrides: dict[str, Any],
                                               phases: list[str]) -> None:
    assert graph.planned(load_options(Overrides(**overrides))) == phases


def test_skips_are_pure_decisions_on_the_facts_of_the_run() -> None:
    full = load_options(Overrides())
    assert graph.skip_refinement(Facts(full, survivors=1)) == (
        "fewer than 2 agents have a report to cross")
    assert graph.skip_refinement(Facts(full, budget_exhausted="$2.00 spent")) == "$2.00 spent"
    assert graph.skip_gapfill(Facts(full, judged=True, gaps=0)) == (
        "no open sub-question or uncovered dimension")
    assert graph.skip_gapfill(Facts(full, judged=False)) == (
        "no coverage judgement to find gaps in")
    assert graph.skip_gapfill(Facts(full, judged=True, gaps=2)) is None
    assert graph.skip_recheck(Facts(full, judged=True, gaps=2, gap_filled=False)) == (
        "no gap fill to judge")
    assert graph.skip_verification(Facts(full, judged=False)) == "no claims to check"
    assert graph.skip_dissent(Facts(replace(full, dissent="off"))) == "off (--dissent off)"
    assert graph.skip_synthesis(Facts(full, budget_exhausted="spent")) is None


def test_the_plan_shows_the_parallel_branches() -> None:
    first = graph.plan(load_options(Overrides(depth="deep")))[1]
    assert ("scope → research ∥ dissent → refinement → claims and coverage → gap fill (when "
            "gaps are found) → coverage judged again → claim verification ∥ antagonist → "
            "synthesis by claude") in first
    limited = graph.plan(load_options(Overrides(max_parallel=2)))[-1]
    assert "at most 2 CLI processes at once" in limited


def test_the_plan_counts_one_agent_and_one_iteration_in_the_singular() -> None:
    one = load_options(Overrides(agents=("claude",), max_iterations=1))
    first, seat = graph.plan(one)[1:3]  # [0]: the depth
    assert first.startswith("1 agent × up to 1 iteration per phase: research → synthesis by "
                            "claude (up to ")
    assert seat.endswith("up to 1 iteration per phase")
    assert graph.plan(load_options(Overrides()))[1].startswith("3 agents × up to ")


def test_the_critical_path_counts_the_longer_branch_once() -> None:
    seconds = {"dissent": 100.0, "research": 10.0, "antagonist": 5.0, "verification": 7.0}
    before = graph.critical_path(lambda p: seconds.get(p.name, 1.0))
    # scope 1, max(research 10, dissent 100), refinement, claims, gapfill, recheck 1 each,
    # max(verification 7, antagonist 5)
    assert before == 1 + 100 + 4 + 7


def test_option_defaults_are_declared_once() -> None:
    stored = RunOptions.from_dict({"seats": []})
    assert (stored.verify, stored.debate, stored.dissent, stored.max_parallel) == (
        True, "auto", "auto", None)
    assert stored == RunOptions(seats=(), depth="deep")  # stored before depths: it ran deep
    assert load_options(Overrides()).debate == RunOptions(seats=()).debate


def test_bad_dissent_and_max_parallel_are_one_line_errors(council: Council) -> None:
    bad = council.run("run", "--dissent", "nobody", "q")
    assert bad.returncode == 2
    assert "--dissent must be auto, off or an agent of this council (claude, codex, gemini)" \
        in bad.stderr
    zero = council.run("run", "--max-parallel", "0", "q")
    assert zero.returncode == 2
    assert zero.stderr.startswith("council: error: ")


def events_of(run: Any) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


def test_research_and_dissent_run_at_the_same_time(council: Council) -> None:
    council.script({"*": {"finish_after": 2, "delay": 0.3}})
    proc = council.run("run", "--test", "--dissent", "codex", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    log = [(e["scope"], e["agent"], e["message"]) for e in events_of(run)]
    dissent_started = log.index(("dissent", None, "started: codex builds the opposing case "
                                 "beside the research"))
    research_done = next(i for i, e in enumerate(log) if e[0] == "research"
                         and e[2].startswith("finished:"))
    assert dissent_started < research_done
    assert (run / "dissent.md").is_file()
    # Its own folder, beside the research folder: the research agent cannot reach the memo.
    assert (run / "agents" / "codex.dissent" / "dissent.md").is_file()
    assert not (run / "agents" / "codex" / "dissent").exists()
    assert (run / "agents" / "codex" / "codex-report.md").is_file()
    assert "## Counterpoints" in (run / "agents" / "claude" / "synthesis-prompt.md").read_text()


def test_max_parallel_keeps_to_its_limit_and_says_who_waits(council: Council) -> None:
    council.script({"*": {"finish_after": 1, "delay": 0.2}})
    proc = council.run("run", "--test", "--max-parallel", "1", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    spans: dict[str, list[str]] = {}
    running, most = 0, 0
    for e in events_of(run):  # a seat's process runs between its started and ended events
        if e["agent"] and e["message"].startswith(("started (", "resumed (")):
            running += 1
            most = max(most, running)
        elif e["agent"] and " after " in e["message"] and e["message"].split()[0] in (
                "complete", "capped", "stopped", "failed"):
            running -= 1
        spans.setdefault(e["scope"], []).append(e["message"])
    assert most == 1
    assert any(m.startswith("queued: all 1 process slots") for m in spans["research"])


def test_resume_does_not_run_an_ended_phase_again(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--debate", "force", "q").returncode == 0
    run = council.only_run()
    st = yaml.safe_load((run / "state.yaml").read_text())
    assert st["steps"]["antagonist"] == "done"
    antagonist = st["agents"]["codex"]["phases"]["antagonist"]
    # Stopped during the synthesis: resume redoes only that.
    st["phase"] = "synthesis"
    st["agents"]["claude"]["phases"]["synthesis"]["status"] = "cancelled"
    del st["steps"]["synthesis"]
    (run / "state.yaml").write_text(yaml.safe_dump(st))
    assert council.run("resume", run.name).returncode == 0
    after = yaml.safe_load((run / "state.yaml").read_text())
    assert after["agents"]["codex"]["phases"]["antagonist"] == antagonist
    assert (run / "progress.log").read_text().count("antagonist started") == 1
    assert after["phase"] == "done"


# ---------------------------------------------------------------- depths (issue 34)
CHECKED = ["scope", "research", "refinement", "claims", "verification", "synthesis"]


@pytest.mark.parametrize(("depth", "phases"), [
    ("quick", ["research", "synthesis"]),
    ("standard", CHECKED),
    ("deep", list(graph.NAMES)),
])
def test_each_depth_runs_its_declared_phases(depth: str, phases: list[str]) -> None:
    options = load_options(Overrides(depth=depth))  # production: verification on
    assert graph.planned(options) == phases
    assert graph.runs_at(depth) == phases  # before any other option


def test_a_phase_the_depth_leaves_out_says_so() -> None:
    quick = load_options(Overrides(depth="quick"))
    assert graph.skipped(graph.REFINEMENT, Facts(quick)) == "depth quick"
    assert graph.skipped(graph.VERIFICATION, Facts(quick)) == "depth quick"
    assert graph.skipped(graph.RESEARCH, Facts(quick)) is None
    standard = load_options(Overrides())
    assert standard.depth == "standard"  # the default
    assert graph.skipped(graph.GAPFILL, Facts(standard)) == "depth standard"
    # The depth is asked first, then the phase's own rule.
    assert graph.skipped(graph.REFINEMENT, Facts(standard, survivors=1)) == (
        "fewer than 2 agents have a report to cross")


def test_options_on_top_of_a_depth() -> None:
    """docs/phases.md: --no-verify drops the checks from any depth; --verify adds none to
    quick; an explicit --debate force, a compliance question or a named --dissent seat runs
    its phase at any depth; --debate off and --dissent off still win at deep."""
    def at(depth: str, **more: Any) -> list[str]:
        return graph.planned(load_options(Overrides(depth=depth, **more)))

    assert at("standard", verify=False) == ["research", "refinement", "synthesis"]
    assert at("quick", verify=True) == ["research", "synthesis"]
    assert at("standard", debate="force") == [*CHECKED[:-1], "antagonist", "synthesis"]
    assert at("quick", debate="force") == ["research", "antagonist", "synthesis"]
    assert "antagonist" in at("standard", mode="compliance")
    assert "antagonist" not in at("standard", debate="auto")
    assert at("standard", dissent="codex")[:3] == ["scope", "research", "dissent"]
    assert "dissent" not in at("standard", dissent="auto")
    assert "antagonist" not in at("deep", debate="off")
    assert "dissent" not in at("deep", dissent="off")


def test_the_plan_names_the_depth_and_what_it_leaves_out() -> None:
    quick = graph.plan(load_options(Overrides(depth="quick")))
    assert quick[0] == ("depth quick (--depth quick|standard|deep): claims not checked "
                        "(depth quick runs no check; --depth standard checks them); not "
                        "run: scope, dissent, refinement, claims, gap fill, recheck, "
                        "verification, antagonist")
    assert "research → synthesis by claude" in quick[1]
    standard = graph.plan(load_options(Overrides()))[0]
    assert standard.startswith("depth standard (--depth quick|standard|deep): claims checked "
                               "by agents of other vendors; not run: dissent, gap fill, "
                               "recheck, antagonist")
    assert graph.plan(load_options(Overrides(depth="deep")))[0].endswith("; every phase")
    # --test at standard: the profile, not the depth, leaves the claims unchecked
    assert graph.plan(load_options(Overrides(test=True)))[0].startswith(
        "depth standard (--depth quick|standard|deep): claims not checked (the test profile "
        "turns verification off; --verify turns it on); not run: scope, dissent, claims")
    assert "claims checked by agents of other vendors" in graph.plan(
        load_options(Overrides(test=True, verify=True)))[0]


def test_the_recheck_is_skipped_when_the_gap_fill_published_nothing_new() -> None:
    """With no gap report, the recheck would read exactly what the first judgement read."""
    deep = load_options(Overrides(depth="deep"))
    filled = Facts(deep, judged=True, gaps=2, gap_filled=True)
    assert graph.skip_recheck(replace(filled, gap_reports=0)) == (
        "the gap fill published no report: coverage stands as first judged")
    assert graph.skip_recheck(replace(filled, gap_reports=1)) is None
    assert graph.skip_recheck(filled) is None  # not known yet (the plan): it may run
