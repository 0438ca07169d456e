"""A configuration as an Inspect solver: `council run` on the sample's question, run on the
host as the user would run it (their CLIs, their logins), then the run's report as the
sample's output and its tokens and dollars as the output's usage.

The run is `council run …` started as run/detach.py starts a supervisor: this interpreter,
isolated (`-I`), on the package's own entry file, so nothing of the folder the evaluation was
started in (a benchmark checkout's `council/` package, a `sitecustomize.py`) or of PYTHONPATH
is imported; and in the sample's own folder, so no ./council.yaml standing in the user's
folder is read by a run. A configuration whose seats come from the project's ./council.yaml
(trusted, `council trust`) gets that file by name (`--config`), checked again, as `council
run` would check it, before each run starts. The run has a session of its own and is stopped
as a tree if the sample is cancelled (Ctrl-C, SIGTERM: spawn.py sends it SIGTERM, which
council turns into a clean stop of its agents, then SIGKILL after a grace period). Its folder
is the sample's, so a sample Inspect runs again finds it: a finished run is reused, an
interrupted one resumed (`council resume`), a failed one kept and a new one started. Limits:
at most $COUNCIL_EVAL_MAX_RUNS runs at once in this evaluation (Inspect's `concurrency`), and
each run holds its vendors' slots on this machine (slots.py) while it runs; the machine's own
limit on council runs (max_runs) leaves them out, so `--max-runs N` runs N."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import concurrency

from council import spawn
from council.evaluation import configurations, results, slots
from council.evaluation.configurations import Configuration
from council.evaluation.slots import MAX_RUNS_ENV
from council.options import EVAL_RUN_ENV
from council.paths import RESEARCH_FOLDER, project_config_file
from council.run.detach import ENTRY
from council.store import agentfs
from council.store.disk import atomic_write
from council.store.state import RunEnd
from council.store.workspace import Workspace

DEFAULT_MAX_RUNS = 2
# Seconds a council run gets to stop its agents after SIGTERM (each gets council's own grace
# period, 10 s by default) before it is killed with everything it started.
STOP_GRACE = 60.0
QUESTION_FILE = "question.md"
LOG_OUT, LOG_ERR = "council.out", "council.err"
INTERRUPTED = (129, 130, 143)


class RunFailed(RuntimeError):
    """The council run did not produce a report; the message says why, in one line."""


def max_runs() -> int:
    try:
        return max(1, int(os.environ.get(MAX_RUNS_ENV) or DEFAULT_MAX_RUNS))
    except ValueError:
        return DEFAULT_MAX_RUNS


def council_argv(*args: str) -> tuple[str, ...]:
    """`council …` with this interpreter and this installation's entry file, isolated: no
    PATH lookup, and neither the current folder nor PYTHONPATH on sys.path."""
    return (sys.executable, "-I", str(ENTRY), *args)


def project_config(conf: Configuration, test: bool = False,
                   max_cost: float | None = None) -> list[str]:
    """`--config FILE` when the configuration's seats come from the project's ./council.yaml
    (the run, in the sample's folder, would not find it), else nothing. Resolved again each
    time, in the folder the evaluation was started in: a file changed since it was trusted
    is refused here, with `council run`'s one line, rather than obeyed by name."""
    if conf.config_file is not None:
        return []
    found = configurations.resolve(conf, test, max_cost).config_file
    project = project_config_file()
    if found is None or Path(found) != project:
        return []
    return ["--config", os.path.realpath(project)]


@solver
def council_run(configuration: str, runs_dir: str, test: bool = False,
                max_cost: float | None = None) -> Solver:
    """Answer the sample's question with `council run` in this configuration."""
    conf = configurations.parse(configuration)
    vendors = configurations.vendors(configurations.resolve(conf, test, max_cost))
    run_args = conf.run_args(test, max_cost)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = state.input_text
        args = [*run_args, *project_config(conf, test, max_cost)]
        folder = results.sample_folder(Path(runs_dir), conf.slug(), str(state.sample_id))
        research = folder / RESEARCH_FOLDER
        found = results.latest(research, question)
        action = results.decide(found[1] if found else None,
                                found is not None and results.supervised(found[0]))
        if action == results.RESUME and found is not None:
            await _work(folder, research, question, args, vendors, found[0])
            found = results.latest(research, question)
            if found is None or found[1].phase in results.ENDED_BADLY:
                action = results.NEW  # a run that cannot be resumed is kept; start afresh
        if action == results.NEW:
            await _work(folder, research, question, args, vendors, None)
            found = results.latest(research, question)
        if found is None:
            raise RunFailed(f"council run left no run folder in {research}; see "
                            f"{folder / LOG_ERR}")
        outcome = results.read_outcome(found[0], folder)
        if outcome.phase != RunEnd.DONE or not outcome.report.strip():
            raise RunFailed(f"council run {outcome.run_id} ended {outcome.phase}"
                            + (f": {outcome.error}" if outcome.error else ""))
        state.output = ModelOutput.from_content(model=f"council/{conf.name}",
                                                content=outcome.report)
        used = outcome.usage
        state.output.usage = ModelUsage(input_tokens=used.tokens_in,
                                        output_tokens=used.tokens_out, total_tokens=used.tokens,
                                        total_cost=used.cost_usd)
        state.metadata["council"] = {"configuration": conf.name, **outcome.metadata()}
        state.completed = True
        return state

    return solve


async def _work(folder: Path, research: Path, question: str, run_args: list[str],
                vendors: Mapping[str, int], resume: Workspace | None) -> None:
    """Start (or resume) the council run, within the limits, and wait for it."""
    folder.mkdir(parents=True, exist_ok=True)
    async with concurrency("council runs", max_runs()), \
            slots.holding(vendors, slots.per_vendor()):
        if resume is not None and results.supervised(resume):
            # An earlier evaluation was killed without a chance to stop its run.
            await _council(folder, "cancel", resume.id, "--research-dir", str(research))
        if resume is not None:
            args: tuple[str, ...] = ("resume", resume.id, "--research-dir", str(research))
        else:
            topic = folder / QUESTION_FILE
            atomic_write(topic, question + "\n", redacted=True)
            args = ("run", *run_args, "--research-dir", str(research), "--topic-file",
                    str(topic))
        began = time.monotonic()
        try:
            code = await _council(folder, *args)
        finally:
            # Also when cancelled: the time the run ran counts, whatever stopped it.
            ran = results.latest(research, question)
            if ran is not None:
                results.add_wall(folder, ran[1].id, time.monotonic() - began)
    if code in INTERRUPTED:
        raise RunFailed(f"council {args[0]} was interrupted from outside (exit {code}); the "
                        "next evaluation resumes it")
    if code not in (0, 1):
        raise RunFailed(f"council {args[0]} exited {code}: {_last_line(folder / LOG_ERR)}")


async def _council(folder: Path, *args: str) -> int:
    """`council …` in the sample's folder (module docstring), to its end; the run is exempt
    from the machine's max_runs (EVAL_RUN_ENV), as this evaluation's own limits hold it."""
    env = {**os.environ, EVAL_RUN_ENV: "1"}
    return await spawn.run(council_argv(*args), cwd=folder, env=env,
                           stdout=folder / LOG_OUT, stderr=folder / LOG_ERR, grace=STOP_GRACE)


def _last_line(path: Path) -> str:
    try:
        lines = agentfs.tail(path, 4096)[0].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1][:300] if lines else "no output"
