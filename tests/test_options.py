"""Each run option is declared once (council/options.py): one default and one check each, and
click's options for `council run`, the config file's keys, the hosts' command grammar and the
options a run stores all match the declaration."""

from __future__ import annotations

import json
import os
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
import pytest

from council import cli, clis, options
from council.config import PROFILES, Overrides, load_options
from council.errors import ConfigError, UsageError
from council.hosts.flow import CommandArgs, check_request, grammar, parse_request
from council.options import CLI, CONFIG, HOST, OPTIONS, Option, PerProfile
from council.runoptions import FIELDS, RunOptions, Seat, built_in

ROOT = Path(__file__).parents[1]
# `council run`'s own options, which are not the run's: the topic, how to ask, where runs go.
COMMAND_ONLY = {"topic", "topic_file", "confirm", "research_dir", "quiet",  # quiet: display only
                "exit_code"}  # how the command exits, not how the run runs


def a_bad_value(option: Option) -> Any:
    """A value of the wrong type for the option's kind, as a YAML file could hold it."""
    return 7 if isinstance(option.kind, options.Text | options.Choice | options.File) else "soon"


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_every_option_has_one_default_and_one_check(option: Option) -> None:
    assert isinstance(option.kind, options.Number | options.Choice | options.Flag |
                      options.Text | options.Names | options.File | options.Domains |
                      options.SourceRules)
    assert option.help_text()
    assert "{" not in option.help_text()
    assert option.given <= {CLI, CONFIG, HOST}
    assert option.given or option in FIELDS, "an option no one gives is one the run keeps"
    for profile in PROFILES:
        default = option.default_for(profile)
        if default is None:
            assert option.optional, "None is no value of a required option"
        else:  # the default passes the option's own check, unchanged
            assert option.check(default, "x") == default
            assert type(option.check(default, "x")) is type(default)
    with pytest.raises(ConfigError, match=rf"^where {option.name} "):
        option.check(a_bad_value(option), f"where {option.name}")


def test_the_declared_profiles_are_the_profiles_of_seats() -> None:
    assert set(options.PROFILES) == set(PROFILES)
    assert isinstance(options.OPTION["verify"].default, PerProfile)


def test_the_built_in_council_is_made_of_the_clis_facts() -> None:
    """Each CLI's built-in seat is its facts entry's (clis.Cli.profiles), so a new CLI joins
    the built-in council there; one without a profile has no seat in it."""
    pinned = {
        "production": (
            Seat("claude", "claude", model="opus", effort="high", max_iterations=10),
            Seat("codex", "codex", model="gpt-5.5", effort="high", max_iterations=10),
            Seat("gemini", "gemini", model="pro", max_iterations=10)),
        "test": (
            Seat("claude", "claude", model="haiku", effort="low", max_iterations=2),
            Seat("codex", "codex", model="gpt-5.5", effort="low", max_iterations=2),
            Seat("gemini", "gemini", model="flash-lite", max_iterations=2)),
    }
    assert pinned == PROFILES

    def toy(name: str, **profiles: tuple[str | None, str | None]) -> clis.Cli:
        return clis.Cli(name, npm=name, login="", config_folder=f".{name}", login_file="x",
                        keys=(), prefixes=(), request_bytes=1, min_window=1, profiles=profiles)

    made = built_in({**clis.REGISTRY, "toy": toy("toy", production=("big", None),
                                                 test=("small", "low")),
                     "quiet": toy("quiet")})
    assert made == {"production": (*PROFILES["production"],
                                   Seat("toy", "toy", model="big", max_iterations=10)),
                    "test": (*PROFILES["test"],
                             Seat("toy", "toy", model="small", effort="low", max_iterations=2))}


