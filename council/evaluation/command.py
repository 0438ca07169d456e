"""`council eval QUESTIONS --config C [--config C …] --judge J --log-dir DIR`: the core the
command line calls. Everything is checked before anything runs (the questions file line by
line, each configuration as `council run` would check it, the judges and their credentials,
the folder an `--export` goes to); Inspect is loaded for the last check only (the judge as
an Inspect model), so most bad input is answered without it. Then the plan is printed, as
`council run` prints its own, and the configurations run as one Inspect eval set in DIR,
which Inspect resumes: the same command again redoes no finished sample, and picks up an
interrupted one where its council run stopped.

SIGTERM and SIGHUP are turned into the SIGINT Inspect already handles (cancel every sample;
each sample's council run is stopped as a tree), so no signal leaves a process behind."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from council.errors import UsageError
from council.evaluation import (
    configurations,
    dataset,
    export,
    judges,
    results,
    shards,
    slots,
    summary,
)
from council.evaluation.citations import MAX_CITATIONS
from council.evaluation.configurations import Configuration
from council.evaluation.judges import ROLE, SECOND_ROLE, Judge
from council.evaluation.public_sets import DrbTask, drb_tasks
from council.evaluation.questions import Question
from council.evaluation.slots import MAX_RUNS_ENV
from council.evidence import ledger
from council.evidence.ledger import Usage
from council.graph import plan
from council.paths import RESEARCH_FOLDER
from council.runoptions import RunOptions
from council.store.state import RunEnd

RUNS = "runs"  # DIR/runs/<configuration>/<question>/: the council runs
INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


class JudgeUnavailable(UsageError):
    """The judge cannot be used: unknown, not installed or without credentials."""


@dataclass(frozen=True)
class EvalRequest:
    questions: str
    configurations: tuple[str, ...]
    judge: str
    log_dir: Path
    max_runs: int = 2
    per_vendor: int = slots.DEFAULT_PER_VENDOR
    test: bool = False
    max_cost: float | None = None
    max_citations: int = MAX_CITATIONS
    language: str | None = None
    limit: int | None = None
    shard: shards.Shard | None = None  # --shard I/N: this worker's share only (shards.py)
    judge_batch: bool = False  # --judge-batch: an Inspect model judge in batch mode
    second_judge: str | None = None  # --second-judge: another vendor's judge, same reports
    export: tuple[str, Path] | None = None  # --export FORMAT DIR (export.py)


class JudgeBatchRefused(UsageError):
    """--judge-batch with a `cli:` judge, which has no batch mode."""


@dataclass
class Prepared:
    """A request checked and resolved: what will run."""

    request: EvalRequest
    questions: list[Question]
    configurations: list[tuple[Configuration, RunOptions]]
    judge: str  # as Inspect names it (cli/gemini)
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    judge_label: str | None = None  # how the plan and the summary name it (None: as given)
    second: Judge | None = None
    export_tasks: dict[str, DrbTask] | None = None  # --export drb: the benchmark's tasks

    @property
    def label(self) -> str:
        return self.judge_label or self.request.judge

    @property
    def runs_dir(self) -> Path:
        return self.request.log_dir / RUNS


inspect_name = judges.inspect_name


def check_judge(name: str) -> Any:
    """The judge as an Inspect model (a CLI judge: its name, checked without Inspect), or one
    line saying why it cannot judge."""
    provider, _, model = name.partition("/")
    if provider == judges.CLI_PROVIDER:  # model: <claude|codex|gemini>[/<model>]
        problem = judges.cli_problem(model)
        if problem:
            raise JudgeUnavailable(problem)
        return name
    from inspect_ai.model import get_model

    from council.evaluation.judge import JudgeError

    try:
        return get_model(name)
    except JudgeError as exc:
        raise JudgeUnavailable(str(exc)) from exc
    except Exception as exc:  # Inspect's: unknown provider, missing package, missing key
        text = " ".join(str(exc).replace("[bold]", "").replace("[/bold]", "").split())
        text = text.removeprefix("ERROR: ")  # Inspect's console prefix: one line is enough
        raise JudgeUnavailable(f"judge {name}: {text or type(exc).__name__}") from exc


def prepare(request: EvalRequest, judge_model: Any = None, second_model: Any = None
            ) -> Prepared:
    """Check everything before anything runs; a UsageError (exit 2) names what is wrong."""
    from council.readiness import preflight

    if not request.configurations:
        raise UsageError("name at least one configuration with --config")
    if len(set(request.configurations)) != len(request.configurations):
        raise UsageError("a configuration is named twice")
    questions, notes = dataset.load(request.questions, request.language, request.limit)
    resolved = []
    for spec in request.configurations:
        conf = configurations.parse(spec)
        options = configurations.resolve(conf, request.test, request.max_cost)
        try:
            options, more = preflight.prepare(options, explicit=conf.kind ==
                                              configurations.SINGLE)
        except UsageError as exc:
            raise configurations.ConfigurationError(
                f"configuration {conf.name}: {exc}") from exc
        notes += [f"{conf.name}: {line}" for line in more]
        resolved.append((conf, options))
    first = judges.resolve(request.judge, request.test)
    second = None if request.second_judge is None else \
        judges.second(first, request.second_judge, request.test)
    for judge in (first, second):
        if request.judge_batch and judge is not None and judge.is_cli:
            raise JudgeBatchRefused(f"--judge-batch: the judge {judge.given} is a CLI, which "
                                    "has no batch mode; use an Inspect model judge "
                                    "(anthropic/…, openai/…, google/…) or leave --judge-batch "
                                    "out")
    tasks = _export_tasks(request)
    if judge_model is None:  # the one check that loads Inspect (~1.5 s): the last
        check_judge(first.model)
    if second is not None and second_model is None:
        check_judge(second.model)
    flags = []
    for judge in [j for j in (first, second) if j is not None]:
        for conf, options in resolved:
            if configurations.sole_vendor(options) == judge.vendor:
                flags.append(f"the judge {judge.given} is of the same vendor ({judge.vendor}) "
                             f"as {conf.name}'s only agent: it may favour that configuration")
    return Prepared(request, questions, resolved, first.model, notes, flags,
                    first.label if first.seat else None, second, tasks)


def _export_tasks(request: EvalRequest) -> dict[str, DrbTask] | None:
    """--export drb DIR: DeepResearch Bench's tasks (the ids and prompts its scripts match
    on), from the questions' own checkout; DIR checked writable."""
    if request.export is None:
        return None
    form, folder = request.export
    if form not in export.FORMATS:
        raise export.ExportRefused(f"--export {form}: the formats are "
                                   f"{', '.join(export.FORMATS)}")
    if not request.questions.startswith(dataset.DRB):
        raise export.ExportRefused(
            f"--export {form}: the questions must be DeepResearch Bench's (drb:FOLDER), whose "
            "scripts find each report by its task's id and prompt; these are "
            f"{request.questions}")
    export.check_folder(folder)
    return drb_tasks(Path(request.questions[len(dataset.DRB):]))


