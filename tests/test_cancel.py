"""Stopping a run: every agent's whole process tree goes, the state says cancelled."""

from __future__ import annotations

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


def test_a_resume_stops_every_phase_a_seat_left_running(tmp_path: Path) -> None:
    """A seat researching and dissenting at once leaves two process sessions when its
    supervisor dies; both go before a resume touches the run."""
    from council.cancel import stop_orphans
    from council.state import AgentPhase, AgentRecord, RunState
    from council.workspace import Workspace

    procs = [psutil.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                          start_new_session=True) for _ in range(2)]
    try:
        phases = {phase: AgentPhase(status="running", pid=p.pid, pid_started=p.create_time())
                  for phase, p in zip(("research", "dissent"), procs, strict=True)}
        state = RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z", options={},
                         agents={"codex": AgentRecord(cli="codex", phases=phases)})
        assert stop_orphans(Workspace(tmp_path), state, grace=5) == ["codex"]
        psutil.wait_procs(procs, timeout=10)
        assert [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
