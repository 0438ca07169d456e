"""The command line: the only module that imports click. Parses, builds typed options, calls
the core, and turns CouncilError into one line on stderr and an exit code."""

from __future__ import annotations

import io
import json
import shlex
import signal
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from council import __version__, graph, options, paths
from council.errors import CouncilError, UsageError
from council.evidence import changes
from council.run import crash, prepare, supervisor
from council.run.cancel import cancel_run, pick
from council.store.state import RunEnd, load_state, readable
from council.store.workspace import find_run, list_runs
from council.topic import read_topic
from council.views import status

if TYPE_CHECKING:
    from rich.console import RenderableType

    from council.store.state import RunState
    from council.store.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(func: F) -> F:
    """Every command's one error handler: a CouncilError is its one-line message; anything
    unexpected is one line too, with the path of a crash log holding the traceback."""
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CouncilError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            click.echo("council: interrupted", err=True)
            sys.exit(130)
        except (click.ClickException, click.Abort):
            raise  # click prints these itself, in one line
        except Exception as exc:
            known = _council_error(exc)
            if known is not None:
                _fail(known)
            log = crash.write_log(exc, func.__name__)
            where = f"details in {log}" if log else "no crash log could be written"
            click.echo(f"council: internal error ({crash.summary(exc)}); {where}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def _fail(exc: CouncilError) -> NoReturn:
    click.echo(f"council: error: {exc}", err=True)
    sys.exit(exc.exit_code)


def _council_error(exc: BaseException) -> CouncilError | None:
    """The CouncilError inside a task group's ExceptionGroup, when that is all it holds."""
    if isinstance(exc, CouncilError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        found = [_council_error(e) for e in exc.exceptions]
        if found and all(found):
            return found[0]
    return None


def _research_dir(value: Path | None) -> Path:
    return value.absolute() if value else paths.research_dir()


research_dir_option = click.option(
    "--research-dir", type=click.Path(path_type=Path, file_okay=False),
    help="Folder holding the runs (default ./research, or $COUNCIL_RESEARCH_DIR).")


def examples(*lines: str) -> str:
    """A command's --help epilog: commands a user can copy, kept as written (click's `\\b`
    stops it rewrapping them). Every command has one (tests/test_cli.py)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             epilog=examples('council doctor', 'council run --test "What is a CRDT?"',
                             'council status', 'council open'))
@click.version_option(__version__, prog_name="council")
def main() -> None:
    """A research council: claude, codex and gemini research a topic in parallel, read each
    other's reports, and one of them writes the final report."""


def _click_option(option: options.Option) -> Callable[[F], F]:
    """One declared run option (options.py) as a click option: its flags, the click type of
    its kind, its help. Not given is None (False for a lone flag), so the config file and the
    defaults show through."""
    kind = option.kind
    kwargs: dict[str, Any] = {"help": option.help_text(), "metavar": option.metavar}
    if isinstance(kind, options.Flag) and kind.negative:
        decls, kwargs["default"] = ["/".join(option.flags)], None
    elif isinstance(kind, options.Flag):
        decls, kwargs["is_flag"] = [option.flag], True
    else:
        decls = [option.flag]
        kwargs["type"] = _click_type(option)
    if isinstance(kind, options.Domains):  # once per domain; none given: not given
        kwargs.update(multiple=True, callback=lambda _ctx, _param, value: value or None)
    return click.option(*decls, option.name, **kwargs)


class _Declared(click.ParamType[Any]):
    """A click type that reads its word with the option's declaration (options.Option.read)
    before click converts it: a refused word is the line a host's command, a config file and
    an MCP client get for it ("--max-cost must be a positive number of US dollars"), not
    click's own wording. Mixed into click's types, which keep what --help shows (a range's
    bounds, a choice's words)."""

    option: options.Option

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                self.option.read(value)
            except UsageError as exc:
                raise click.UsageError(str(exc), ctx) from None
        return super().convert(value, param, ctx)


class _Int(_Declared, click.IntRange):
    pass


class _Float(_Declared, click.FloatRange):
    pass


class _Choice(_Declared, click.Choice):  # type: ignore[type-arg]
    pass


class _Path(_Declared, click.Path):
    pass


class _Text(_Declared, click.types.StringParamType):
    pass


def _click_type(option: options.Option) -> click.ParamType[Any]:
    """The click type of an option's kind: its bounds for --help, its check the
    declaration's."""
    kind = option.kind
    made: _Declared
    if isinstance(kind, options.Number) and kind.whole:
        made = _Int(min=int(kind.minimum), min_open=kind.above,
                    max=None if kind.maximum is None else int(kind.maximum))
    elif isinstance(kind, options.Number):
        made = _Float(min=kind.minimum, min_open=kind.above, max=kind.maximum)
    elif isinstance(kind, options.Choice):
        made = _Choice(kind.values)
    elif isinstance(kind, options.File):
        made = _Path(path_type=Path, dir_okay=False)
    else:
        made = _Text()  # Text, Names, Domains: the declaration types them (Overrides)
    made.option = option
    return made


def run_options(func: F) -> F:
    """`council run`'s options for the run, made from their declaration, in its order."""
    for option in reversed(options.given_on(options.CLI)):
        func = _click_option(option)(func)
    return func


@main.command(epilog=examples(
    'council run --test "How do CRDTs handle concurrent deletes?"',
    "council run --confirm --max-cost 5 --topic-file question.md",
    'council run --agents claude,codex --synthesizer codex "Rust or Go for a CLI?"'))
@click.argument("topic", required=False)
@click.option("--topic-file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              help="Read the topic from a file ('-' for stdin) instead of the argument.")
@run_options
@click.option("--exit-code", is_flag=True, help="With --since: exit 1 when something changed, "
              "0 when nothing did (as `git diff --exit-code`), 3 when the run failed or could "
              "not compare its claims.")
@click.option("--confirm", is_flag=True, help="Show the plan and ask before spending.")
@click.option("--quiet", "-q", is_flag=True, help="No live view and no plan (unless "
              "--confirm): stdout has only the run's outcome; its id and errors go to "
              "stderr.")
@research_dir_option
@handle_errors
def run(topic: str | None, topic_file: Path | None, exit_code: bool, confirm: bool,
        quiet: bool, research_dir: Path | None, **given: Any) -> None:
    """Research TOPIC with a council (as deep as --depth asks) and write
    research/<id>/final-report.md."""
    if exit_code and given.get("since") is None:
        raise UsageError("--exit-code needs --since: it says whether anything changed")
    # With --since and no topic, the earlier run's (prepare reads it).
    text = (None if topic is None and topic_file is None and given.get("since") is not None
            else read_topic(topic, topic_file))  # checked, naming where it came from
    base = _research_dir(research_dir)
    prepared = prepare.prepare(prepare.Request(text, "the command line", given, base))
    opts = prepared.options
    # This process is the run's supervisor: it holds one of the machine's run slots from
    # before the run exists (a refused run leaves no folder) to its end.
    with supervisor.reserve(base=base) as slot:
        for line in prepared.notes:
            click.echo(f"council: {line}", err=True)
        for line in prepared.plan if confirm or not quiet else ():  # --quiet: the outcome only
            click.echo(line)
        if confirm and not _confirmed("Start the council?"):
            click.echo("not started")  # the user's answer, not an error: exit 0
            return
        ws = prepare.start(prepared, base)
        # --quiet: stdout is the outcome alone (a script reads it); the run's id on stderr.
        click.echo(f"council run {ws.id}: {graph.counted(len(opts.seats), 'agent')} "
                   f"({', '.join(s.name for s in opts.seats)}), profile {opts.profile}",
                   err=quiet)
        click.echo(f"follow it with: tail -f {ws.root / 'progress.log'}", err=quiet)
        _finish(_supervise(ws, quiet, base, slot), base, exit_code)


@main.command(epilog=examples('council resume 20260301-101500-a1b2c3',
                              'council resume --rebuild 20260301-101500-a1b2c3'))
@click.argument("run_id")
@click.option("--rebuild", is_flag=True,
              help="The run's state.yaml is corrupt or gone: rebuild it from the run's "
                   "reports (the corrupt file is kept), then resume.")
@click.option("--quiet", "-q", is_flag=True, help="No live view on the terminal: only the "
              "plain lines printed when the output is piped.")
@research_dir_option
@handle_errors
def resume(run_id: str, rebuild: bool, quiet: bool, research_dir: Path | None) -> None:
    """Continue run RUN_ID after a crash, kill or cancel: finished work is kept, interrupted
    agents continue their sessions, then the remaining phases run."""
    base = _research_dir(research_dir)
    ws = find_run(run_id, base, require_state=not rebuild, act="resume")
    if rebuild:
        from council.run.recovery import rebuild as rebuild_state

        click.echo(rebuild_state(ws))
    else:
        readable(ws.root)
    click.echo(f"resuming council run {ws.id}")
    click.echo(f"follow it with: tail -f {ws.root / 'progress.log'}")
    _finish(_supervise(ws, quiet, base), base)


@main.command(epilog=examples('council cancel', 'council cancel 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def cancel(run_id: str | None, research_dir: Path | None) -> None:
    """Stop a running council (the active run by default; with several, name one); its
    files are kept."""
    ws = pick(run_id, _research_dir(research_dir))
    click.echo(cancel_run(ws))


@main.command(epilog=examples('council adopt 20260301-101500-a1b2c3'))
@click.argument("run_id")
@click.option("--yes", is_flag=True, help="Adopt without asking (for scripts you write).")
@research_dir_option
@handle_errors
def adopt(run_id: str, yes: bool, research_dir: Path | None) -> None:
    """Take over run RUN_ID, a run folder council did not make on this machine (one you
    moved or restored yourself), after seeing what its seats would run."""
    from council.run.recovery import adopt as adopt_run
    from council.run.recovery import adoption
    from council.store import provenance

    ws = find_run(run_id, _research_dir(research_dir))
    if provenance.is_own(ws.root):
        click.echo(f"run {ws.id} is already council's own; nothing to adopt")
        return
    _person_at_terminal(yes, "council adopt asks a person: run it in a terminal, where you "
                        "can review the run and answer; nothing was adopted")
    click.echo("\n".join(adoption(ws)))
    if not yes and not _confirmed(f"A resume starts these CLIs as recorded. Adopt run {ws.id}?"):
        raise UsageError("not adopted")
    click.echo(adopt_run(ws))


def _person_at_terminal(yes: bool, refusal: str) -> None:
    """A question only a person may answer (trust a config, adopt a run) is asked at a
    terminal or refused with `refusal`: a model's tool call has no terminal. `--yes` is for
    the user's own scripts; the refusal does not mention it, so a model is not told it.
    Neither passes under an agent: trust.ask_a_person."""
    from council.trust import ask_a_person

    ask_a_person(yes, refusal)


@main.command("trust", epilog=examples('council trust',
                                       'council trust --list',
                                       'council trust --revoke team/council.yaml'))
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--list", "show", is_flag=True, help="List the trusted files and whether each "
              "still holds what was trusted.")
@click.option("--revoke", is_flag=True, help="Stop trusting FILE.")
@click.option("--yes", is_flag=True, help="Trust without asking, for a script of your own "
              "(what it trusts is still printed).")
@handle_errors
def trust_cmd(file: Path | None, show: bool, revoke: bool, yes: bool) -> None:
    """Trust a project's config file (default ./council.yaml): council obeys a project's
    council.yaml only once trusted, and again only after each change to it or to a file its
    extra_args name. It shows what the file sets and asks, in a terminal: a person trusts a
    config, not a model that can run commands (so no terminal, no trust)."""
    from council.config import review_file, revoke_file, trust_reviewed, trusted_files

    if show:
        if file is not None or revoke or yes:
            raise UsageError("--list takes no FILE, no --revoke and no --yes")
        click.echo("\n".join(trusted_files()) or "no trusted config files")
        return
    path = file or Path("council.yaml")
    if revoke:
        if yes:
            raise UsageError("--revoke asks nothing: drop --yes")
        click.echo(revoke_file(path))
        return
    _person_at_terminal(yes, "council trust asks a person: run it in a terminal, where you "
                        "can review the file and answer; nothing was trusted")
    review = review_file(path)
    click.echo("\n".join(review.lines))
    if not yes and not _confirmed("Trust it?"):
        raise UsageError("not trusted")
    click.echo(trust_reviewed(review))


class _EvalCommand(click.Command):
    """`council eval`: without its extra, the line that installs it comes before anything
    about its options (`--help` still shows them)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing and not {"--help", "-h"} & set(args):
            from council.evaluation import require_inspect

            try:
                require_inspect()
            except CouncilError as exc:
                _fail(exc)
        return super().parse_args(ctx, args)


@main.command("eval", cls=_EvalCommand, epilog=examples(
    "council eval sample --config single:claude --config council \\",
    "    --judge cli:claude --log-dir eval-logs --test --limit 2"))
@click.argument("questions")
@click.option("--config", "configs", multiple=True, required=True, metavar="C",
              help="A configuration to evaluate (repeat to compare): single:<seat>, "
                   "council:three, council:quick|standard|deep, council (deep), optionally "
                   "@FILE (a council config), or a FILE.yaml.")
@click.option("--judge", required=True, metavar="J",
              help="The one judge: cli:claude, cli:codex, cli:gemini (your CLI login) or an "
                   "Inspect model (anthropic/…, openai/…, google/…).")
@click.option("--log-dir", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Inspect's logs, the council runs and summary.md/summary.html go here; "
                   "the same command again goes on where it stopped.")
@click.option("--max-runs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Council runs at once.")
@click.option("--per-vendor", type=click.IntRange(min=1), default=4, show_default=True,
              help="CLI processes of one vendor at once on this machine, across runs and "
                   "evaluations.")
@click.option("--test", is_flag=True, help="Each run with --test (cheap models, 2 iterations).")
@click.option("--max-cost", type=_click_type(options.OPTION["max_cost"]),
              help="Budget of each council run in USD (council run --max-cost).")
@click.option("--max-citations", type=click.IntRange(min=0), default=5, show_default=True,
              help="Citations checked per report.")
@click.option("--language", help="Only the questions in this language (e.g. en).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--confirm", is_flag=True, help="Show the plan and ask before spending.")
@click.option("--shard", metavar="I/N",
              help="Run only worker I of N's share, into the --log-dir all N share; the same "
                   "command without --shard closes the set.")
@click.option("--judge-batch", is_flag=True,
              help="An Inspect model judge answers in its provider's batch mode (cheaper, "
                   "slower); not a cli: judge.")
@handle_errors
def eval_cmd(questions: str, configs: tuple[str, ...], judge: str, log_dir: Path,
             max_runs: int, per_vendor: int, test: bool, max_cost: float | None,
             max_citations: int, language: str | None, limit: int | None,
             confirm: bool, shard: str | None, judge_batch: bool) -> None:
    """Answer QUESTIONS (sample, a JSONL file, drb:FOLDER, drb2:FILE) with each configuration
    and compare them: rubric score, citation accuracy and cost (docs/eval.md). Needs the
    [eval] extra (Inspect AI): pip install 'council[eval]'."""
    from council.evaluation import inspect_installed

    with inspect_installed():  # Inspect is the [eval] extra: only this command loads it
        from council.evaluation import command, shards

    request = command.EvalRequest(questions, configs, judge, log_dir.absolute(), max_runs,
                                  per_vendor, test, max_cost, max_citations, language, limit,
                                  shards.parse(shard) if shard is not None else None,
                                  judge_batch)
    sys.exit(command.main(request, click.echo, lambda line: click.echo(line, err=True),
                          (lambda: _confirmed("Start the evaluation?")) if confirm else None))


def _confirmed(question: str) -> bool:
    """A yes; end of input (a closed stdin, a script) counts as a no."""
    try:
        return click.confirm(question, default=False)
    except click.Abort:
        click.echo("", err=True)
        return False


def _page(ws: Workspace, state: RunState) -> Path | None:
    """The run's page at its end (the supervisor's `publish`): imported only then, since
    markdown and the sanitiser are not needed to start a run."""
    from council.views import page

    return page.publish(ws, state)


def _supervise(ws: Workspace, quiet: bool, base: Path,
               slot: supervisor.RunSlot | None = None) -> supervisor.RunResult:
    """Run the run in `ws` here, to its end. On a terminal (and not `--quiet`) the run's
    live table (views/watch.py, as `council watch` draws it) stays in place while it runs;
    piped, nothing is printed until the end. A Ctrl-C before the supervisor's own signal
    handling starts (or after it ends) is a KeyboardInterrupt: the run is left to resume."""
    try:
        if quiet or not _on_terminal():
            return supervisor.execute(ws, _page, slot=slot)
        from council.views.watch import showing  # rich's live display: only on a terminal

        with showing(ws):
            return supervisor.execute(ws, _page, slot=slot)
    except KeyboardInterrupt:
        click.echo(f"council: interrupted; {_resume_hint(ws, base)}", err=True)
        sys.exit(supervisor.SIGNAL_EXIT[signal.SIGINT])


def _resume_hint(ws: Workspace, base: Path) -> str:
    """How to go on with a run that was stopped: the command, with the research folder when
    it is not the one `council resume` finds by default."""
    where = "" if base == paths.research_dir() else f" --research-dir {shlex.quote(str(base))}"
    return f"continue it with: council resume {ws.id}{where}"


# `--exit-code`: the run failed, or its claims could not be compared with the earlier run's
# (changes.compared): neither may read as "no change" (0) or "changed" (1).
EXIT_UNKNOWN = 3


def _finish(result: supervisor.RunResult, base: Path, exit_code: bool = False) -> None:
    """Print how the run ended and exit with its code. A --since run that changed nothing
    prints one line; with `exit_code` a changed one exits 1 (changes.json's `changed`), and
    one that failed or could not compare exits EXIT_UNKNOWN."""
    found = changes.load(result.ws.root) if result.exit_code == 0 else None
    if found is not None and not changes.compared(found):
        click.echo(f"council: {changes.headline(found)}", err=True)
        if exit_code:
            sys.exit(EXIT_UNKNOWN)
        found = None  # the run itself finished: say where its report is
    elif found is not None and not found.get("changed"):
        click.echo(changes.headline(found))
        sys.exit(0)
    if result.exit_code == 0:
        if found is not None:
            click.echo(changes.headline(found))
        click.echo(f"final report: {result.message}")
        page = result.ws.root / "report.html"
        if page.is_file():
            click.echo(f"report page: {page} (council open {result.ws.id})")
    elif result.exit_code in supervisor.SIGNAL_EXIT.values():  # cancelled: resumable
        click.echo(f"council: {result.message}; {_resume_hint(result.ws, base)}", err=True)
    else:
        click.echo(f"council: {result.message}", err=True)
    if exit_code and result.exit_code == supervisor.EXIT_FAILED:
        sys.exit(EXIT_UNKNOWN)
    sys.exit(1 if exit_code and found is not None else result.exit_code)


@main.command("list", epilog=examples('council list', "council list --json | jq '.[-1].id'"))
@click.option("--json", "as_json", is_flag=True,
              help="Print the runs as a JSON array, oldest first, one object per run with "
                   f"the keys {', '.join(status.LIST_JSON_KEYS)} (null when unknown; a run "
                   "whose state cannot be read has only id, own and error).")
@research_dir_option
@handle_errors
def list_cmd(as_json: bool, research_dir: Path | None) -> None:
    """List the runs in the research folder: id, phase, start, duration, cost, topic."""
    runs = list_runs(_research_dir(research_dir))
    if not runs and not as_json:
        click.echo("no council runs yet")
        return
    from council.store import provenance

    listed, unreadable, rows = [], [], []
    known = provenance.load()
    foreign = [ws.id for ws in runs if not provenance.own(ws.root, known)]
    for ws in runs:
        try:
            listed.append((load_state(ws.root), ws))
            rows.append(status.run_json(listed[-1][0], ws, ws.id not in foreign))
        except CouncilError as exc:
            unreadable.append(f"{ws.id}  unreadable: {exc}")
            rows.append(status.run_json(None, ws, ws.id not in foreign, str(exc)))
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if listed:
        _show(status.runs_table(listed, styled=_on_terminal()))
    for line in unreadable:  # after the table: a run whose state cannot be read, and why
        click.echo(line)
    if foreign:
        click.echo(f"not made by council on this machine (read only; `council adopt ID` "
                   f"after review): {', '.join(foreign)}")


@main.command(epilog=examples(
    "council doctor", "council doctor --live",
    "council doctor --json | jq '.clis[] | select(.ready | not) | .problem'"))
@click.option("--live", is_flag=True,
              help="Also send each ready CLI one tiny prompt and time its answer (costs a "
                   "few tokens).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the findings as one JSON object: ok (an agent can run here), clis "
                   "(one object each: cli, path, version, tested, tested_version, "
                   "credentials, ready, problem, live), hosts (host, state, ready, fix) and "
                   "environment (each agent: the variable names its CLI is given), "
                   "endpoints (each self-hosted agent: agent, cli, endpoint, model, window, "
                   "window_set, problems) and search (each agent: vendor search, MCP server "
                   "NAME, or no web search). Same exit code.")
@handle_errors
def doctor(live: bool, as_json: bool) -> None:
    """Check each CLI: on PATH, version, tested with council, where its login comes from,
    and whether council is set up in each host (`council setup HOST` fixes that)."""
    from council.readiness.doctor import run_doctor

    if as_json:
        from council.readiness.doctor import as_json as doctor_json

        found, code = doctor_json(live)
        click.echo(json.dumps(found, indent=2))
        sys.exit(code)
    rows, code = run_doctor(live)
    for line in rows:
        click.echo(line)
    if code:
        click.echo("council: error: no agent can run here: install a CLI and log in to it, "
                   "or start the server of a self-hosted seat, as the lines above say",
                   err=True)
    sys.exit(code)


@main.command("setup", epilog=examples('council setup claude', 'council setup gemini'))
@click.argument("host", type=click.Choice(["claude", "gemini", "codex"]))
@handle_errors
def setup_cmd(host: str) -> None:
    """Install council into HOST (Claude Code, Gemini CLI or Codex) from this install's own
    files, with HOST's own commands; run again, it changes nothing. `council doctor` shows
    each host's setup."""
    from council.readiness.install import setup_host

    for line in setup_host(host):
        click.echo(line)


@main.command("watch", epilog=examples('council watch', 'council watch 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def watch_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Follow a run live (the latest by default) until it ends."""
    from council.views.watch import watch  # rich: only for this command

    ws = find_run(run_id, _research_dir(research_dir))
    state = watch(ws, click.echo)
    shown = status.shown_phase(state, ws)
    if ws.final_report.is_file() and state.phase == RunEnd.DONE:
        click.echo(f"final report: {ws.final_report}")
    else:
        click.echo(f"run {ws.id} ended: {shown}" + (f" ({state.error})" if state.error else ""))


@main.command("ask", epilog=examples(
    'council ask "Which of the sources is the most recent?"',
    'council ask 20260301-101500-a1b2c3 "Does the report cover Europe?"',
    'council ask --agent codex --research "What changed since then?"'))
@click.argument("words", nargs=-1, required=True, metavar="[ID] QUESTION")
@click.option("--agent", help="The seat of the run that answers (default: its synthesizer).")
@click.option("--research", is_flag=True,
              help="Let it search the web for one bounded turn; sources it adds are marked new.")
@research_dir_option
@handle_errors
def ask_cmd(words: tuple[str, ...], agent: str | None, research: bool,
            research_dir: Path | None) -> None:
    """Ask a follow-up question about a finished run (the latest by default), answered by one
    of its agents from the run's own evidence; the answer goes to research/<id>/asks/."""
    from council.run import ask

    if len(words) > 2:
        raise UsageError("give the question as one argument, in quotes (`council ask [ID] "
                         "\"QUESTION\"`)")
    run_id, question = (None, words[0]) if len(words) == 1 else words
    prepared = ask.prepare(run_id, question, agent, research, _research_dir(research_dir))
    click.echo(f"asking {prepared.seat.name} ({prepared.seat.cli}) about run "
               f"{prepared.ws.id}" + (", with a research turn" if research else ""), err=True)
    done = ask.ask(prepared, publish=_refresh_page)
    found = done.found
    click.echo(f"{len(found.cited)} of the run's sources cited, {len(found.claims)} claims "
               "named" + (f", {len(found.flagged)} URLs not among the run's sources"
                          if found.flagged else "")
               + (f", {len(found.outside)} new sources" if found.research and found.outside
                  else ""), err=True)
    click.echo(str(done.path))


def _refresh_page(ws: Workspace) -> None:
    """Rebuild report.html after an ask, when the run has one: its follow-ups section."""
    from council.views import page

    if (ws.root / page.PAGE).is_file():
        _page(ws, readable(ws.root))  # as at a run's end: a page that fails loses no answer


@main.command("report", epilog=examples('council report', 'council report 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def report_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Rebuild a run's report.html from its files (the latest run by default), for any run,
    including one made before council wrote pages."""
    from council.views import page

    ws = find_run(run_id, _research_dir(research_dir), act="write a page into")
    click.echo(page.build(ws, readable(ws.root)))


@main.command("open", epilog=examples('council open', 'council open 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def open_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Open a run's report.html in the default browser (the latest run by default; the page
    is built first if the run has none). Without a browser, print the page's path."""
    import webbrowser

    from council.views import page

    ws = find_run(run_id, _research_dir(research_dir), act="open a page of")
    path = ws.root / page.PAGE
    if not path.is_file():
        path = page.build(ws, readable(ws.root))
    try:
        opened = webbrowser.get().open(path.resolve().as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        click.echo(f"no browser found; the page is {path}")
        return
    click.echo(f"opened {path}")


@main.command("mcp", epilog=examples('claude mcp add council -- council mcp',
                                     'gemini mcp add council council mcp'))
@research_dir_option
@handle_errors
def mcp_cmd(research_dir: Path | None) -> None:
    """Serve council to MCP clients (Claude Desktop, Cursor, VS Code, Claude Code, Gemini
    CLI, Codex) on stdin/stdout: start research, follow it, read its reports."""
    from council.hosts.mcpserver import serve  # the MCP SDK: only for this command

    if sys.stdin.isatty():
        click.echo("council mcp speaks the Model Context Protocol on stdin/stdout: register "
                   "it with an MCP client (README, \"From any MCP client\"); Ctrl-C ends it",
                   err=True)
    serve(_research_dir(research_dir))


@main.command("status", epilog=examples(
    "council status", "council status --json 20260301-101500-a1b2c3 | jq .phase"))
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@research_dir_option
@handle_errors
def status_cmd(run_id: str | None, as_json: bool, research_dir: Path | None) -> None:
    """Show a run's phase and each agent's progress (the latest run by default)."""
    from council.store import provenance

    ws = find_run(run_id, _research_dir(research_dir))
    state = readable(ws.root)
    own = provenance.is_own(ws.root)
    if as_json:
        click.echo(json.dumps({**status.as_json(state, ws), "own": own}, indent=2))
        return
    _show(status.status_view(state, ws, styled=_on_terminal()))
    if not own:
        click.echo(f"{ws.root} was not made by council on this machine: shown read only; "
                   "council will not resume, cancel or write into it")


PIPED_WIDTH = 1000  # piped output is not wrapped: one line per row, for grep and cut


def _on_terminal() -> bool:
    return sys.stdout.isatty()


def _show(*renderables: RenderableType) -> None:
    """Print rich renderables (status.py's tables): styled on a terminal; piped (or in
    tests), plain text with no escape codes, not wrapped, no trailing spaces."""
    from rich.console import Console

    if _on_terminal():
        Console(highlight=False, markup=False, emoji=False).print(*renderables)
        return
    out = io.StringIO()
    Console(file=out, width=PIPED_WIDTH, force_terminal=False, no_color=True,
            color_system=None, highlight=False, markup=False, emoji=False,
            ).print(*renderables)
    click.echo("\n".join(line.rstrip() for line in out.getvalue().splitlines()))


def entry() -> None:
    """The `council` command: click's own usage errors in council's one style, `council:
    error: …` and one hint line, exit 2 (click's is a four-line block)."""
    try:
        main(prog_name="council", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # plain `council`: the help
        click.echo(exc.format_message(), err=True)
        sys.exit(2)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "council"
        click.echo(f"council: error: {exc.format_message()}", err=True)
        click.echo(f"hint: `{where} --help` lists what it takes", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("council: interrupted", err=True)
        sys.exit(130)
