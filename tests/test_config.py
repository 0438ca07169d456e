from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_trusted_config

from council import clis
from council.config import Overrides, load_options
from council.errors import ConfigError, UsageError
from council.runoptions import RunOptions, Seat


def test_default_council_is_the_production_profile() -> None:
    options = load_options(Overrides(depth="deep"))
    assert [s.name for s in options.seats] == ["claude", "codex", "gemini"]
    assert options.profile == "production"
    assert all(s.max_iterations == 10 for s in options.seats)  # the profile's, at deep
    assert options.synthesizer == "claude"


@pytest.mark.parametrize(("depth", "turns"), [("quick", 5), ("standard", 7), ("deep", 10)])
def test_the_depth_caps_the_profiles_turns(depth: str, turns: int) -> None:
    """graph.DEPTH_TURNS: a lighter depth loops the production profile's seats less."""
    options = load_options(Overrides(depth=depth))
    assert [s.max_iterations for s in options.seats] == [turns] * 3
    assert load_options(Overrides()).depth == "standard"  # the default caps at 7


def test_a_cap_the_user_gave_wins_over_the_depth(tmp_path: Path) -> None:
    """--max-iterations, and an agent's own max_iterations in council.yaml, mean what they
    say at any depth; an agent that gives none takes the depth's cap."""
    flag = load_options(Overrides(depth="quick", max_iterations=9))
    assert [s.max_iterations for s in flag.seats] == [9, 9, 9]
    write_trusted_config(tmp_path, "synthesizer: long\nagents:\n"
                                   "  long: {cli: claude, max_iterations: 10}\n"
                                   "  plain: {cli: codex}\n")
    options = load_options(Overrides(depth="quick"))
    assert [(s.name, s.max_iterations) for s in options.seats] == [("long", 10), ("plain", 5)]
    deep = load_options(Overrides(depth="deep"))
    assert [s.max_iterations for s in deep.seats] == [10, 10]


def test_test_profile_is_cheap_and_short() -> None:
    options = load_options(Overrides(test=True))
    models = {s.cli: s.model for s in options.seats}
    assert models == {"claude": "haiku", "codex": "gpt-5.5", "gemini": "flash-lite"}
    assert all(s.max_iterations == 2 for s in options.seats)


def test_config_file_defines_seats(tmp_path: Path) -> None:
    write_trusted_config(
        tmp_path,
        "synthesizer: deep\n"
        "timeout: 900\n"
        "agents:\n"
        "  deep: {cli: claude, model: opus, max_iterations: 4}\n"
        "  quick: {cli: claude, model: haiku, extra_args: ['--max-turns', '50']}\n"
        "  codex: {effort: xhigh}\n"
    )
    options = load_options(Overrides())  # ./council.yaml is found on its own, once trusted
    assert [(s.name, s.cli, s.model) for s in options.seats] == [
        ("deep", "claude", "opus"), ("quick", "claude", "haiku"), ("codex", "codex", None)]
    assert options.seats[1].extra_args == ("--max-turns", "50")
    assert (options.synthesizer, options.timeout) == ("deep", 900.0)
    cheap = load_options(Overrides(test=True))
    assert [s.model for s in cheap.seats] == ["haiku", "haiku", "gpt-5.5"]
    assert RunOptions.from_dict(options.to_dict()) == options


def test_test_gives_a_configured_seat_its_clis_test_profile_from_its_facts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--test on a configured council reads each seat's CLI's facts (clis.Cli.profiles); a
    CLI without a test profile keeps the seat's own model and effort."""
    monkeypatch.setattr(clis.CODEX, "profiles", {"test": ("codex-mini", "minimal")})
    monkeypatch.setattr(clis.GEMINI, "profiles", {})
    write_trusted_config(tmp_path, "agents:\n"
                                   "  a: {cli: codex, model: big, effort: high}\n"
                                   "  b: {cli: gemini, model: pro, effort: high}\n")
    cheap = load_options(Overrides(test=True))
    assert [(s.model, s.effort, s.max_iterations) for s in cheap.seats] == [
        ("codex-mini", "minimal", 2), ("pro", "high", 2)]


