"""Adding a phase is one declaration in graph.py plus its module in council/phases/, as
docs/phases.md shows: this test does exactly that to a copy of the package (one entry
inserted in GRAPH, one module written, nothing else touched) and runs it with the fake CLIs.
The new phase is planned, run beside the phases it does not wait for, given its turns,
published, recorded in state.yaml, and shown by `council status`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import Council

PACKAGE = Path(__file__).parents[1] / "council"

# The worked example of docs/phases.md (test_the_docs_show_this_example keeps the two equal).
DECLARATION = '''\
GLOSSARY = Phase("glossary", ("refinement",), ONE, SHORT, lambda facts: None,
                 output="glossary.md", colour="#66aa00")
'''
MODULE = '''\
"""One agent lists the terms the refined reports use, a line each: glossary.md."""

from __future__ import annotations

from council.graph import Phase
from council.phases import RunContext, run_parallel, seat_task
from council.phases.chooser import writer
from council.store import events, loop


async def run(ctx: RunContext, phase: Phase) -> None:
    ws = ctx.ws
    source, seats = ctx.contributors()  # the reports the phases after the research build on
    seat = writer(ctx.options.synthesizer, ctx.seats(), seats)
    folder = ws.peers_dir(seat.name, phase.name)
    inputs = {ws.output_name(s.name, source): ws.published_output(s.name, source)
              for s in seats}
    prompt = ("List the terms these reports use, with one line on each:\\n"
              + "".join(f"- {folder / name}\\n" for name in inputs)
              + f"\\nReport file: {ws.working_output(seat.name, phase.name)}\\n"
              + f"End it with {loop.MARKER} on a line of its own.\\n")
    events.emit(ws.root, phase.name, f"started: {seat.name} lists the terms")
    await run_parallel(ctx, [seat_task(phase, seat, prompt, inputs)])
'''


def with_a_glossary(root: Path) -> Path:
    """A copy of the package with the glossary phase added; the folder to put on the path."""
    copy = root / "pkg" / "council"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    graph = copy / "graph.py"
    text = graph.read_text(encoding="utf-8")
    listed = "GRAPH: tuple[Phase, ...] = ("
    assert text.count(listed) == 1
    text = text.replace(listed, DECLARATION + "\n" + listed, 1)
    text = text.replace("REFINEMENT, CLAIMS,", "REFINEMENT, GLOSSARY, CLAIMS,", 1)
    graph.write_text(text, encoding="utf-8")
    (copy / "phases" / "glossary.py").write_text(MODULE, encoding="utf-8")
    return copy.parent


def test_a_toy_phase_is_one_declaration_and_its_module(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    env = {**council.env, "PYTHONPATH": str(with_a_glossary(council.root))}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "council", *args], env=env,
                              cwd=council.root, capture_output=True, text=True, timeout=120)

    proc = cli("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    # The plan: the glossary waits for the refinement, as the synthesis does in this profile.
    assert "research → refinement → glossary ∥ synthesis by claude" in proc.stdout
    run = council.only_run()
    assert (run / "glossary.md").read_text().startswith("# claude report")
    st = yaml.safe_load((run / "state.yaml").read_text())
    assert st["steps"]["glossary"] == "done"
    record = st["agents"]["claude"]["phases"]["glossary"]
    assert (record["status"], record["max_iterations"]) == ("complete", 1)
    assert (run / "agents" / "claude" / "glossary-inputs" / "codex-refined.md").is_file()
    log = (run / "progress.log").read_text()
    assert " glossary started: claude lists the terms" in log
    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert "glossary ∥ synthesis" in status.stdout
    # The same package without the copy knows no such phase: nothing else was edited.
    assert "glossary" not in (PACKAGE / "graph.py").read_text()


def test_the_docs_show_this_example() -> None:
    docs = (PACKAGE.parent / "docs" / "phases.md").read_text(encoding="utf-8")
    shown = "\n".join(line.removeprefix("   ") for line in docs.splitlines()) + "\n"
    assert DECLARATION in shown
    assert MODULE[MODULE.index("async def run"):] in shown
