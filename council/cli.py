"""The command line: each command parses its words, asks its question (council/commands/)
and renders the answer. Its parts that are not commands (the one error handler, the declared
options as click options, output) are cliparts.py's, `council eval` is clieval.py's: the
only modules that import click."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from council import __version__, cliparts, graph
from council.clieval import eval_cmd
from council.cliparts import (
    base_of,
    confirmed,
    echo,
    examples,
    finish,
    handle_errors,
    person_at_terminal,
    research_dir_option,
    run_options,
    show,
    supervise,
)
from council.commands.runs import LIST_JSON_KEYS
from council.errors import UsageError
from council.hosts import HOSTS
from council.topic import read_topic


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             epilog=examples('council doctor', 'council run --test "What is a CRDT?"',
                             'council status', 'council open'))
@click.version_option(__version__, prog_name="council")
def main() -> None:
    """A research council: claude, codex and gemini research a topic in parallel, read each
    other's reports, and one of them writes the final report."""


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
    from council.run import prepare, supervisor  # the run's machinery: only where a run runs

    if exit_code and given.get("since") is None:
        raise UsageError("--exit-code needs --since: it says whether anything changed")
    # With --since and no topic, the earlier run's (prepare reads it).
    text = (None if topic is None and topic_file is None and given.get("since") is not None
            else read_topic(topic, topic_file))  # checked, naming where it came from
    base = base_of(research_dir)
    prepared = prepare.prepare(prepare.Request(text, "the command line", given, base))
    opts = prepared.options
    # This process is the run's supervisor: it holds one of the machine's run slots from
    # before the run exists (a refused run leaves no folder) to its end.
    with supervisor.reserve(base=base) as slot:
        for line in prepared.notes:
            echo(f"council: {line}", err=True)
        for line in prepared.plan if confirm or not quiet else ():  # --quiet: the outcome only
            echo(line)
        if confirm and not confirmed("Start the council?"):
            echo("not started")  # the user's answer, not an error: exit 0
            return
        ws = prepare.start(prepared, base)
        # --quiet: stdout is the outcome alone (a script reads it); the run's id on stderr.
        echo(f"council run {ws.id}: {graph.counted(len(opts.seats), 'agent')} "
             f"({', '.join(s.name for s in opts.seats)}), profile {opts.profile}",
             err=quiet)
        echo(f"follow it with: tail -f {ws.root / 'progress.log'}", err=quiet)
        finish(supervise(ws, quiet, base, slot), base, exit_code)


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
    from council.commands.resume import resumable

    base = base_of(research_dir)
    found = resumable(run_id, rebuild, base)
    if found.rebuilt is not None:
        echo(found.rebuilt)
    echo(f"resuming council run {found.run_id}")
    echo(f"follow it with: tail -f {found.ws.root / 'progress.log'}")
    finish(supervise(found.ws, quiet, base), base)