def test_run_options_fields_are_the_declared_ones_with_their_defaults() -> None:
    declared = {option.name: option for option in FIELDS}
    ours = {f.name: f for f in fields(RunOptions) if f.name != "seats"}
    assert set(ours) == set(declared)
    for name, field in ours.items():
        assert field.default == declared[name].default_for("production"), name


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_loader_gives_the_declared_default(profile: str) -> None:
    """Defaults once disagreed: verify was True in RunOptions and off in load_options for the
    test profile. Now the config loader and the state's reader both take the declaration's."""
    loaded = load_options(Overrides(test=profile == "test"))
    stored = RunOptions.from_dict({"seats": [], "profile": profile})
    for option in FIELDS:
        expected = profile if option.name == "profile" else option.default_for(profile)
        assert getattr(loaded, option.name) == expected, option.name
        # A state written before the option existed reads as what that run did (`older`).
        assert getattr(stored, option.name) == (
            expected if option.older is None else option.older), option.name


def test_a_run_stored_before_depth_existed_reads_as_deep() -> None:
    """Runs made before --depth ran the whole graph: resuming one must not drop its
    antagonist or gap fill because the new default is standard."""
    old = RunOptions.from_dict({"seats": [], "profile": "production"})
    assert old.depth == "deep"
    assert RunOptions(seats=()).depth == "standard"
    assert load_options(Overrides()).depth == "standard"


@pytest.mark.parametrize("option", FIELDS, ids=lambda o: o.name)
def test_a_stored_option_is_checked(option: Option) -> None:
    """A run's state is read back through the same checks (timeout, max_cost, idle_timeout
    included: they were passed through unchecked)."""
    with pytest.raises(ConfigError, match=rf"^options: {option.name} "):
        RunOptions.from_dict({"seats": [], option.name: a_bad_value(option)})


def test_a_stored_option_keeps_its_type_and_an_unknown_key_is_left() -> None:
    stored = RunOptions.from_dict({"seats": [], "timeout": 60, "idle_timeout": None,
                                   "from_a_newer_council": 1})
    assert (stored.timeout, stored.idle_timeout) == (60.0, None)
    assert isinstance(stored.timeout, float)
    for bad in ({"seats": "claude"}, {"seats": [], "timeout": float("nan")},
                {"seats": [], "max_cost": 0}, {"seats": [], "max_tokens": True}):
        with pytest.raises(ConfigError, match=r"^options"):
            RunOptions.from_dict(bad)


@pytest.mark.parametrize("option", options.given_on(CONFIG), ids=lambda o: o.name)
def test_a_config_file_checks_every_key(option: Option, tmp_path: Path) -> None:
    (tmp_path / "council.yaml").write_text(f"{option.name}: {a_bad_value(option)}\n")
    with pytest.raises(ConfigError, match=rf"council.yaml: {option.name} "):
        load_options(Overrides())


def test_the_config_files_keys_are_the_declared_ones_and_the_seats(tmp_path: Path) -> None:
    (tmp_path / "council.yaml").write_text("colour: red\n")
    with pytest.raises(ConfigError) as info:
        load_options(Overrides())
    known = re.search(r"\(known: (.*)\)$", str(info.value))
    assert known is not None
    declared = {option.name for option in options.given_on(CONFIG)}
    assert known.group(1).split(", ") == sorted(declared | {"agents"})


def test_council_runs_click_options_are_the_declared_ones() -> None:
    params = {p.name: p for p in cli.run.params if isinstance(p, click.Option)}
    declared = {option.name: option for option in options.given_on(CLI)}
    assert set(params) - COMMAND_ONLY == set(declared)
    for name, option in declared.items():
        param = params[name]
        assert [*param.opts, *param.secondary_opts] == list(option.flags)
        assert param.help == option.help_text()
        kind = option.kind
        if isinstance(kind, options.Flag):
            assert param.is_flag
        elif isinstance(kind, options.Choice):
            assert isinstance(param.type, click.Choice)
            assert tuple(param.type.choices) == kind.values
        elif isinstance(kind, options.Number):
            assert isinstance(param.type, click.IntRange if kind.whole else click.FloatRange)
            assert (param.type.min, param.type.min_open) == (kind.minimum, kind.above)
    # `council resume` takes none: a run resumes with the options it stored.
    assert not {p.name for p in cli.resume.params} & set(options.OPTION)


