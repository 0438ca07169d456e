"""The command line's one error handler (council/cli.py): no traceback ever reaches a user."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Council

from council import cli
from council.errors import RunNotFoundError
from council.readiness import preflight
from council.run import supervisor


def test_an_unexpected_error_is_one_line_and_a_crash_log_in_the_run(
        monkeypatch: pytest.MonkeyPatch, isolated: Path) -> None:
    def explode(ws: object, synthesise: bool = True,
                slot: object = None) -> supervisor.RunResult:
        raise RuntimeError("something council did not foresee\nsecond line")

    monkeypatch.setattr(supervisor, "execute", explode)
    monkeypatch.setattr(preflight, "prepare", lambda options, explicit: (options, []))
    result = CliRunner().invoke(cli.main, ["run", "--test", "q"])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("council: internal error (RuntimeError: something council did not "
                           "foresee); details in ")
    log = Path(line.rsplit("details in ", 1)[1])
    (run,) = [p for p in (isolated / "research").iterdir() if p.name[0].isdigit()]
    assert log.parent == run
    text = log.read_text()
    assert "Traceback (most recent call last)" in text
    assert "second line" in text


def test_a_council_error_inside_a_task_group_is_its_own_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def grouped(*_: object) -> None:
        raise ExceptionGroup("tasks", [RunNotFoundError("no run x in research")])

    from council.commands import cancel

    monkeypatch.setattr(cancel, "cancel", grouped)
    result = CliRunner().invoke(cli.main, ["cancel", "x"])
    assert (result.exit_code, result.stderr) == (2, "council: error: no run x in research\n")


@pytest.mark.parametrize(("args", "first", "hint"), [
    (("run", "--bogus", "q"), "council: error: No such option '--bogus'.",
     "hint: `council run --help` lists what it takes"),
    (("nosuch",), "council: error: No such command 'nosuch'.",
     "hint: `council --help` lists what it takes"),
    (("run", "--mode", "vibes", "q"), "council: error: --mode must be one of exploratory, "
     "compliance, decision",
     "hint: `council run --help` lists what it takes"),
    # Issue 43: `--depht` got a did-you-mean, `--depth quik` none.
    (("run", "--depth", "quik", "q"), "council: error: --depth must be one of quick, "
     "standard, deep (did you mean quick?)",
     "hint: `council run --help` lists what it takes"),
    (("setup", "claud"), "council: error: Invalid value for '{claude|gemini|codex}': 'claud' "
     "is not one of 'claude', 'gemini', 'codex'. (did you mean claude?)",
     "hint: `council setup --help` lists what it takes"),
])
def test_usage_errors_are_one_line_and_a_hint(council: Council, args: tuple[str, ...],
                                              first: str, hint: str) -> None:
    proc = council.run(*args)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [first, hint]


def test_end_of_input_at_the_confirm_is_a_no(council: Council) -> None:
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    assert proc.returncode == 0  # a no is an answer, not an error
    assert proc.stdout.splitlines()[-1].endswith("not started")
    assert "error" not in proc.stderr
    assert "Aborted" not in proc.stderr
    assert not council.fake_log()
    assert not council.research.exists()  # issue 43: a declined run makes no research/


def test_the_plan_names_the_default_spend_limit_and_how_to_change_or_lift_it(
        council: Council) -> None:
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    limits = next(line for line in proc.stdout.splitlines() if line.startswith("limits: "))
    assert "spend limit $10 (--max-cost N to change, --max-cost none to lift)" in limits
    proc = council.run("run", "--test", "--confirm", "--max-cost", "none", "q", input=b"")
    assert proc.returncode == 0, proc.stderr
    assert "limits: no spend limit (--max-cost N sets one)" in proc.stdout
    proc = council.run("run", "--test", "--confirm", "--max-cost", "2.5", "q", input=b"")
    assert "spend limit $2.5 (--max-cost N to change" in proc.stdout
    # `council eval`'s own --max-cost is a number: its runs' limit, not lifted there.
    proc = council.run("eval", "q.jsonl", "--max-cost", "none")
    assert proc.returncode == 2
    assert "--max-cost takes a number here, not 'none'" in proc.stderr


NO_SUCH = "20260301-101500-a1b2c3"


@pytest.mark.parametrize("args", [
    ("status", NO_SUCH), ("resume", NO_SUCH), ("ask", NO_SUCH, "Why?"),
    ("run", "--since", NO_SUCH), ("cancel", NO_SUCH), ("watch", NO_SUCH),
    ("report", NO_SUCH), ("adopt", NO_SUCH)])
def test_an_unknown_run_id_is_bad_input_with_every_command(council: Council,
                                                          args: tuple[str, ...]) -> None:
    """Issue 43: `status` and `resume` exited 1 for a run id that names no run, `ask` and
    `--since` 2 (README: 2 is bad input). One code everywhere."""
    council.research.mkdir()
    proc = council.run(*args)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("council: error: "), line
    assert f"no run {NO_SUCH} in " in line, line
    assert not council.fake_log()


PROJECT_CONFIG = (
    "agents:\n"
    "  claude: {cli: claude}\n"
    "  gemini: {cli: gemini, extra_args: ['--include-directories', '/']}\n"
    "  corp: {cli: codex, env: [GITHUB_TOKEN]}\n"
)


def test_an_untrusted_project_config_is_refused_before_anything_runs(
        council: Council) -> None:
    (council.root / "council.yaml").write_text(PROJECT_CONFIG)
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line == ("council: error: ./council.yaml is not trusted (it sets agents claude "
                    "(claude), gemini (gemini), corp (codex); extra_args "
                    '["--include-directories", "/"] for gemini; env [GITHUB_TOKEN] for corp): '
                    "review it, then run `council trust ./council.yaml`")
    assert proc.stdout == ""
    assert not council.research.exists()
    assert not council.fake_log()


def test_a_trusted_config_runs_and_the_plan_shows_what_it_sets(council: Council) -> None:
    (council.root / "council.yaml").write_text(PROJECT_CONFIG)
    proc = council.run("trust", "--yes")  # a script's; a person is asked (test_trust)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("./council.yaml (sha256 ")
    assert "env [GITHUB_TOKEN] for corp" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("trusted ./council.yaml (sha256 ")
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    assert proc.returncode == 0  # the confirm got no yes: not started
    plan = proc.stdout.splitlines()
    config = next(i for i, text in enumerate(plan) if text.startswith("config: "))
    assert plan[config].startswith("config: ./council.yaml (trusted with `council trust` on ")
    assert plan[config + 1:config + 3] == [
        '  gemini: extra_args ["--include-directories", "/"]', "  corp: env [GITHUB_TOKEN]"]
    listed = council.run("trust", "--list")
    assert listed.stdout.endswith("  unchanged\n")
    assert council.run("trust", "--revoke").stdout == "./council.yaml is no longer trusted\n"
    assert council.run("run", "--test", "q").returncode == 2
    assert not council.fake_log()


def test_the_plan_names_an_explicit_or_the_users_own_config(council: Council) -> None:
    (council.root / "council.yaml").write_text(PROJECT_CONFIG)  # neither trusted nor read
    (council.root / "mine.yaml").write_text(PROJECT_CONFIG)
    proc = council.run("run", "--test", "--confirm", "--config", "mine.yaml", "q", input=b"")
    assert "config: ./mine.yaml (named with --config)" in proc.stdout.splitlines()
    (council.root / "council.yaml").unlink()
    own = Path(council.env["COUNCIL_CONFIG_HOME"]) / "config.yaml"
    own.parent.mkdir(parents=True)
    own.write_text("max_cost: 2\n")
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    lines = proc.stdout.splitlines()
    assert "config: ./config/config.yaml (your own config file)" in lines
    assert "  no agent has extra_args or env" in lines
    own.unlink()
    proc = council.run("run", "--test", "--confirm", "q", input=b"")
    assert "config: no config file, test profile" in proc.stdout.splitlines()


@pytest.mark.parametrize("name", [None, *sorted(cli.main.commands)])
def test_every_help_shows_examples_that_the_command_accepts(name: str | None) -> None:
    """Each `--help` ends in examples a user can copy, and each one of council's parses: the
    arguments and options it names exist and take the values shown."""
    args = [name, "--help"] if name else ["--help"]
    result = CliRunner().invoke(cli.main, args, terminal_width=200)
    assert result.exit_code == 0
    assert "\n  Examples:\n" in result.output, f"council {name or ''} --help has no example"
    commands: list[str] = []
    for line in result.output.split("\n  Examples:\n", 1)[1].splitlines():
        if commands and commands[-1].endswith("\\"):  # a continued line
            commands[-1] = commands[-1][:-1] + line.strip()
        else:
            commands.append(line.strip())
    own = []
    for command in commands:
        words = shlex.split(command.split(" | ")[0])  # what a pipe gets is not council's
        if words[0] != "council":  # another program's, naming council: claude mcp add …
            words = words[len(words) - 1 - words[::-1].index("council"):]
        own.append(words[1:])
    assert own, "no example runs council itself"
    for argv in own:
        if name is not None:
            assert argv[0] == name, argv
        parser = cli.main.commands[argv[0]]
        with parser.make_context(f"council {argv[0]}", argv[1:]) as ctx:  # parses only
            assert ctx.command is parser


def test_the_readmes_shell_completion_lines_work(council: Council) -> None:
    """README's completion lines name the installed script's variable (pyproject's
    [project.scripts] name, upper-cased): each shell gets its script, and a completion of
    `council st` offers `status`."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    shells = re.findall(r"_COUNCIL_COMPLETE=(\w+)_source council", readme)
    assert sorted(shells) == ["bash", "fish", "zsh"]
    script = str(Path(sys.executable).parent / "council")
    for shell in shells:
        proc = subprocess.run([script], env={**council.env, "_COUNCIL_COMPLETE":
                                             f"{shell}_source"},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0
        assert "_council_completion" in proc.stdout
    proc = subprocess.run([script], env={**council.env, "_COUNCIL_COMPLETE": "bash_complete",
                                         "COMP_WORDS": "council st", "COMP_CWORD": "1"},
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["plain,status"]


def test_latest_is_taken_wherever_a_run_id_is(isolated: Path) -> None:
    """One resolver (find_run): `latest` names the run research/latest names, as `--since
    latest` does; adopting `latest` never reaches a foreign run (latest is always our own)."""
    import json

    from council.runoptions import RunOptions
    from council.store import provenance
    from council.store.state import RunState, create_state
    from council.store.workspace import create_workspace

    base = isolated / "research"
    ws = create_workspace(base)
    create_state(ws.root, RunState(id=ws.id, topic="ours", created_at="2026-11-27T10:00:00Z",
                                   options=RunOptions(seats=()), phase="done"))
    foreign = base / "29991231-235959-ffffff"  # the highest id, planted: not the latest
    foreign.mkdir()
    create_state(foreign, RunState(id=foreign.name, topic="planted", created_at="x",
                                   options=RunOptions(seats=())))
    runner = CliRunner()

    def council(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli.main, list(args), catch_exceptions=False)
        assert "is not a run id" not in result.output, args
        assert result.exit_code == code, (args, result.output)
        return result.output

    assert json.loads(council("status", "--json", "latest"))["id"] == ws.id
    assert str(ws.root / "report.html") in council("report", "latest")
    assert f"run {ws.id} has already ended" in council("cancel", "latest", code=1)
    assert f"resuming council run {ws.id}" in council("resume", "--quiet", "latest")
    assert f"run {ws.id} is already council's own" in council("adopt", "--yes", "latest")
    assert not provenance.is_own(foreign)
