"""Who reads state.yaml: during a run, nobody but its owner's mirror. The run's own code
(the phases, the engine, the supervisor, the runner, the budget, the report and the page it
builds) is handed the owner (phases.RunContext.owner) and reads from it; only commands that
read or change a run they do not own read the file (state.load_state, update_state, or a
StateFile). Read from the source, every call, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "council"
FILE_ACCESS = {"load_state", "readable", "update_state", "StateFile"}

# The modules that may read a run's file, and why: each reads a run it does not own.
READERS = {
    "commands/status.py": "council status and research_status: any run, running or not",
    "commands/runs.py": "council list and list_research: every run in the folder",
    "commands/report.py": "council report and open, get_report: any run's page and report",
    "commands/cancel.py": "council cancel and cancel_research: a run another process holds",
    "commands/resume.py": "council resume: a run no supervisor holds, before taking it",
    "commands/start.py": "start_research: the run a request started detached, or its twin",
    "views/watch.py": "council watch: follows a run another process supervises; council "
                      "run's live view reads its own run's file too, from rich's refresh "
                      "thread, never the supervisor's memory",
    "run/cancel.py": "council cancel: a run whose supervisor it signals, or has none",
    "hosts/flow.py": "the hosts' flow: a run its hook started in an earlier turn",
    "hosts/handover.py": "the host's hand-back, in the hook's process once the supervisor ended",
    "run/detach.py": "a detached run's launcher waits for the run it handed to its supervisor",
    "run/recovery.py": "council adopt: shows what a run no supervisor holds would start",
    "evaluation/results.py": "council eval: a run it started as a subprocess, once it ended",
    "run/ask.py": "council ask: a finished run, read under its lock before one seat answers",
    "run/prepare.py": "council run --since: the earlier, finished run a new one builds on",
}


def file_readers() -> dict[str, set[str]]:
    """module (relative path) → the file-access names it calls."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "store" / "state.py":
            continue  # where they are defined
        calls = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else \
                    func.attr if isinstance(func, ast.Attribute) else None
                if name in FILE_ACCESS:
                    calls.add(name)
        if calls:
            found[str(path.relative_to(PACKAGE))] = calls
    return found


def test_only_commands_that_do_not_own_a_run_read_its_file() -> None:
    inside = {module: sorted(calls) for module, calls in file_readers().items()
              if module not in READERS}
    assert inside == {}, ("the run's own code reads the state from its owner "
                          f"(RunContext.owner), not the file: {inside}")


def test_every_reader_listed_still_reads() -> None:
    """An entry whose module no longer reads the file goes (a module not in this checkout,
    such as a reader still being written, is left alone)."""
    found = file_readers()
    stale = sorted(m for m in READERS if (PACKAGE / m).is_file() and m not in found)
    assert stale == []


def test_the_run_itself_is_not_among_the_readers() -> None:
    run = ("run/supervisor.py", "run/pipeline.py", "seat/", "evidence/finalreport.py",
           "views/page.py", "phases/")
    assert not [m for m in READERS if m.startswith(run)]
