"""The phase graph with the real CLIs, offline: parallel branches overlap in time, a
process limit holds, and a resume in any phase re-runs no finished one. Which phase a
model request belongs to comes from the report file its prompt names (the server logs it)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import wait_for

from council.graph import GRAPH, NAMES
from council.store.workspace import Workspace

from .helpers import end, kill_supervisor, resume_killed
from .server import ScriptedServer
from .test_council import council, state, the_run

pytestmark = pytest.mark.realcli

SEATS = ("claude", "codex", "gemini")


def phase_of(report_path: str | None) -> str | None:
    """The phase whose output file a request's prompt names (from the workspace's names)."""
    if not report_path:
        return None
    name = Path(report_path).name
    ws = Workspace(Path("."))
    for phase in NAMES:
        if any(ws.output_name(seat, phase) == name for seat in SEATS):
            return phase
    return None


Span = tuple[float, float]


def spans(server: ScriptedServer, since: float = 0.0) -> dict[str, dict[str, Span]]:
    """phase -> report file -> (first request, end of the last), for requests after `since`."""
    out: dict[str, dict[str, Span]] = {}
    for record in server.records():
        phase = phase_of(record.get("report_path"))
        if phase is None or record["time"] < since:
            continue
        begin, end = record["time"], record["time"] + record.get("ms", 0) / 1000
        files = out.setdefault(phase, {})
        old = files.get(record["report_path"], (begin, end))
        files[record["report_path"]] = (min(old[0], begin), max(old[1], end))
    return out


def whole(files: dict[str, Span]) -> Span:
    return min(s[0] for s in files.values()), max(s[1] for s in files.values())


def overlap(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def start(env: dict[str, str], tmp_path: Path, *args: str) -> psutil.Popen:
    return psutil.Popen(
        [sys.executable, "-m", "council", *args],
        env={**env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )


def running_in(tmp_path: Path, phase: str) -> bool:
    try:
        st = state(the_run(tmp_path))
    except (OSError, ValueError, TypeError, yaml.YAMLError):
        return False
    return any((agent["phases"].get(phase) or {}).get("status") == "running"
               for agent in st["agents"].values())


def test_parallel_branches_overlap_in_time(cli_env: dict[str, str], server: ScriptedServer,
                                          tmp_path: Path) -> None:
    # Every answer takes a moment, so a sequential run could not overlap by accident.
    server.script = {api: {"delay": 0.3} for api in ("anthropic", "openai", "gemini")}
    proc = council(cli_env, tmp_path, "--depth", "deep", "--verify", "--debate", "auto", "q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = spans(server)
    assert {"research", "dissent", "verification", "antagonist"} <= set(seen), seen.keys()
    assert overlap(whole(seen["dissent"]), whole(seen["research"]))
    assert overlap(whole(seen["antagonist"]), whole(seen["verification"]))
    # and a phase that depends on them starts only after both have ended
    assert whole(seen["refinement"])[0] >= max(whole(seen["research"])[1],
                                               whole(seen["dissent"])[1])
    assert whole(seen["synthesis"])[0] >= max(whole(seen["verification"])[1],
                                              whole(seen["antagonist"])[1])


def test_max_parallel_one_runs_one_agent_at_a_time(cli_env: dict[str, str],
                                                   server: ScriptedServer,
                                                   tmp_path: Path) -> None:
    server.script = {api: {"delay": 0.2} for api in ("anthropic", "openai", "gemini")}
    proc = council(cli_env, tmp_path, "--max-parallel", "1", "q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = [span for phase in spans(server).values() for span in phase.values()]
    assert len(files) >= 7  # 3 research, 3 refinement, 1 synthesis
    for a, b in itertools.combinations(files, 2):
        assert not overlap(a, b), (a, b)
    log = (the_run(tmp_path) / "progress.log").read_text()
    assert "queued: all 1 process slots (--max-parallel) are in use" in log


def test_a_run_killed_in_the_parallel_branches_redoes_neither_finished_one(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """codex researches and dissents quickly; claude's research is slow. The supervisor is
    killed once the dissent and codex's research have ended, with claude still at work."""
    server.script = {"anthropic": {"delay": 2.0}}
    proc = start(cli_env, tmp_path, "run", "--test", "--agents", "claude,codex",
                 "--dissent", "codex", "q")
    tree: list[psutil.Process] = []
    try:
        def branches_half_done() -> bool:
            try:
                st = state(the_run(tmp_path))
            except (OSError, ValueError, TypeError, yaml.YAMLError):
                return False
            research = st["agents"]["codex"]["phases"].get("research", {})
            return (st.get("steps") or {}).get("dissent") == "done" and \
                research.get("status") == "complete"

        wait_for(branches_half_done, timeout=120)
        assert state(the_run(tmp_path))["agents"]["claude"]["phases"]["research"][
            "status"] == "running"
        tree = kill_supervisor(proc)
        killed_at = time.time()
        run = the_run(tmp_path)
        resumed = resume_killed(run, cli_env)
    finally:
        end([proc, *tree])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = spans(server, since=killed_at)
    assert "dissent" not in after
    assert not any(path.endswith("codex-report.md") for path in after.get("research", {}))
    assert any(path.endswith("claude-report.md") for path in after["research"])
    st = state(run)
    assert st["phase"] == "done"
    log = (run / "progress.log").read_text()
    assert log.count(" dissent codex started ") == 1


# ---------------------------------------------------------------- a resume in every phase
FULL = ("--depth", "deep", "--verify", "--debate", "auto")  # every phase of the graph runs


@pytest.mark.parametrize("phase", [p.name for p in GRAPH])
def test_a_resume_in_each_phase_reruns_no_finished_phase(
        phase: str, cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """The supervisor is killed (SIGKILL) as soon as a seat is at work in `phase`; the resume
    asks the models for that phase again, and for no phase that had ended."""
    proc = start(cli_env, tmp_path, "run", "--test", *FULL, "q")
    tree: list[psutil.Process] = []
    try:
        wait_for(lambda: running_in(tmp_path, phase), timeout=180)
        tree = kill_supervisor(proc)
        run = the_run(tmp_path)
        ended = set(state(run).get("steps") or {})
        assert phase not in ended
        resumed_at = time.time()
        resumed = resume_killed(run, cli_env)
    finally:
        end([proc, *tree])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    asked = set(spans(server, since=resumed_at))
    assert phase in asked
    assert asked.isdisjoint(ended), asked & ended
    after = state(run)
    assert after["phase"] == "done"
    assert all(after["steps"].get(p) == "done" for p in NAMES), after["steps"]