def pending(prepared: Prepared) -> dict[str, tuple[int, list[Usage]]]:
    """Per configuration: the council runs still to do, and the usage of those done."""
    out = {}
    for conf, _ in prepared.configurations:
        todo, done = 0, []
        for q in prepared.questions:
            research = results.sample_folder(prepared.runs_dir, conf.slug(), q.id) / RESEARCH_FOLDER
            found = results.latest(research, q.question)
            if found is not None and found[1].phase == RunEnd.DONE:
                done.append(ledger.spent(found[1]))
            else:
                todo += 1
        out[conf.name] = (todo, done)
    return out


def plan_lines(prepared: Prepared) -> list[str]:
    """What the evaluation will do and roughly cost, before it spends anything."""
    req = prepared.request
    lines = [f"council eval: {len(prepared.questions)} questions ({req.questions}) × "
             f"{len(prepared.configurations)} configurations, judged by {prepared.label}"
             + (f", and again by {prepared.second.label}" if prepared.second else "")]
    todo = pending(prepared)
    total = 0
    for conf, options in prepared.configurations:
        left, done = todo[conf.name]
        total += left
        lines.append(f"{conf.name}: {left} runs to do, {len(done)} done")
        lines += [f"  {line}" for line in plan(options)]
        costs = [u.cost_usd for u in done if u.cost_usd is not None]
        if costs and left:
            each = sum(costs) / len(costs)
            lines.append(f"  estimate: ~${each:.2f} a run from the {len(costs)} done, "
                         f"~${each * left:.2f} for the rest")
        elif left:
            lines.append("  estimate: none yet, no run of this configuration has finished "
                         "here: `--limit 1` runs one question first, and the next plan "
                         "estimates the rest from it")
    if req.max_cost is not None:
        lines.append(f"budget: at most ${req.max_cost:g} a run (--max-cost), "
                     f"${total * req.max_cost:.2f} for the {total} runs")
    lines.append(f"at most {req.max_runs} council runs at once, {req.per_vendor} CLI processes "
                 "per vendor on this machine; the judge answers 2 or 3 prompts per sample "
                 "(rubric, citations, RACE where there is a reference)"
                 + ("; the second judge 1 or 2 (rubric, RACE)" if prepared.second else ""))
    lines += [f"note: {n}" for n in prepared.notes]
    lines += [f"warning: {f}" for f in prepared.flags]
    lines.append(f"logs: {req.log_dir} (inspect view --log-dir {req.log_dir}); council runs: "
                 f"{prepared.runs_dir}")
    if req.export is not None:
        lines.append(f"export: each configuration's reports to {req.export[1]} in "
                     "DeepResearch Bench's form (<model>.jsonl), once they are scored")
    return lines


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """The limits the solver and the judge read ($COUNCIL_EVAL_MAX_RUNS, …), for the length
    of the evaluation."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


@contextmanager
def signals_as_interrupt() -> Iterator[dict[str, int]]:
    """SIGTERM and SIGHUP become the SIGINT Inspect handles (it cancels the samples, whose
    council runs are stopped as trees); the first signal's exit code is recorded."""
    got: dict[str, int] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        got.setdefault("code", INTERRUPTED.get(signal.Signals(signum), 130))
        os.kill(os.getpid(), signal.SIGINT)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    # A shell starts a background job with SIGINT ignored, and asyncio then leaves it so:
    # the SIGTERM above would reach nothing. Python's own handler makes it Inspect's again.
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield got
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def tasks_of(prepared: Prepared) -> list[Any]:
    """The eval set's tasks: each configuration × each slice of the questions (shards.py),
    the same with or without --shard, so a worker's logs are the closing run's."""
    from council.evaluation.task import deep_research

    req = prepared.request
    return [deep_research(questions=dataset.canonical_spec(req.questions),
                          configuration=conf.name, runs_dir=str(prepared.runs_dir.absolute()),
                          test=req.test, max_cost=req.max_cost,
                          max_citations=req.max_citations, language=req.language,
                          limit=req.limit, start=start, stop=stop,
                          # only when set: a task argument is part of the task's identity
                          **({"second_judge": True} if prepared.second else {}))
            for conf, _ in prepared.configurations
            for start, stop in shards.slices(len(prepared.questions))]