def test_the_hosts_grammar_is_the_declared_one() -> None:
    flags, valued = grammar()
    host = options.given_on(HOST)
    assert {name for name, _ in flags.values()} | set(valued.values()) == {
        option.name for option in host}
    every = " ".join(f"{option.flag} 1" if not isinstance(option.kind, options.Flag)
                     else option.flag for option in host)
    assert set(parse_request(f"{every} q").given()) == {option.name for option in host}
    with pytest.raises(AttributeError):
        CommandArgs("q").colour  # noqa: B018 (an option no host command takes)
    # A host's command takes `council run`'s options, a few of them.
    assert {option.name for option in host} <= {option.name for option in
                                                 options.given_on(CLI)}
    # The command's hint in Claude Code names each one.
    hint = re.search(r"^argument-hint: (.*)$",
                     (ROOT / "commands" / "deep-research.md").read_text(), re.M)
    assert hint is not None
    for option in host:
        assert any(f"[{flag}" in hint.group(1) for flag in option.flags), option.name


@pytest.mark.parametrize(("args", "error"), [
    ("--max-parallel two q", "--max-parallel takes a whole number, not 'two'"),
    ("--max-parallel 0 q", "--max-parallel must be a whole number of CLI processes, at "
                           "least 1"),
    ("--agents , q", "--agents needs at least one agent name"),
    ("--debate loud q", "--debate must be auto, force or off"),
    ("--mode vibes q", "--mode must be one of exploratory, compliance, decision"),
])
def test_a_hosts_words_are_read_and_checked_as_declared(args: str, error: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(error)}$"):
        check_request(args)


def out_of_bounds(option: Option) -> Any:
    """A value of the option's own type that its check refuses: under a number's minimum, a
    word not among a choice's, an empty text."""
    kind = option.kind
    if isinstance(kind, options.Number):
        low = int(kind.minimum) if kind.whole else kind.minimum
        return low if kind.above else low - 1
    if isinstance(kind, options.Choice):
        return "vibes"
    if isinstance(kind, options.Text):
        return ""
    raise AssertionError(f"no out-of-bounds value for {option.name}'s kind: add one")


VALUED_EVERYWHERE = [option for option in OPTIONS if {CLI, CONFIG} <= option.given
                     and not isinstance(option.kind, options.Flag)]


@pytest.mark.parametrize("option", VALUED_EVERYWHERE, ids=lambda o: o.name)
def test_a_bad_value_is_refused_in_the_same_words_on_every_surface(option: Option) -> None:
    """Issue 32: `council run`, the config file, a host's command and an MCP client give the
    same reason for the same bad value, each naming the option its own way."""
    reasons = refusals(option, out_of_bounds(option))
    assert len(set(reasons.values())) == 1, reasons


NUMBERS = [option for option in VALUED_EVERYWHERE if isinstance(option.kind, options.Number)]


@pytest.mark.parametrize("option", NUMBERS, ids=lambda o: o.name)
def test_a_word_that_is_no_number_is_refused_in_the_same_words_on_every_surface(
        option: Option) -> None:
    kind = option.kind
    assert isinstance(kind, options.Number)
    reasons = refusals(option, "abc")
    assert set(reasons.values()) == {
        f"takes {'a whole number' if kind.whole else 'a number'}, not 'abc'"}, reasons


def refusals(option: Option, value: Any) -> dict[str, str]:
    """Each surface's reason for refusing `value` for `option`, without the option's name."""
    from council.hosts import mcptools

    reasons: dict[str, str] = {}
    with pytest.raises(click.UsageError) as refused:  # click parses; nothing runs
        cli.run.make_context("run", [option.flag, str(value), "q"])
    line = refused.value.format_message()
    assert line.startswith(f"{option.flag} "), line
    reasons["council run"] = line.removeprefix(f"{option.flag} ")

    config = Path(os.environ["COUNCIL_CONFIG_HOME"]) / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"{option.name}: {json.dumps(value)}\n")
    with pytest.raises(ConfigError) as refused_config:
        load_options(Overrides())
    where = f"{config}: {option.name} "
    assert str(refused_config.value).startswith(where), refused_config.value
    reasons["config file"] = str(refused_config.value).removeprefix(where)

    if HOST in option.given and str(value):  # a host's words are split at whitespace
        with pytest.raises(ConfigError) as refused_host:
            check_request(f"{option.flag} {value} q")
        reasons["host command"] = str(refused_host.value).removeprefix(f"{option.flag} ")
    if option.name in options.MCP_CLIENT:
        param = next(p for p in mcptools.START_PARAMS if p.name == option.name)
        with pytest.raises(UsageError) as refused_mcp:
            mcptools.check_value(param, value)
        reasons["MCP client"] = str(refused_mcp.value).removeprefix(f"{option.flag} ")
    return reasons


