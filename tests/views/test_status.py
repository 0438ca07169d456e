"""`council status` and `council list` (council/views/status.py builds the rows and their tables,
cli.py prints them): pure functions of a state and a run folder, and what a user reads."""

from __future__ import annotations

import calendar
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from council import cli, cliparts
from council.runoptions import RunOptions
from council.store import provenance
from council.store.state import AgentPhase, AgentRecord, RunState, create_state
from council.store.workspace import Workspace
from council.views.status import rows

RUN_ID = "20261123-100000-abcdef"
MARKUP = "[bold]x[/] and [link=https://evil.example]click[/link] [red]"


def make_run(base: Path, topic: str = "q", error: str | None = None) -> Workspace:
    """A finished run of three agents on disk: codex waited for a process slot, gemini
    failed with `error`."""
    ws = Workspace(base / RUN_ID)
    ws.root.mkdir(parents=True)
    started = "2026-11-23T10:00:00Z"
    state = RunState(
        id=RUN_ID, topic=topic, created_at=started, options=RunOptions(seats=(), max_parallel=1),
        phase="done", ended_at="2026-11-23T10:05:00Z", agents={
            "claude": AgentRecord(cli="claude", phases={"research": AgentPhase(
                status="complete", iteration=2, max_iterations=2, started_at=started,
                ended_at="2026-11-23T10:01:30Z",
                usage={"tokens_in": 1200, "tokens_out": 300, "cost_usd": 0.25})}),
            "codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                status="queued", max_iterations=2)}),
            "gemini": AgentRecord(cli="gemini", phases={"research": AgentPhase(
                status="failed", iteration=1, max_iterations=2, started_at=started,
                ended_at="2026-11-23T10:00:10Z", error=error)}),
        })
    create_state(ws.root, state)
    provenance.record(ws.root)  # as create_workspace records a run it makes
    point_latest(base, RUN_ID)
    return ws


def point_latest(base: Path, run_id: str) -> None:
    """research/latest as council writes it when it makes the run: a link to the bare id,
    written the moment the run was made (its id is that moment)."""
    made = calendar.timegm(time.strptime(run_id[:15], "%Y%m%d-%H%M%S"))
    (base / "latest").symlink_to(run_id)
    os.utime(base / "latest", (made, made), follow_symlinks=False)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def test_a_running_agent_shows_when_it_last_wrote_anything(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    state = RunState(id="r", topic="q", created_at="2026-11-23T10:00:00Z",
                     options=RunOptions(seats=()),
                     phase="research", agents={
                         "claude": AgentRecord(cli="claude", phases={"research": AgentPhase(
                             status="running", started_at="2026-11-23T10:00:00Z")}),
                         "codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                             status="complete", started_at="2026-11-23T10:00:00Z",
                             ended_at="2026-11-23T10:01:00Z")}),
                     })
    now = 1795428000.0 + 600  # ten minutes after it started
    log, report = ws.log_file("claude", "research"), ws.working_output("claude", "research")
    for path, seconds_ago in ((log, 130), (report, 95)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (now - seconds_ago, now - seconds_ago))
    by_agent = {r.agent: r for r in rows(state, ws, now=now)}
    assert by_agent["claude"].quiet_s == 95  # the newest of its log, stderr and report
    assert by_agent["codex"].quiet_s is None  # only running agents are waited on


def test_list_is_a_table_with_a_header_row(tmp_path: Path) -> None:
    make_run(tmp_path, topic="what   is\nthe best\tsort")
    header, row = invoke("list", "--research-dir", str(tmp_path)).splitlines()
    assert header.split() == ["run", "phase", "started", "duration", "cost", "topic"]
    assert row.split() == [RUN_ID, "done", "2026-11-23T10:00:00Z", "5m00s", "$0.25",
                           "what", "is", "the", "best", "sort"]
    assert row.index("done") == header.index("phase")  # the columns line up
    assert row.index("what is the best sort") == header.index("topic")


