"""A run's supervisor started as a process of its own (what `council mcp` does): isolated
from the project folder, and a start that fails is said at once, with its reason."""

from __future__ import annotations

import os
import sys

import psutil
import pytest
from conftest import Council, wait_for

from council.config import Overrides, load_options
from council.errors import CouncilError
from council.run import detach
from council.run.supervisor import start_run
from council.store.progress import SUPERVISOR_LOG
from council.store.state import load_state


def test_the_supervisor_is_this_interpreter_isolated_on_the_package_entry() -> None:
    argv = detach.argv("20261122-031441-88dba5", detach.ENTRY.parent)
    assert argv[:3] == [sys.executable, "-I", str(detach.ENTRY)]
    assert argv[3:5] == ["resume", "20261122-031441-88dba5"]


def test_a_supervisor_runs_the_run_in_a_session_of_its_own(council: Council,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    council.script({"*": {"delay": 0.3}})
    for key, value in council.env.items():
        monkeypatch.setenv(key, value)
    ws = start_run("Tides?", load_options(Overrides(test=True)), council.research)
    launched = detach.launch(ws, council.research, wait=30)
    assert launched.supervised
    assert os.getsid(launched.pid) == launched.pid != os.getsid(0)
    wait_for(lambda: load_state(ws.root).phase == "done")
    assert (ws.root / "final-report.md").is_file()
    assert "resuming council run" in (ws.root / "logs" / SUPERVISOR_LOG).read_text()
    wait_for(lambda: not psutil.pid_exists(launched.pid))  # reaped by its starter


def test_a_supervisor_that_cannot_start_is_an_error_with_its_reason(council: Council) -> None:
    ws = start_run("Tides?", load_options(Overrides(test=True)), council.research)
    (ws.root / "state.yaml").write_text("phase: [unclosed\n")
    with pytest.raises(CouncilError) as caught:
        detach.launch(ws, council.research, wait=30)
    message = str(caught.value)
    assert message.startswith(f"run {ws.id} did not start: council: error: ")
    assert "state.yaml" in message
    assert message.endswith(f"(its supervisor exited 1); `council resume {ws.id}` starts it "
                            "from a terminal")