def test_every_surface_was_compared() -> None:
    """The loop above covers the options given in words on each surface."""
    names = {option.name for option in VALUED_EVERYWHERE}
    assert {"max_cost", "timeout", "mode", "depth", "synthesizer", "max_parallel"} <= names
    assert {"mode", "max_cost"} <= names & set(options.MCP_CLIENT)
    assert {"mode", "max_parallel"} <= names & {o.name for o in options.given_on(HOST)}


def test_a_hosts_words_become_the_declared_types() -> None:
    given = Overrides(**parse_request("--max-parallel=2 --no-verify --agents a,b q").given())
    assert given == {"max_parallel": 2, "verify": False, "agents": ("a", "b"), "test": False}


def test_only_declared_command_options_can_be_given() -> None:
    with pytest.raises(TypeError, match="colour"):
        Overrides(colour="red")
    with pytest.raises(TypeError, match="grace_period"):  # a config file's only
        Overrides(grace_period=3)


def test_a_run_has_a_time_limit_by_default_and_its_plan_says_it(tmp_path: Path) -> None:
    """Finding 7 of issue 31: `timeout` defaulted to none, for `council run`, MCP runs and
    `council eval`'s runs alike (they all load options here)."""
    from council.graph import plan

    for test in (False, True):
        loaded = load_options(Overrides(test=test))
        assert loaded.timeout == 3600.0
        assert options.DEFAULT_TIMEOUT == 3600.0
        assert plan(loaded)[-1] == ("limits: spend limit $10 (--max-cost N to change, "
                                    "--max-cost none to lift), 3600 s per agent per "
                                    "phase (900 s in the short ones)")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("timeout: null\nmax_cost: null\n")
    unlimited = load_options(Overrides())
    assert unlimited.timeout is None
    assert plan(unlimited)[-1] == ("limits: no spend limit (--max-cost N sets one), no time "
                                   "limit per phase (--timeout)")
    assert "(default 3600;" in options.OPTION["timeout"].help_text()


def test_every_run_has_a_spend_limit_by_default_and_none_lifts_it() -> None:
    """Issue 43: MCP runs had $10, `council run` none. One default, declared here, read by
    every surface; `none` on a command line lifts it, as `max_cost: null` in a config."""
    assert options.OPTION["max_cost"].default == options.DEFAULT_MAX_COST == 10.0
    for test in (False, True):
        assert load_options(Overrides(test=test)).max_cost == 10.0
    assert load_options(Overrides(max_cost="none")).max_cost is None
    assert load_options(Overrides(max_cost="3")).max_cost == 3.0
    from council.commands.start import MCP_MAX_COST

    assert MCP_MAX_COST == options.DEFAULT_MAX_COST
    assert "(default 10; none lifts it)" in options.OPTION["max_cost"].help_text()


# ---------------------------------------------------------------- a toy option, added once

TOY = Option("toy", options.Number("a whole number from 1 to 9", 1, above=False, whole=True,
                                   maximum=9), None, "A toy option, for this test.",
             options.EVERYWHERE, optional=True)


@pytest.fixture
def with_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """options.py as it would be with TOY declared (and offered to MCP clients); the modules
    that build their surface when imported are imported afresh, then put back."""
    import importlib
    import sys

    import council
    import council.hosts

    for package, name in ((council, "cli"), (council.hosts, "mcptools")):
        module = f"{package.__name__}.{name}"
        importlib.import_module(module)  # as declared, before the toy
        monkeypatch.setattr(package, name, getattr(package, name))  # put back after
        monkeypatch.delitem(sys.modules, module)
    declared = (*OPTIONS, TOY)
    monkeypatch.setattr(options, "OPTIONS", declared)
    monkeypatch.setattr(options, "OPTION", {option.name: option for option in declared})
    monkeypatch.setattr(options, "MCP_CLIENT", (*options.MCP_CLIENT, TOY.name))