@main.command(epilog=examples('council cancel', 'council cancel 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def cancel(run_id: str | None, research_dir: Path | None) -> None:
    """Stop a running council (the active run by default; with several, name one); its
    files are kept."""
    from council.commands.cancel import cancel as cancel_run

    echo(cancel_run(run_id, base_of(research_dir)).message)


@main.command(epilog=examples('council adopt 20260301-101500-a1b2c3'))
@click.argument("run_id")
@click.option("--yes", is_flag=True, help="Adopt without asking (for scripts you write).")
@research_dir_option
@handle_errors
def adopt(run_id: str, yes: bool, research_dir: Path | None) -> None:
    """Take over run RUN_ID, a run folder council did not make on this machine (one you
    moved or restored yourself), after seeing what its seats would run."""
    from council.commands.adopt import adopt as adopt_run
    from council.commands.adopt import adoption

    found = adoption(run_id, base_of(research_dir))
    if found.own:
        echo(f"run {found.run_id} is already council's own; nothing to adopt")
        return
    person_at_terminal(yes, "council adopt asks a person: run it in a terminal, where you "
                        "can review the run and answer; nothing was adopted")
    echo("\n".join(found.review()))
    if not yes and not confirmed(f"A resume starts these CLIs as recorded. Adopt run "
                                  f"{found.run_id}?"):
        raise UsageError("not adopted")
    echo(adopt_run(found))


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
        echo("\n".join(trusted_files()) or "no trusted config files")
        return
    path = file or Path("council.yaml")
    if revoke:
        if yes:
            raise UsageError("--revoke asks nothing: drop --yes")
        echo(revoke_file(path))
        return
    person_at_terminal(yes, "council trust asks a person: run it in a terminal, where you "
                        "can review the file and answer; nothing was trusted")
    review = review_file(path)
    echo("\n".join(review.lines))
    if not yes and not confirmed("Trust it?"):
        raise UsageError("not trusted")
    echo(trust_reviewed(review))


main.add_command(eval_cmd)


@main.command("list", epilog=examples('council list', "council list --json | jq '.[-1].id'"))
@click.option("--json", "as_json", is_flag=True,
              help="Print the runs as a JSON array, oldest first, one object per run with "
                   f"the keys {', '.join(LIST_JSON_KEYS)} (null when unknown; a run whose "
                   "state cannot be read has only id, own and error).")
@research_dir_option
@handle_errors
def list_cmd(as_json: bool, research_dir: Path | None) -> None:
    """List the runs in the research folder: id, phase, start, duration, cost, topic."""
    from council.commands import data
    from council.commands.runs import runs

    found = runs(base_of(research_dir))
    if as_json:
        echo(json.dumps([data(run) for run in found.runs], indent=2))
        return
    if not found.runs:
        echo("no council runs yet")
        return
    if found.readable:
        from council.views.status import runs_table

        show(runs_table(found.readable, styled=cliparts.on_terminal()))
    for line in found.unreadable:  # after the table: a run whose state cannot be read, and why
        echo(line)
    if found.foreign:
        echo(f"not made by council on this machine (read only; `council adopt ID` "
             f"after review): {', '.join(found.foreign)}")


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
                   "NAME, or no web search), credentials (each agent: cli, source, the "
                   "login file an API key overrides) and limits (each vendor limit recorded "
                   "on this machine: cli, credential, kind, until, message, met, run_id, "
                   "seat). Same exit code.")
@handle_errors
def doctor(live: bool, as_json: bool) -> None:
    """Check each CLI: on PATH, version, tested with council, where its login comes from,
    and whether council is set up in each host (`council setup HOST` fixes that)."""
    from council.commands.doctor import NO_AGENT, lines
    from council.commands.doctor import as_json as doctor_json
    from council.commands.doctor import doctor as find
    from council.hosts.setup import check_hosts

    found = find(check_hosts(), live)
    if as_json:
        echo(json.dumps(doctor_json(found), indent=2))
        sys.exit(found.code)
    for line in lines(found):
        echo(line)
    if found.code:
        echo(f"council: error: {NO_AGENT}", err=True)
    sys.exit(found.code)


@main.command("setup", epilog=examples('council setup claude', 'council setup gemini'))
@click.argument("host", type=cliparts.Choice(list(HOSTS)))
@handle_errors
def setup_cmd(host: str) -> None:
    """Install council into HOST (Claude Code, Gemini CLI or Codex) from this install's own
    files, with HOST's own commands; run again, it changes nothing. `council doctor` shows
    each host's setup."""
    from council.hosts.setup import setup_host

    for line in setup_host(host):
        echo(line)


@main.command("watch", epilog=examples('council watch', 'council watch 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def watch_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Follow a run live (the latest by default) until it ends."""
    from council.commands.status import end_line
    from council.store.workspace import find_run
    from council.views.watch import watch  # rich: only for this command

    ws = find_run(run_id, base_of(research_dir))
    echo(end_line(watch(ws, echo), ws))


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
    from council.commands.ask import answer, prepare, summary

    if len(words) > 2:
        raise UsageError("give the question as one argument, in quotes (`council ask [ID] "
                         "\"QUESTION\"`)")
    run_id, question = (None, words[0]) if len(words) == 1 else words
    prepared = prepare(run_id, question, agent, research, base_of(research_dir))
    echo(f"asking {prepared.seat.name} ({prepared.seat.cli}) about run "
         f"{prepared.ws.id}" + (", with a research turn" if research else ""), err=True)
    answered = answer(prepared)
    echo(summary(answered), err=True)
    echo(answered.answer_file)


@main.command("report", epilog=examples('council report', 'council report 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def report_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Rebuild a run's report.html from its files (the latest run by default), for any run,
    including one made before council wrote pages."""
    from council.commands.report import build

    echo(build(run_id, base_of(research_dir)))


@main.command("open", epilog=examples('council open', 'council open 20260301-101500-a1b2c3'))
@click.argument("run_id", required=False)
@research_dir_option
@handle_errors
def open_cmd(run_id: str | None, research_dir: Path | None) -> None:
    """Open a run's report.html in the default browser (the latest run by default; the page
    is built first if the run has none). Without a browser, print the page's path."""
    from council.commands.report import opened

    echo(opened(run_id, base_of(research_dir)))


@main.command("mcp", epilog=examples('claude mcp add council -- council mcp',
                                     'gemini mcp add council council mcp'))
@research_dir_option
@handle_errors
def mcp_cmd(research_dir: Path | None) -> None:
    """Serve council to MCP clients (Claude Desktop, Cursor, VS Code, Claude Code, Gemini
    CLI, Codex) on stdin/stdout: start research, follow it, read its reports."""
    from council.hosts.mcpserver import serve  # the MCP SDK: only for this command

    if sys.stdin.isatty():
        echo("council mcp speaks the Model Context Protocol on stdin/stdout: register "
             "it with an MCP client (README, \"From any MCP client\"); Ctrl-C ends it",
             err=True)
    serve(base_of(research_dir))


@main.command("status", epilog=examples(
    "council status", "council status --json 20260301-101500-a1b2c3 | jq .phase"))
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@research_dir_option
@handle_errors
def status_cmd(run_id: str | None, as_json: bool, research_dir: Path | None) -> None:
    """Show a run's phase and each agent's progress (the latest run by default)."""
    from council.commands import data
    from council.commands.status import status

    found = status(run_id, base_of(research_dir))
    if as_json:
        echo(json.dumps(data(found), indent=2))
        return
    from council.views.status import render

    show(render(found.overview, styled=cliparts.on_terminal()))
    if not found.own:
        echo(f"{found.paths.run_dir} was not made by council on this machine: shown "
             "read only; council will not resume, cancel or write into it")


def entry() -> None:
    """The `council` command: click's own usage errors in council's one style, `council:
    error: …` and one hint line, exit 2 (click's is a four-line block)."""
    try:
        main(prog_name="council", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # plain `council`: the help
        echo(exc.format_message(), err=True)
        sys.exit(2)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "council"
        echo(f"council: error: {exc.format_message()}", err=True)
        echo(f"hint: `{where} --help` lists what it takes", err=True)
        sys.exit(2)
    except click.Abort:
        echo("council: interrupted", err=True)
        sys.exit(130)