def grader(prepared: Prepared, judge_model: Any = None, name: str | None = None) -> Any:
    """The judge for the `grader` role (or the judge `name`, the second's): in batch mode
    (GenerateConfig.batch) when asked. Set on the role's model, not the eval set's config,
    which is part of each task's identity: a worker in batch mode and one without still
    share their tasks."""
    name = name or prepared.judge
    if judge_model is not None or not prepared.request.judge_batch:
        return judge_model or name
    from inspect_ai.model import GenerateConfig, get_model

    return get_model(name, config=GenerateConfig(batch=True))


def roles(prepared: Prepared, judge_model: Any = None,
          second_model: Any = None) -> dict[str, Any]:
    """Inspect's model roles: the judge, and the second judge when there is one."""
    out = {ROLE: grader(prepared, judge_model)}
    if prepared.second is not None:
        out[SECOND_ROLE] = grader(prepared, second_model, prepared.second.model)
    return out


def run_eval_set(prepared: Prepared, tasks: list[Any], judge: dict[str, Any]) -> list[Any]:
    """Inspect's eval set over DIR (or, under INSPECT_EVAL_SET_CAPTURE or _SELECTION, its
    manifest or a worker's share), with `judge` its model roles; its logs."""
    from inspect_ai import eval_set

    req = prepared.request
    _, logs = eval_set(
        tasks, log_dir=str(req.log_dir), model=None, model_roles=judge,
        max_tasks=max(len(tasks), 1), max_samples=req.max_runs, continue_on_fail=True,
        retry_attempts=1, retry_wait=1, log_dir_allow_dirty=True,
        display="rich" if sys.stdout.isatty() else "plain", score_display=False)
    return logs