def test_a_toy_option_declared_once_is_on_every_surface_with_its_bounds(
        with_toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import importlib
    import sys

    from click.testing import CliRunner

    from council.errors import UsageError

    fresh_cli = importlib.import_module("council.cli")
    mcptools = importlib.import_module("council.hosts.mcptools")
    assert fresh_cli is not cli

    # `council run --help`: the flag, its help and its range, as click shows it.
    shown = CliRunner().invoke(fresh_cli.main, ["run", "--help"], terminal_width=200).output
    assert re.search(r"--toy INTEGER RANGE\s+A toy option, for this test\.\s+\[1<=x<=9\]",
                     shown), shown
    # ... and the line `council run` prints for a value out of its range.
    monkeypatch.setattr(sys, "argv", ["council", "run", "--toy", "10", "How do tides work?"])
    with pytest.raises(SystemExit) as exited:
        fresh_cli.entry()
    assert exited.value.code == 2
    line = capsys.readouterr().err.splitlines()[0]
    assert line == "council: error: --toy must be a whole number from 1 to 9"

    # MCP's start_research: the same bounds in its schema, the same line for the same value.
    start = mcptools.BY_NAME["start_research"]
    schema = mcptools.input_schema(start.params)["properties"]["toy"]
    assert schema == {"type": "integer", "minimum": 1, "maximum": 9,
                      "description": "A toy option, for this test."}
    for value in (10, 0):
        with pytest.raises(UsageError) as refused:
            mcptools.parse(start.params, "start_research", {"topic": "t", "toy": value})
        assert mcptools.error_line(refused.value) == line
    assert mcptools.parse(start.params, "start_research", {"topic": "t", "toy": 9})["toy"] == 9

    # The hosts' grammar: a word it takes a value for, read and bounded by the declaration.
    assert grammar()[1]["--toy"] == "toy"
    assert parse_request("--toy 9 q").toy == "9"
    with pytest.raises(ConfigError, match=r"^--toy must be a whole number from 1 to 9$"):
        check_request("--toy 10 q")
    assert Overrides(toy="9") == {"toy": 9}
    for word in ("10", "0"):
        with pytest.raises(ConfigError, match=r"^--toy must be a whole number from 1 to 9$"):
            Overrides(toy=word)

    # A config file (the user's own: a project's council.yaml is checked the same way, and
    # obeyed once trusted): a key it knows, checked as declared.
    (tmp_path / "config").mkdir()
    config = tmp_path / "config" / "config.yaml"
    config.write_text("colour: red\n")
    with pytest.raises(ConfigError, match=r"\(known: .*\btoy\b"):
        load_options(Overrides())
    config.write_text("toy: 10\n")
    with pytest.raises(ConfigError, match=r"config\.yaml: toy must be a whole number from 1 "
                                          r"to 9$"):
        load_options(Overrides())
    config.write_text("toy: 9\n")
    load_options(Overrides())  # within its bounds: taken


def test_the_toy_is_gone_once_the_test_is_over() -> None:
    """The fixture put the declaration and the modules built from it back."""
    from council.hosts import mcptools

    assert "toy" not in options.OPTION
    assert "toy" not in {p.name for p in mcptools.START_PARAMS}
    assert "toy" not in {p.name for p in cli.run.params}


def test_a_word_close_to_a_choice_is_told_which_it_probably_meant() -> None:
    """Issue 43: the same words on every surface: a config file, a host's command, MCP."""
    depth = options.OPTION["depth"]
    with pytest.raises(ConfigError, match=r"^--depth must be one of quick, standard, deep "
                                          r"\(did you mean quick\?\)$"):
        depth.read("quik")
    with pytest.raises(ConfigError, match=r"did you mean deep\?"):
        depth.check("Deep", "./council.yaml: depth")
    with pytest.raises(ConfigError, match=r"^--depth must be one of quick, standard, deep$"):
        depth.read("bottomless")
    profile = options.OPTION["profile"]
    with pytest.raises(ConfigError, match=r"'tset' is not one of production, test \(did you "
                                          r"mean test\?\)$"):
        profile.check("tset", "profile")

