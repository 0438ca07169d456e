"""A configuration as an Inspect solver: `council run` on the sample's question, run on the
host as the user would run it (their CLIs, their logins), then the run's report as the
sample's output and its tokens and dollars as the output's usage.

The run is `python -m council run …` in a session of its own, stopped as a tree if the sample
is cancelled (Ctrl-C, SIGTERM: spawn.py sends it SIGTERM, which council turns into a clean
stop of its agents, then SIGKILL after a grace period). Its folder is the sample's, so a
sample Inspect runs again finds it: a finished run is reused, an interrupted one resumed
(`council resume`), a failed one kept and a new one started. Limits: at most
$COUNCIL_EVAL_MAX_RUNS runs at once in this evaluation (Inspect's `concurrency`), and each
run holds its vendors' slots on this machine (slots.py) while it runs; the machine's own
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
from council.options import EVAL_RUN_ENV
from council.paths import RESEARCH_FOLDER
from council.store.disk import atomic_write
from council.store.workspace import Workspace

MAX_RUNS_ENV = "COUNCIL_EVAL_MAX_RUNS"  # `council eval --max-runs` sets it
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
    """`council …` with this interpreter: no PATH lookup, the same installation."""
    return (sys.executable, "-m", "council", *args)


@solver
def council_run(configuration: str, runs_dir: str, test: bool = False,
                max_cost: float | None = None) -> Solver:
    """Answer the sample's question with `council run` in this configuration."""
    conf = configurations.parse(configuration)
    vendors = configurations.vendors(configurations.resolve(conf, test, max_cost))
    run_args = conf.run_args(test, max_cost)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = state.input_text
        folder = results.sample_folder(Path(runs_dir), conf.slug(), str(state.sample_id))
        research = folder / RESEARCH_FOLDER
        found = results.latest(research, question)
        action = results.decide(found[1] if found else None,
                                found is not None and results.supervised(found[0]))
        if action == results.RESUME and found is not None:
            await _work(folder, research, question, run_args, vendors, found[0])
            found = results.latest(research, question)
            if found is None or found[1].phase in results.ENDED_BADLY:
                action = results.NEW  # a run that cannot be resumed is kept; start afresh
        if action == results.NEW:
            await _work(folder, research, question, run_args, vendors, None)
            found = results.latest(research, question)
        if found is None:
            raise RunFailed(f"council run left no run folder in {research}; see "
                            f"{folder / LOG_ERR}")
        outcome = results.read_outcome(found[0], folder)
        if outcome.phase != "done" or not outcome.report.strip():
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
    """One `council` command of the sample's run; the run is exempt from the machine's
    max_runs (EVAL_RUN_ENV), as this evaluation's own limits hold it."""
    env = {**os.environ, EVAL_RUN_ENV: "1"}
    return await spawn.run(council_argv(*args), cwd=Path.cwd(), env=env,
                           stdout=folder / LOG_OUT, stderr=folder / LOG_ERR, grace=STOP_GRACE)


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1][:300] if lines else "no output"