def evaluate(prepared: Prepared, echo: Callable[[str], None], warn: Callable[[str], None],
             judge_model: Any = None, second_model: Any = None) -> int:
    """Run the eval set (or this worker's share of it); write the summary (and the export);
    the exit code. `warn` takes the lines that say what went wrong (stderr)."""
    req = prepared.request
    req.log_dir.mkdir(parents=True, exist_ok=True)
    judge = roles(prepared, judge_model, second_model)
    if req.shard is not None:
        return _worker(prepared, req.shard, echo, warn, judge)
    tasks = tasks_of(prepared)
    logs, code = _interruptible(prepared, lambda: run_eval_set(prepared, tasks, judge),
                                len(tasks))
    if code is not None:
        warn(f"council: evaluation interrupted; run the same command again to go on where "
             f"it stopped (logs in {req.log_dir})")
        return code
    rows, unread, answers = _rows(logs, warn)
    return _report(prepared, rows, echo, warn, missing=unread, answers=answers)


def _interruptible(prepared: Prepared, run: Callable[[], list[Any]],
                   tasks: int) -> tuple[list[Any], int | None]:
    """`run` (an eval set of `tasks` tasks) with the evaluation's limits and signals; its
    logs and the exit code of a signal that stopped it, if one did."""
    req = prepared.request
    limits = {MAX_RUNS_ENV: str(req.max_runs), slots.PER_VENDOR_ENV: str(req.per_vendor)}
    logs: list[Any] = []
    with signals_as_interrupt() as got, environment(limits):
        try:
            logs = run()
        except KeyboardInterrupt:
            got.setdefault("code", 130)
    # An interrupted eval set may return without raising, with the cancelled tasks' logs
    # or without them: every task must have its log, and none may be cancelled.
    if len(logs) < tasks or "cancelled" in [log.status for log in logs]:
        got.setdefault("code", 130)
    return logs, got.get("code")


def _worker(prepared: Prepared, shard: shards.Shard, echo: Callable[[str], None],
            warn: Callable[[str], None], judge: dict[str, Any]) -> int:
    """Worker I of N (shards.py): its share of the tasks, resumed where its logs stopped,
    then the summary of what every worker has done so far."""
    req = prepared.request
    planned = shards.again_if_torn(
        lambda: shards.capture(lambda: run_eval_set(prepared, tasks_of(prepared), judge)))
    identifiers = [p.identifier for p in planned]
    mine = shards.share(identifiers, shard)
    size = {p.identifier: p.samples for p in planned}
    told: list[bool] = []

    def run_share() -> int | None:
        """What is left of this worker's share, from the logs as they are now, run; the
        exit code of a signal that stopped it, if one did."""
        logs = shards.newest_logs(req.log_dir, warn)
        todo = [i for i in mine if i not in logs or not shards.finished(logs[i], size[i])]
        if not told:
            told.append(True)
            echo(f"shard {shard}: {len(mine)} of the {len(planned)} tasks are this worker's, "
                 f"{len(todo)} to run")
        if not todo:
            return None
        set_id = shards.shared_set_id(req.log_dir, identifiers)
        document = shards.selection(set_id, todo, logs)
        with shards.selected(document), shards.socket_path_named():
            _, code = _interruptible(
                prepared, lambda: run_eval_set(prepared, tasks_of(prepared), judge),
                len(todo))
        return code

    code = shards.again_if_torn(run_share)
    if code is not None:
        warn(f"council: shard {shard} interrupted; run the same command again to go on "
             f"where it stopped (logs in {req.log_dir})")
        return code
    logs = shards.newest_logs(req.log_dir, warn)
    rows, mine_rows, answers = [], [], []
    for task in planned:
        if task.identifier in logs:
            got, _, said = _rows([logs[task.identifier]], warn)  # counted missing below
            rows += got
            answers += said
            if task.identifier in mine:
                mine_rows += got
    missing = sum(size.values()) - sum(1 for r in rows if r.score is not None)
    code = _report(prepared, rows, echo, warn, missing, mine_rows, answers)
    if missing:
        echo(f"{missing} of {sum(size.values())} samples are still missing or failed: the "
             "other shards may still be running; the same command without --shard closes "
             "the set")
    return code