def test_list_of_no_runs_says_so(tmp_path: Path) -> None:
    assert invoke("list", "--research-dir", str(tmp_path / "none")) == "no council runs yet\n"


def test_status_is_a_header_block_then_one_row_per_agent(tmp_path: Path) -> None:
    make_run(tmp_path, error="quota exceeded: try again tomorrow")
    lines = invoke("status", "--research-dir", str(tmp_path)).splitlines()
    facts = {line.split()[0]: line.split(None, 1)[1] for line in lines[:6] if line}
    assert facts["run"] == RUN_ID
    assert facts["phase"] == "done"
    assert facts["plan"] == "research → synthesis"
    header = next(line for line in lines if line.startswith("agent"))
    assert header.split() == ["agent", "cli", "phase", "status", "iter", "elapsed", "report",
                              "tokens", "cost", "last", "output", "event", "/", "error"]
    by_agent = {line.split()[0]: line for line in lines[lines.index(header) + 1:] if line}
    assert by_agent["claude"].split()[:9] == ["claude", "claude", "done", "complete",
                                              "2/2", "1m30s", "-", "1.5k", "$0.25"]
    assert by_agent["codex"].split()[:5] == ["codex", "codex", "research", "queued", "0/2"]
    assert by_agent["codex"].index("queued") == header.index("status")
    assert by_agent["gemini"].endswith("  quota exceeded: try again tomorrow")
    assert "queued: waiting for a free process slot (--max-parallel 1)" in lines


@pytest.mark.parametrize("command", ["list", "status"])
def test_markup_in_a_topic_or_an_error_prints_literally(tmp_path: Path, command: str) -> None:
    make_run(tmp_path, topic=MARKUP, error=MARKUP)
    out = invoke(command, "--research-dir", str(tmp_path))
    assert MARKUP in out  # as typed: not bold, no hyperlink, no lost brackets
    assert "\x1b[" not in out
    if command == "status":
        gemini = next(line for line in out.splitlines() if line.startswith("gemini"))
        assert gemini.endswith(MARKUP)


def test_piped_output_has_no_escape_codes_nor_wrapped_or_padded_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would colour even a pipe
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal size must not wrap piped text
    error = "the agent stopped " + "because of a very long and wordy reason " * 3
    make_run(tmp_path, topic="a topic long enough to be wrapped on a narrow terminal",
             error=error)
    for command in ("list", "status"):
        out = invoke(command, "--research-dir", str(tmp_path))
        assert "\x1b[" not in out
        assert all(line == line.rstrip() for line in out.splitlines())
    assert "a topic long enough to be wrapped on a narrow terminal" in invoke(
        "list", "--research-dir", str(tmp_path))
    gemini = next(line for line in invoke("status", "--research-dir", str(tmp_path))
                  .splitlines() if line.startswith("gemini"))
    assert gemini.endswith(" ".join(error.split()))


def test_on_a_terminal_the_header_is_styled_and_markup_still_literal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cliparts, "on_terminal", lambda: True)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "300")
    make_run(tmp_path, topic=MARKUP, error=MARKUP)
    for command in ("list", "status"):
        out = invoke(command, "--research-dir", str(tmp_path))
        assert "\x1b[1;4m" in out  # the header row: bold, underlined
        assert MARKUP in out
        assert "\x1b]8;" not in out  # no hyperlink escape


def test_status_shows_this_machines_latest_run_not_a_shipped_one(tmp_path: Path) -> None:
    make_run(tmp_path, topic="our own topic")
    shipped = Workspace(tmp_path / "29991231-235959-ffffff")  # from a cloned repository
    shipped.root.mkdir()
    create_state(shipped.root, RunState(id=shipped.id, topic="a shipped topic",
                                        created_at="2999-12-31T23:59:59Z",
                                        options=RunOptions(seats=())))
    shown = invoke("status", "--research-dir", str(tmp_path))
    assert "our own topic" in shown
    assert "shipped" not in shown


