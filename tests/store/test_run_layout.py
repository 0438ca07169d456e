"""A run folder's top level holds what a person reads; the agents' JSON drafts and the lock
files are in its `work/` folder (paths.run_work). A run made before `work/` existed keeps its
files where they are, and still reads, resumes and locks as it did."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from conftest import Council
from test_supervision import alive, stuck_after_first_turn

from council import graph
from council.paths import RUN_WORK, run_work
from council.store.runlock import live_supervisor
from council.store.workspace import Workspace

WORKING = {"supervisor.lock", ".state.lock"}


def test_the_work_folder_is_used_only_when_it_is_a_real_folder(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run")
    ws.root.mkdir()
    assert run_work(ws.root) == ws.root  # a run made before work/: its files stay on top
    assert ws.published_output("claude", graph.SCOPE.name) == ws.root / "scope-draft.json"
    (ws.root / RUN_WORK).symlink_to(tmp_path)
    assert run_work(ws.root) == ws.root  # a link named work is never followed
    (ws.root / RUN_WORK).unlink()
    (ws.root / RUN_WORK).mkdir()
    assert run_work(ws.root) == ws.root / RUN_WORK
    assert ws.published_output("claude", graph.SCOPE.name) == ws.work / "scope-draft.json"
    assert ws.published_output("codex", graph.VERIFICATION.name) == \
        ws.work / "codex-verdicts.json"
    assert ws.published_output("codex", graph.RESEARCH.name) == ws.root / "codex-report.md"
    assert [p.name for p in graph.GRAPH if p.draft] == ["scope", "claims", "recheck",
                                                        "verification"]


def test_a_new_run_keeps_its_locks_in_work_and_one_supervisor_holds_it(
        council: Council) -> None:
    proc, run = stuck_after_first_turn(council)
    try:
        assert {p.name for p in (run / RUN_WORK).iterdir()} >= WORKING
        assert not WORKING & {p.name for p in run.iterdir()}
        holder = live_supervisor(run)
        assert holder is not None
        assert holder.pid == proc.pid
        second = council.run("resume", run.name)
        assert second.returncode == 1
        assert f"already being supervised (pid {proc.pid})" in second.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert live_supervisor(run) is None


def test_a_run_made_before_work_resumes_with_its_files_on_top(council: Council) -> None:
    proc, run = stuck_after_first_turn(council)
    proc.kill()  # kill -9, then the folder as an older council left it: no work/
    proc.wait(10)
    agents = [e["pid"] for e in council.fake_log() if e["event"] == "start"]
    for path in (run / RUN_WORK).iterdir():
        os.replace(path, run / path.name)
    shutil.rmtree(run / RUN_WORK)
    assert "interrupted in research" in council.run("status", run.name).stdout

    council.script({"*": {"finish_after": 2}})
    resumed = council.run("resume", run.name)
    assert resumed.returncode == 0, resumed.stderr
    assert alive(agents) == []  # the old supervisor's orphans were found and stopped
    assert not (run / RUN_WORK).exists()  # its layout is kept, not mixed
    assert {p.name for p in run.iterdir()} >= WORKING
    assert "run done" in (run / "progress.log").read_text()
    listed = council.run("list")
    assert run.name in listed.stdout
    assert "done" in listed.stdout