def _report(prepared: Prepared, rows: list[summary.Row], echo: Callable[[str], None],
            warn: Callable[[str], None], missing: int,
            own: list[summary.Row] | None = None,
            answers: list[export.Answer] | None = None) -> int:
    """Write the summary of `rows` (and the export of `answers`, the scored reports); 1 if
    any of `own` (default: every row) failed."""
    req = prepared.request
    flags = list(prepared.flags)
    if missing:
        flags.append(f"{missing} samples are still missing or failed: this summary covers "
                     "the others (the same command without --shard closes the set)")
    written = summary.write(req.log_dir, summary.summarise(
        rows, [conf.name for conf, _ in prepared.configurations], prepared.label,
        req.questions, flags, prepared.second.label if prepared.second else None))
    echo(f"summary: {written} and {req.log_dir / summary.SUMMARY_HTML}")
    if req.export is not None and prepared.export_tasks is not None:
        unscored = sum(1 for row in rows if row.score is None)
        for line in export.write_drb(req.export[1], [c for c, _ in prepared.configurations],
                                     answers or [], prepared.export_tasks, unscored):
            echo(line)
    failed = [r for r in (rows if own is None else own) if r.score is None]
    if failed:
        first = failed[0]
        warn(f"council: {len(failed)} of {len(rows if own is None else own)} samples failed "
             f"(first: {first.configuration} on {first.question}: {first.error}); run the "
             "same command again to retry them")
        return 1
    return 0


def _rows(logs: list[Any], warn: Callable[[str], None]
          ) -> tuple[list[summary.Row], int, list[export.Answer]]:
    """Each sample of each log, as the summary shows it; how many samples the logs that
    could not be read hold (each named to `warn`: its samples count as missing); and the
    report of each sample scored (for --export)."""
    rows, unread, answers = [], 0, []
    for header in logs:
        full = shards.read_log(header.location)
        if full is None:
            warn(f"council: cannot read the log {header.location}; its samples count as "
                 "missing")
            unread += header.eval.dataset.samples or 0
            continue
        conf = str((full.eval.task_args or {}).get("configuration", "?"))
        for sample in full.samples or []:
            row = summary.row_of(conf, sample)
            rows.append(row)
            if row.score is not None and sample.output is not None:
                answers.append(export.Answer(conf, str(sample.id), sample.output.completion))
    return rows, unread, answers


def main(request: EvalRequest, echo: Callable[[str], None],
         warn: Callable[[str], None] | None = None, confirm: Callable[[], bool] | None = None,
         judge_model: Any = None, second_model: Any = None) -> int:
    """`council eval`: check, show the plan, ask when told to, run; the exit code."""
    prepared = prepare(request, judge_model, second_model)
    for line in plan_lines(prepared):
        echo(line)
    if confirm is not None and not confirm():
        echo("not started")  # the user's answer, not an error
        return 0
    return evaluate(prepared, echo, warn or echo, judge_model, second_model)