def test_a_shipped_latest_with_a_restored_mtime_is_not_the_latest(tmp_path: Path) -> None:
    """A tarball restores research/latest's mtime to the moment its id names: only the
    record of the runs council made tells it from this machine's own."""
    shipped = Workspace(tmp_path / RUN_ID)
    shipped.root.mkdir()
    create_state(shipped.root, RunState(id=shipped.id, topic="a shipped topic",
                                        created_at="2026-11-23T10:00:00Z",
                                        options=RunOptions(seats=())))
    point_latest(tmp_path, RUN_ID)
    result = CliRunner().invoke(cli.main, ["status", "--research-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "names no run this machine made" in result.output
    named = invoke("status", RUN_ID, "--research-dir", str(tmp_path))  # read, and said so
    assert "a shipped topic" in named
    assert "not made by council on this machine" in named


def test_a_planted_state_with_odd_times_is_listed_not_a_crash(tmp_path: Path) -> None:
    """A state.yaml from a tarball says what it likes in its times: list and status show
    the run, with no duration, rather than an internal error."""
    shipped = Workspace(tmp_path / RUN_ID)
    shipped.root.mkdir()
    create_state(shipped.root, RunState(id=shipped.id, topic="odd", created_at="yesterday",
                                        options=RunOptions(seats=()),
                                        ended_at="2026-13-45T99:00:00Z"))
    listed = invoke("list", "--research-dir", str(tmp_path))
    assert "odd" in listed
    assert "not made by council on this machine" in listed
    assert "odd" in invoke("status", RUN_ID, "--research-dir", str(tmp_path))


def test_a_running_run_shows_its_share_done_and_time_left(tmp_path: Path) -> None:
    """status, watch and `council run`'s live view say how far a run under way is; an
    interrupted one (no supervisor) says how to resume instead, and an ended one neither."""
    from rich.console import Console

    from council.config import Overrides, load_options
    from council.store.runlock import RunLock
    from council.views.status import overview, progress
    from council.views.watch import table

    ws = Workspace(tmp_path / RUN_ID)
    ws.root.mkdir()
    created = calendar.timegm(time.strptime("2026-11-23T10:00:00Z", "%Y-%m-%dT%H:%M:%SZ"))
    research = AgentPhase(status="complete", iteration=2, max_iterations=2)
    state = RunState(id=RUN_ID, topic="q", created_at="2026-11-23T10:00:00Z",
                     options=load_options(Overrides(test=True)), phase="refinement",
                     steps={"research": "done"},
                     agents={s: AgentRecord(cli=s, phases={"research": research})
                             for s in ("claude", "codex", "gemini")})
    create_state(ws.root, state)
    # A third of the planned 24 minutes done in 10: the plan says 16 more, the pace 20; the
    # pace weighs the share of the planned time gone (10 of 24).
    going = progress(state, now=created + 600)
    assert going is not None
    assert str(going) == "33% done, ~18 min left"

    def shown(renderable: object) -> str:
        console = Console(record=True, width=200)
        console.print(renderable)
        return console.export_text()

    with RunLock(ws.root):  # as its supervisor holds it
        facts = dict(overview(state, ws, now=created + 600).facts)
        assert facts["progress"] == "33% done, ~18 min left (rough)"
        watched = shown(table(state, ws))
        assert "overall" in watched
        assert "33% done, " in watched
    assert "progress" not in dict(overview(state, ws).facts)  # interrupted: no supervisor
    assert "overall" not in shown(table(state, ws))
    assert "% done, " in shown(table(state, ws, own=True))  # council run's own view
    # An 80-column terminal keeps the columns a glance needs, readable, and drops the rest.
    narrow = shown(table(state, ws, own=True, width=80)).splitlines()
    header = next(line for line in narrow if "agent" in line).split("┃")
    assert [cell.strip() for cell in header if cell.strip()] == [
        "agent", "phase", "status", "iter", "tokens", "cost", "last event"]
    state.phase = "done"
    assert progress(state) is None
