"""Configurations: what `council run` is asked to do for each, checked as it would check them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_trusted_config

from council.evaluation import configurations as c
from council.evaluation.configurations import Configuration, ConfigurationError


def test_the_three_kinds_and_their_council_run_options() -> None:
    single = c.parse("single:claude")
    assert single == Configuration("single:claude", c.SINGLE, "claude")
    assert single.run_args() == ["--agents", "claude", "--no-verify", "--debate", "off",
                                 "--dissent", "off"]
    assert c.parse("council:three").run_args(test=True) == [
        "--test", "--no-verify", "--debate", "off", "--dissent", "off"]
    # The whole pipeline even under --test, which would otherwise turn verification off.
    assert c.parse("council").run_args(test=True, max_cost=2.5) == [
        "--test", "--depth", "deep", "--verify", "--max-cost", "2.5"]


@pytest.mark.parametrize("depth", ["quick", "standard", "deep"])
def test_a_depth_is_a_configuration(depth: str) -> None:
    """`council eval --config council:quick --config council:standard --config council:deep`
    compares depths (docs/cost.md): each runs `council run --depth` with its checks on."""
    conf = c.parse(f"council:{depth}")
    assert (conf.kind, conf.depth) == (c.COUNCIL, depth)
    assert conf.run_args(test=True) == ["--test", "--depth", depth, "--verify"]
    assert c.resolve(conf, test=True).depth == depth
    assert c.parse(f"council:{depth}@team.yaml").depth == depth
    assert len({c.parse(f"council:{d}").slug() for d in ("quick", "standard", "deep")}
               | {c.parse("council").slug()}) == 4  # their runs in folders of their own
    assert c.resolve(c.parse("council"), test=True).depth == "deep"  # what it always ran
    with pytest.raises(ConfigurationError, match="unknown configuration 'council:shallow'"):
        c.parse("council:shallow")


def test_a_council_config_file_names_the_seats(tmp_path: Path) -> None:
    conf = c.parse("single:opus@team.yaml")
    assert conf.config_file == Path("team.yaml").absolute()
    assert conf.run_args()[:2] == ["--config", str(Path("team.yaml").absolute())]
    bare = c.parse("team.yml")
    assert (bare.kind, bare.config_file) == (c.COUNCIL, Path("team.yml").absolute())
    assert c.parse("council@a.yaml").slug() != c.parse("council@b.yaml").slug()
    assert c.parse("single:claude").slug() == "single-claude"
    assert c.parse("council:three").slug() == "council-three"


@pytest.mark.parametrize(("spec", "message"), [
    ("triple", "unknown configuration 'triple'"),
    ("single", "unknown configuration 'single'"),
    ("single:Bad Name", "is not an agent name"),
    ("council@", "name a council config file after '@'"),
])
def test_a_malformed_configuration_is_named(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        c.parse(spec)


def test_resolve_checks_the_seat_against_the_council_in_effect() -> None:
    options = c.resolve(c.parse("single:codex"))
    assert [s.name for s in options.seats] == ["codex"]
    assert options.verify is False
    assert options.debate == "off"
    assert c.vendors(options) == {"codex": 1}
    assert c.sole_vendor(options) == "codex"
    full = c.resolve(c.parse("council"), test=True)
    assert full.verify is True
    # One process per seat, and the dissenter's and the antagonist's (both of another vendor
    # than claude, the synthesiser), which run beside research and verification.
    assert c.vendors(full) == {"claude": 1, "codex": 2, "gemini": 1}
    three = c.resolve(c.parse("council:three"), test=True)
    assert c.vendors(three) == {"claude": 1, "codex": 1, "gemini": 1}
    assert c.sole_vendor(full) is None
    with pytest.raises(ConfigurationError, match="configuration single:nobody: unknown agent"):
        c.resolve(c.parse("single:nobody"))


def test_seats_of_a_trusted_project_config_and_an_untrusted_one(tmp_path: Path) -> None:
    write_trusted_config(tmp_path, "synthesizer: opus\nagents:\n  opus: {cli: claude}\n"
                                   "  sonnet: {cli: claude}\n")
    options = c.resolve(c.parse("council:three"))
    assert c.vendors(options) == {"claude": 2}
    (tmp_path / "council.yaml").write_text("synthesizer: evil\nagents:\n  evil: {cli: codex}\n")
    with pytest.raises(ConfigurationError, match=r"configuration council:three: .*council trust"):
        c.resolve(c.parse("council:three"))


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        c.resolve(c.parse(f"council@{tmp_path / 'none.yaml'}"))


@pytest.mark.parametrize(("judge", "vendor"), [
    ("cli:claude", "claude"), ("cli:gemini/flash", "gemini"), ("cli/codex", "codex"),
    ("anthropic/claude-sonnet-4", "claude"), ("openai/gpt-5", "codex"),
    ("google/gemini-2.5-pro", "gemini"), ("mockllm/model", None)])
def test_the_vendor_behind_a_judge(judge: str, vendor: str | None) -> None:
    assert c.judge_vendor(judge) == vendor
