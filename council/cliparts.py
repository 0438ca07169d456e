"""The command line's parts that are not commands (cli.py has those): its one error handler,
`council run`'s declared options (options.py) as click options, the options and epilogs every
command shares, the question only a person answers, and how output reaches the terminal
(`echo`, `show`: text, never control, whatever a run's files or a CLI's error said). With
cli.py and clieval.py, the only modules that import click."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from council import options, paths
from council.errors import CouncilError, UsageError
from council.run import crash
from council.store.terminal import safe

if TYPE_CHECKING:
    from rich.console import RenderableType

    from council.run.supervisor import RunResult, RunSlot
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
            fail(exc)
        except KeyboardInterrupt:
            echo("council: interrupted", err=True)
            sys.exit(130)
        except (click.ClickException, click.Abort):
            raise  # click prints these itself, in one line
        except Exception as exc:
            known = council_error(exc)
            if known is not None:
                fail(known)
            log = crash.write_log(exc, func.__name__)
            where = f"details in {log}" if log else "no crash log could be written"
            echo(f"council: internal error ({crash.summary(exc)}); {where}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def echo(message: object = "", err: bool = False) -> None:
    """The command line's one way to print a line: made terminal-safe (terminal.safe), so a
    topic, a review of a planted config or a CLI's error quoted in a message shows an escape
    sequence as `\\x1b…` instead of sending it to the user's terminal."""
    click.echo(safe(str(message)), err=err)


def fail(exc: CouncilError) -> NoReturn:
    echo(f"council: error: {exc}", err=True)
    sys.exit(exc.exit_code)


def council_error(exc: BaseException) -> CouncilError | None:
    """The CouncilError inside a task group's ExceptionGroup, when that is all it holds."""
    if isinstance(exc, CouncilError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        found = [council_error(e) for e in exc.exceptions]
        if found and all(found):
            return found[0]
    return None


def base_of(value: Path | None) -> Path:
    return value.absolute() if value else paths.research_dir()


research_dir_option = click.option(
    "--research-dir", type=click.Path(path_type=Path, file_okay=False),
    help="Folder holding the runs (default ./research, or $COUNCIL_RESEARCH_DIR).")


def examples(*lines: str) -> str:
    """A command's --help epilog: commands a user can copy, kept as written (click's `\\b`
    stops it rewrapping them). Every command has one (tests/test_cli.py)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def click_option(option: options.Option) -> Callable[[F], F]:
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
        kwargs["type"] = click_type(option, lifts=True)
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
    lifts = False  # `council run`'s: the word that lifts a limit (`--max-cost none`) is taken

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                self.option.read(value)
            except UsageError as exc:
                raise click.UsageError(str(exc), ctx) from None
            if self.option.lifts(value):  # Overrides reads it as None: no limit
                if self.lifts:
                    return options.NO_LIMIT
                raise click.UsageError(f"{self.option.flag} takes a number here, not "
                                       f"{value!r}", ctx)
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


def click_type(option: options.Option, lifts: bool = False) -> click.ParamType[Any]:
    """The click type of an option's kind: its bounds for --help, its check the
    declaration's; `lifts`: `none` lifts an optional limit (options.NO_LIMIT)."""
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
    made.lifts = lifts
    return made


class Choice(click.Choice):  # type: ignore[type-arg]
    """click's Choice, whose refusal of a word close to one of its values says which it
    probably meant (`council setup claud`), as options.Choice does for the run's options."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            hint = options.Choice(tuple(map(str, self.choices))).hint(value)
            if not hint:
                raise
            raise click.BadParameter(exc.message + hint, ctx, param) from None


def run_options(func: F) -> F:
    """`council run`'s options for the run, made from their declaration, in its order."""
    for option in reversed(options.given_on(options.CLI)):
        func = click_option(option)(func)
    return func


def person_at_terminal(yes: bool, refusal: str) -> None:
    """A question only a person may answer (trust a config, adopt a run) is asked at a
    terminal or refused with `refusal`: a model's tool call has no terminal. `--yes` is for
    the user's own scripts; the refusal does not mention it, so a model is not told it.
    Neither passes under an agent: trust.ask_a_person."""
    from council.trust import ask_a_person

    ask_a_person(yes, refusal)


def confirmed(question: str) -> bool:
    """A yes; end of input (a closed stdin, a script) counts as a no."""
    try:
        return click.confirm(question, default=False)
    except click.Abort:
        echo("", err=True)
        return False


def on_terminal() -> bool:
    return sys.stdout.isatty()


def show(*renderables: RenderableType) -> None:
    """Print rich renderables (status.py's tables): styled on a terminal; piped (or in
    tests), plain text with no escape codes, not wrapped, no trailing spaces."""
    if on_terminal():
        from rich.console import Console

        Console(highlight=False, markup=False, emoji=False).print(*renderables)
        return
    from council.views.status import plain

    echo(plain(*renderables))


def supervise(ws: Workspace, quiet: bool, base: Path,
               slot: RunSlot | None = None) -> RunResult:
    """Run the run in `ws` here, to its end. On a terminal (and not `--quiet`) the run's
    live table (views/watch.py, as `council watch` draws it) stays in place while it runs;
    piped, nothing is printed until the end. A Ctrl-C before the supervisor's own signal
    handling starts (or after it ends) is a KeyboardInterrupt: the run is left to resume."""
    from council.commands.report import publish
    from council.run import supervisor  # the run's machinery: only where a run runs

    try:
        if quiet or not on_terminal():
            return supervisor.execute(ws, publish, slot=slot)
        from council.views.watch import showing  # rich's live display: only on a terminal

        with showing(ws):
            return supervisor.execute(ws, publish, slot=slot)
    except KeyboardInterrupt:
        from council.commands.resume import hint

        echo(f"council: interrupted; {hint(ws, base)}", err=True)
        sys.exit(supervisor.SIGNAL_EXIT[signal.SIGINT])


def finish(result: RunResult, base: Path, exit_code: bool = False) -> NoReturn:
    """Print how the run ended and exit with its code (commands/outcome.py)."""
    from council.commands.outcome import outcome

    said = outcome(result, base, exit_code)
    for line in said.err:
        echo(line, err=True)
    for line in said.out:
        echo(line)
    sys.exit(said.code)
