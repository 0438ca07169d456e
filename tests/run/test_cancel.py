"""Stopping a run: every agent's whole process tree goes, the state says cancelled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import Council, wait_for, write_trusted_config


def agent_pids(council: Council, run_root: Path) -> list[int]:
    pids = [e["pid"] for e in council.fake_log() if e["event"] == "start"]
    for pidfile in run_root.glob("agents/*/grandchild.pid"):
        pids.append(int(pidfile.read_text()))
    return pids


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_every_agent_tree(council: Council, sig: signal.Signals,
                                       code: int) -> None:
    # Each agent hangs, ignores SIGTERM and has a grandchild: the worst case.
    council.script({"*": {"hang": True, "ignore_sigterm": True, "spawn_grandchild": True}})
    write_trusted_config(council.root, "grace_period: 1\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "council", "run", "--test", "q"],
        env=council.env, cwd=council.root,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for(lambda: any(council.research.glob("*/state.yaml")))
        run = council.only_run()
        wait_for(lambda: len(list(run.glob("agents/*/grandchild.pid"))) == 3)
        pids = agent_pids(council, run)
        assert len(pids) >= 6
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # reaped and its pipes closed, whatever failed above
    assert proc.returncode == code, err
    survivors = [p for p in pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert survivors == []
    state = yaml.safe_load((run / "state.yaml").read_text())
    assert state["phase"] == "cancelled"
    assert {rec["phases"]["research"]["status"] for rec in state["agents"].values()} == {
        "cancelled"}
    log = (run / "progress.log").read_text()
    assert f"cancelled by {sig.name}; stopped claude, codex, gemini" in log
    # Piped, as on a terminal: the last line says how to go on with the run.
    assert err.splitlines()[-1] == (f"council: cancelled by {sig.name}; stopped claude, codex, "
                                    f"gemini; continue it with: council resume {run.name}")


def test_a_resume_stops_every_phase_a_seat_left_running(tmp_path: Path) -> None:
    """A seat researching and dissenting at once leaves two process sessions when its
    supervisor dies; both go before a resume touches the run."""
    from council.run.cancel import stop_orphans
    from council.runoptions import RunOptions
    from council.store.state import AgentPhase, AgentRecord, RunState
    from council.store.workspace import Workspace

    procs = [psutil.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                          start_new_session=True) for _ in range(2)]
    try:
        phases = {phase: AgentPhase(status="running", pid=p.pid, pid_started=p.create_time())
                  for phase, p in zip(("research", "dissent"), procs, strict=True)}
        state = RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z",
                         options=RunOptions(seats=()),
                         agents={"codex": AgentRecord(cli="codex", phases=phases)})
        assert stop_orphans(Workspace(tmp_path), state, grace=5) == ["codex"]
        psutil.wait_procs(procs, timeout=10)
        assert [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_cancel_without_an_id_names_the_active_runs_when_there_are_several() -> None:
    from council.errors import UsageError
    from council.run.cancel import choose

    assert choose([]) is None
    assert choose(["20260101-000000-aaaaaa"]) == "20260101-000000-aaaaaa"
    with pytest.raises(UsageError, match=r"2 runs are active \(20260101-000000-aaaaaa, "
                                         r"20260102-000000-bbbbbb\): name the one") as caught:
        choose(["20260101-000000-aaaaaa", "20260102-000000-bbbbbb"])
    assert caught.value.exit_code == 2
    assert "\n" not in str(caught.value)


def make_run(base: Path, run_id: str) -> Path:
    root = base / run_id
    root.mkdir(parents=True)
    (root / "state.yaml").write_text(f"id: {run_id}\n")
    return root


def test_cancel_picks_the_one_active_run_not_the_latest_looking_one(tmp_path: Path) -> None:
    from council.errors import UsageError
    from council.run.cancel import pick
    from council.store import provenance
    from council.store.runlock import RunLock
    from council.store.workspace import Workspace

    base = tmp_path / "research"
    first = make_run(base, "20260101-000000-aaaaaa")
    second = make_run(base, "20260102-000000-bbbbbb")
    provenance.record(first)
    provenance.record(second)
    make_run(base, "29991231-235959-ffffff")  # shipped in a cloned repository: no supervisor
    with RunLock(first):
        assert pick(None, base) == Workspace(first)
        with RunLock(second), pytest.raises(UsageError, match="2 runs are active"):
            pick(None, base)
        assert pick("20260102-000000-bbbbbb", base) == Workspace(second)


def test_no_orphan_sweep_for_agents_started_before_the_last_boot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from council import spawn
    from council.run.cancel import since_boot, stop_orphans
    from council.runoptions import RunOptions
    from council.store.state import AgentPhase, AgentRecord, RunState
    from council.store.workspace import Workspace

    assert since_boot([("a", 1, 100.0), ("b", 2, 300.0), ("c", 3, 900.0)], boot=200.0,
                      now=500.0) == ([("b", 2, 300.0)], [("a", 1, 100.0), ("c", 3, 900.0)])
    swept: list[list[tuple[int, float]]] = []

    def sweep(agents: list[tuple[int, float]], grace: float) -> list[int]:
        swept.append(agents)
        return [pid for pid, _ in agents]

    monkeypatch.setattr(spawn, "stop_orphans", sweep)
    monkeypatch.setattr("psutil.boot_time", lambda: 1_000_000.0)
    # The pids are this test's own: a sweep that were not skipped would be told to stop them.
    phases = {"research": AgentPhase(status="running", pid=os.getpid(), pid_started=999_000.0),
              "dissent": AgentPhase(status="running", pid=os.getppid(),
                                    pid_started=1_000_500.0)}
    state = RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z",
                     options=RunOptions(seats=()),
                     agents={"codex": AgentRecord(cli="codex", phases=phases)})
    assert stop_orphans(Workspace(tmp_path), state, grace=1) == ["codex"]
    assert swept == [[(os.getppid(), 1_000_500.0)]]
    log = (tmp_path / "progress.log").read_text()
    assert f"no orphan sweep for codex (pid {os.getpid()}): their recorded start is before" in log