def test_agents_selection_and_overrides() -> None:
    options = load_options(Overrides(agents=("codex", "gemini"), synthesizer="codex",
                                     max_iterations=3, timeout=5))
    assert [s.name for s in options.seats] == ["codex", "gemini"]
    assert all(s.max_iterations == 3 for s in options.seats)
    with pytest.raises(UsageError, match="unknown agent 'gpt'"):
        load_options(Overrides(agents=("gpt",)))
    assert load_options(Overrides(agents=("gemini", "codex"))).synthesizer == "gemini"
    with pytest.raises(UsageError, match="synthesizer 'claude' is not an agent"):
        load_options(Overrides(agents=("codex",), synthesizer="claude"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents:\n  a: {cli: claude\n", r"council.yaml:\d+:\d+: invalid YAML"),
        ("[1, 2]\n", "top level must be a mapping"),
        ("colour: red\n", "unknown setting 'colour'"),
        ("agents:\n  x: {cli: bard}\n", "cli 'bard' is not one of"),
        ("agents:\n  Bad/Name: {cli: claude}\n", "agent name"),
        ("agents:\n  claude: {max_iterations: 500}\n", "max_iterations must be between"),
        ("agents:\n  claude: {effort: huge}\n", "effort 'huge'"),
        ("agents:\n  claude: {extra_args: --x}\n", "list of strings"),
        ("timeout: -3\n", "timeout must be a positive"),
        ("timeout: .nan\n", "timeout must be a positive"),
        ("idle_timeout: true\n", "idle_timeout takes a number, not True"),
        ("max_cost: 0\n", "max_cost must be a positive number of US dollars"),
        ("synthesizer: 7\n", "council.yaml: synthesizer must be a non-empty string"),
        ("profile: cheap\n", "profile 'cheap'"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "council.yaml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_options(Overrides())


@pytest.mark.parametrize(("text", "hint"), [
    ("synthesiser: codex\n", "unknown setting 'synthesiser': did you mean 'synthesizer'? ("),
    ("max_costs: 3\n", "unknown setting 'max_costs': did you mean 'max_cost'? ("),
    ("agents:\n  claude: {cli: claude, modle: opus}\n",
     "unknown setting 'modle': did you mean 'model'? ("),
    ("colour: red\n", "unknown setting 'colour' (known: "),  # nothing close: no guess
])
def test_a_mistyped_setting_is_named_with_the_one_it_is_closest_to(
        tmp_path: Path, text: str, hint: str) -> None:
    (tmp_path / "council.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_options(Overrides())
    assert hint in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("text", "where"), [
    ("max_iterations: 3\n", "put it under agents.<name>.max_iterations, or give "
                            "--max-iterations to `council run` for every agent"),
    ("max_cost: 2\nmodel: opus\n", "put it under agents.<name>.model"),
    ("base_url: http://127.0.0.1:8080/v1\n", "put it under agents.<name>.base_url"),
])
def test_an_agents_own_setting_at_the_top_says_where_it_goes(
        tmp_path: Path, text: str, where: str) -> None:
    (tmp_path / "council.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_options(Overrides())
    said = str(caught.value)
    assert "is a setting of each agent, not of the file: " + where in said
    assert "did you mean" not in said
    assert "--" not in said or "max_iterations" in said  # only a flag that exists is named
    assert "\n" not in said


def test_explicit_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_options(Overrides(config=tmp_path / "nope.yaml"))


def test_verification_defaults() -> None:
    assert load_options(Overrides()).verify is True
    assert load_options(Overrides(test=True)).verify is False
    assert load_options(Overrides(test=True, verify=True)).verify is True
    assert load_options(Overrides(verify=False)).verify is False
    # A stored test run that did not say takes the test profile's default too (it took True).
    assert RunOptions.from_dict({"seats": [], "profile": "test"}).verify is False


def test_the_command_line_wins_over_the_file_which_wins_over_the_profile(
        tmp_path: Path) -> None:
    write_trusted_config(tmp_path, "profile: test\nidle_timeout: null\nmax_cost: 3\n"
                                   "debate: force\n")
    options = load_options(Overrides(max_cost=1.5))
    assert (options.profile, options.idle_timeout, options.max_cost, options.debate) == (
        "test", None, 1.5, "force")
    assert (options.verify, options.synthesis_max_iterations) == (False, 2)  # the profile's


def test_the_plan_lists_only_the_phases_the_run_can_have() -> None:
    from council.graph import plan

    def steps(**overrides: object) -> str:
        return str(plan(load_options(Overrides(**overrides)))[1])  # [0]: the depth

    assert "antagonist" not in steps(test=True)  # auto: only beside verification, off here
    assert "→ antagonist →" in steps(test=True, debate="force")
    assert "claim verification ∥ antagonist" in steps(depth="deep")
    assert "→ antagonist →" in steps(test=True, mode="compliance")
    assert "research ∥ dissent →" in steps(depth="deep")
    assert "dissent" not in steps(test=True)
    assert "research ∥ dissent by codex →" in steps(test=True, dissent="codex")


@pytest.mark.parametrize("name", ["codex\n", "codex\nx"])
def test_a_seat_name_with_a_newline_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="agent name"):
        Seat(name=name, cli="codex").validate("agents")


def test_seats_that_replace_the_default_ones_name_who_writes(tmp_path: Path) -> None:
    """issue 43 item 1: a config whose agents replace the default ones and that names no
    synthesiser runs, the first agent writing (the plan says which); a synthesiser named and
    not an agent is refused in one line naming the fix."""
    from council.run.prepare import plan

    config = tmp_path / "own.yaml"
    config.write_text("agents:\n  deep: {cli: claude}\n  wide: {cli: codex}\n")
    options = load_options(Overrides(config=str(config)))
    assert options.synthesizer == "deep"
    assert ("final report: written by deep, the first agent, as none is named claude "
            "(synthesizer: NAME in the config, or --synthesizer NAME, picks another)"
            in plan(options))
    assert load_options(Overrides(config=str(config), synthesizer="wide")).synthesizer == "wide"
    assert not [line for line in plan(load_options(Overrides())) if "written by" in line]

    config.write_text("synthesizer: claude\nagents:\n  deep: {cli: claude}\n")
    with pytest.raises(UsageError) as refused:
        load_options(Overrides(config=str(config)))
    assert str(refused.value) == (
        f"{config}: synthesizer 'claude' is not an agent of this council (deep): give one of "
        f"them (synthesizer: NAME in {config}), or leave it out and the first, deep, writes "
        "the final report")
    with pytest.raises(UsageError, match=r"^--synthesizer 'nobody' is not an agent .*"
                                         r"\(--synthesizer NAME\)"):
        load_options(Overrides(config=str(config), synthesizer="nobody"))
    # --agents choosing others than the file's synthesiser: the first of them writes.
    assert load_options(Overrides(config=str(config), agents=("deep",))).synthesizer == "deep"
