"""Budgets, watch, list and doctor, end to end with the fake CLIs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import yaml
from conftest import Council, wait_for


def state_of(run: Path) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def test_a_budget_stops_the_loops_and_goes_on_to_synthesis(council: Council) -> None:
    council.script({"*": {"never_finish": True}})
    proc = council.run("run", "--test", "--max-iterations", "6", "--max-tokens", "500", "q")
    assert proc.returncode == 0, proc.stderr
    assert "--max-cost none to lift), budget 500 tokens" in proc.stdout  # the plan came first
    run = council.only_run()
    st = state_of(run)
    assert "reached the budget of 500" in st["budget_exhausted"]
    research = {n: a["phases"]["research"] for n, a in st["agents"].items()}
    assert all(r["iteration"] < 6 for r in research.values())
    assert "refinement" not in st["agents"]["codex"]["phases"]
    assert st["phase"] == "done"
    assert "cut short by the budget" in (run / "final-report.md").read_text()
    prompt = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "budget cut the research short" in prompt
    assert "budget reached" in (run / "progress.log").read_text()


def test_a_budget_reached_in_the_first_turns_stops_every_loop_and_leaves_one_turn(
        council: Council) -> None:
    """Issue 25: the budget runs out while the research and the dissent are in their first
    turns. No loop of any phase (the dissent included) begins a turn after progress.log says
    the budget was reached, and the synthesis that follows gets one turn, not its cap."""
    council.script({"*": {"never_finish": True},
                    "codex:dissent": {"never_finish": True, "delay": 1.5}})
    proc = council.run("run", "--test", "--dissent", "codex", "--max-iterations", "6",
                       "--max-tokens", "500", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    lines = (run / "progress.log").read_text().splitlines()
    reached = next(i for i, line in enumerate(lines) if " run budget reached: " in line)
    dissent = [i for i, line in enumerate(lines) if " dissent codex " in line]
    assert dissent[0] < reached < dissent[-1]  # the dissenter was in its first turn
    # A loop going on says `iteration N/M` (loop.end_turn); none does after the budget.
    assert not [line for line in lines[reached:] if re.search(r" iteration \d+/\d+$", line)]
    st = state_of(run)
    assert st["agents"]["codex"]["phases"]["dissent"]["iteration"] == 1
    synthesis = st["agents"]["claude"]["phases"]["synthesis"]
    assert (synthesis["iteration"], synthesis["max_iterations"]) == (1, 1)
    assert any(line.endswith("synthesis claude the run's budget is reached: one turn")
               for line in lines[reached:])
    assert st["steps"]["refinement"].startswith("skipped: ")
    assert st["phase"] == "done"


def test_a_seat_that_starts_after_the_budget_gets_one_turn() -> None:
    from council.graph import SYNTHESIS
    from council.phases import within_budget
    from council.runoptions import Seat
    from council.seat.runner import SeatTask
    from council.store.state import AgentPhase

    task = SeatTask(Seat("claude", "claude", max_iterations=3), SYNTHESIS, "Write.", 3)
    assert within_budget(task, None) is task
    cut = within_budget(task, "500 tokens reached the budget of 500")
    assert (cut.max_iterations, cut.seat.max_iterations) == (1, 1)
    # An interrupted seat gets the turn it was in; a one-turn task is left as it is.
    resumed = replace(task, previous=AgentPhase(status="running", iteration=2))
    assert within_budget(resumed, "spent").max_iterations == 2
    one = replace(task, max_iterations=1)
    assert within_budget(one, "spent") is one


def test_usage_lands_in_state_status_and_list(council: Council) -> None:
    council.script({"*": {"finish_after": 2}})
    assert council.run("run", "--test", "q").returncode == 0
    run = council.only_run()
    usage = state_of(run)["agents"]["codex"]["phases"]["research"]["usage"]
    assert usage["tokens_in"] > 0
    assert usage["estimated"] is True
    assert [row[0] for row in usage["per_iteration"]] == [1, 2]
    # Each codex turn is one process: its tokens are booked to it, not to its neighbour.
    assert all(row[1] > 0 for row in usage["per_iteration"])
    assert sum(row[1] for row in usage["per_iteration"]) == usage["tokens_in"]
    claude = state_of(run)["agents"]["claude"]["phases"]["research"]["usage"]
    assert claude["estimated"] is False  # claude prices its own runs
    assert claude["cost_usd"] > 0
    status = council.run("status").stdout
    assert "spent" in status
    assert "tokens" in status
    header, row = council.run("list").stdout.splitlines()
    assert header.split() == ["run", "phase", "started", "duration", "cost", "topic"]
    assert row.startswith(f"{run.name}  done")
    assert row.index("done") == header.index("phase")  # the columns line up


def test_watch_without_a_terminal_prints_lines_until_the_end(council: Council) -> None:
    council.script({"*": {"finish_after": 2, "delay": 0.3}})
    run = subprocess.Popen([sys.executable, "-m", "council", "run", "--test", "q"],
                           env=council.env, cwd=council.root, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(council.research.glob("*/state.yaml")))
        watch = council.run("watch", timeout=120)
    finally:
        run.wait(120)
    assert watch.returncode == 0, watch.stderr
    lines = watch.stdout.splitlines()
    assert any(" research codex iteration 2/2" in line for line in lines)
    assert lines[-1] == f"final report: {council.only_run() / 'final-report.md'}"


def doctor(council: Council, **env: str) -> tuple[int, dict[str, list[str]], list[str]]:
    """`council doctor`'s exit code, its table by CLI (cells split on runs of spaces), and
    the lines after the table."""
    proc = subprocess.run([sys.executable, "-m", "council", "doctor"],
                          env={**council.env, **env}, capture_output=True, text=True,
                          timeout=60)
    lines = proc.stdout.splitlines()
    header, rows, rest = lines[0], lines[1:4], lines[4:]
    assert header.split() == ["cli", "found", "version", "tested", "credentials"]
    return proc.returncode, {r.split()[0]: r.split() for r in rows}, rest


def test_doctor(council: Council, tmp_path: Path) -> None:
    installed = Path(sys.executable).parent  # where pip put the `council` script
    code, rows, rest = doctor(council, PATH=f"{installed}{os.pathsep}{council.env['PATH']}",
                              GITHUB_TOKEN="ghp-planted")
    assert code == 0
    # Which variables each agent gets: names, never values, and no other secret.
    at = rest.index("agents see (variable names; everything else in this shell stays out):")
    seen = rest[at + 1:at + 4]  # then the source policy and the search paths
    assert [line.split(":")[0].strip() for line in seen] == ["claude", "codex", "gemini"]
    assert "ANTHROPIC_API_KEY" in seen[0]
    assert "ANTHROPIC_API_KEY" not in seen[2]
    assert not [line for line in rest if "GITHUB_TOKEN" in line or "planted" in line]
    assert rows["claude"][2:] == ["2.1.197", "yes", "ANTHROPIC_API_KEY"]
    assert rest[:2] == ["", "host    council command"]
    # what is on disk (a fresh HOME: no plugin), and the fix that installs it (issue 33)
    assert rest[2].split(None, 1) == ["claude", "plugin not installed"]
    assert any(line.startswith("claude: run `council setup claude`") for line in rest)

    odd = tmp_path / "odd-bin"
    odd.mkdir()
    fake = odd / "claude"
    fake.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    fake.chmod(0o755)
    code, rows, rest = doctor(council, PATH=f"{odd}{os.pathsep}/usr/bin:/bin",
                              ANTHROPIC_API_KEY="sk-test")
    assert code == 0
    assert rows["claude"][2:] == ["9.9.9", "no", "(2.1.332)", "ANTHROPIC_API_KEY"]
    assert rows["codex"][1] == "no"
    assert "codex is not installed: npm install -g @openai/codex@0.171.0 (Node 16 or newer)" \
        in rest
    # No plugin in this HOME: that is said first (a plugin whose hooks cannot find council is
    # tests/readiness/test_setup.py's).
    assert "claude  plugin not installed" in rest
    assert all("sk-test" not in line for line in rest)  # a secret is named, never shown

    code, rows, rest = doctor(council, PATH="/nonexistent")
    assert code == 1

    # Installed but logged in nowhere: doctor says so, and fails.
    bare = {k: "" for k in council.env if k.endswith("_API_KEY")}
    code, rows, rest = doctor(council, **bare)
    assert code == 1
    assert rows["claude"][2:] == ["2.1.197", "yes", "none"]
    assert "claude has no credentials: log in with `claude` then /login, or set " \
           "ANTHROPIC_API_KEY" in rest


def test_confirm_declined_spends_nothing(council: Council) -> None:
    proc = council.run("run", "--test", "--confirm", "q", input=b"n\n")
    assert proc.returncode == 0
    assert "Start the council?" in proc.stdout
    assert proc.stdout.splitlines()[-1].endswith("not started")
    assert "error" not in proc.stderr
    assert not council.research.exists() or not list(council.research.iterdir())
    assert not council.fake_log()


def test_the_live_table_shows_every_agent(council: Council) -> None:
    from rich.console import Console

    from council.store.state import load_state
    from council.store.workspace import Workspace
    from council.views.watch import table

    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "q").returncode == 0
    ws = Workspace(council.only_run())
    console = Console(record=True, width=160)
    console.print(table(load_state(ws.root), ws))
    text = console.export_text()
    for needle in ("claude", "codex", "gemini", "refinement", "synthesis", "3/3", "1/1",
                   "completeness not scored (cross-verification, gap coverage, question "
                   "closure not measured: the test profile turns verification off; --verify "
                   "turns it on)"):
        assert needle in text
    # A --test run has no scope, claim checks or antagonist: no bars for them.
    bars = [line.split()[0] for line in text.splitlines() if line.rstrip().endswith(("/3", "/1"))
            and not line.startswith(("┃", "│", "|"))]
    assert bars == ["research", "refinement", "synthesis"], text


def test_doctor_warns_when_codex_config_forces_the_older_sandbox(council: Council,
                                                                 tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('sandbox_mode = "workspace-write"\n')
    _, _, rest = doctor(council, CODEX_HOME=str(home))
    assert any(line.startswith("codex: your config.toml sets sandbox_mode") for line in rest)
    (home / "config.toml").write_text('model = "gpt-5.5"\n')
    _, _, rest = doctor(council, CODEX_HOME=str(home))
    assert not any("sandbox_mode" in line for line in rest)


def test_watch_and_status_read_a_planted_log_bounded(tmp_path: Path) -> None:
    """A progress.log that is a link to /dev/zero, or a huge file, is never read whole."""
    from council.store.workspace import Workspace
    from council.views.status import last_events
    from council.views.watch import FOLLOW_CHUNK, new_lines

    ws = Workspace(tmp_path)
    (tmp_path / "progress.log").symlink_to("/dev/zero")
    assert last_events(ws) == {}
    assert new_lines(tmp_path / "progress.log", 0) == ([], 0, 0)
    (tmp_path / "progress.log").unlink()
    line = b"2026-11-21T14:31:00.123Z research codex iteration 2/10\n"
    with open(tmp_path / "progress.log", "wb") as log:
        log.write(line * (3 * FOLLOW_CHUNK // len(line)))
        log.write(b"2026-11-21T14:32:00.000Z research claude done\n2026-11-21T14:32")
    lines, end, skipped = new_lines(tmp_path / "progress.log", 0)
    size = (tmp_path / "progress.log").stat().st_size
    assert len(lines) <= FOLLOW_CHUNK // len(line) + 1
    assert skipped > 2 * FOLLOW_CHUNK
    assert lines[-1] == "2026-11-21T14:32:00.000Z research claude done"
    assert end == size - len(b"2026-11-21T14:32")  # the line being written waits
    assert last_events(ws) == {"codex": "iteration 2/10", "claude": "done"}
    with open(tmp_path / "progress.log", "ab") as log:
        log.write(b":01.000Z run done\n")
    assert new_lines(tmp_path / "progress.log", end) == (
        ["2026-11-21T14:32:01.000Z run done"], end + len(b"2026-11-21T14:32:01.000Z run done\n"),
        0)
