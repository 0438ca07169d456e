"""Every YAML example in README.md and docs/*.md, run as a reader would: a council config is
loaded through council's own loader (as `council run --config FILE` and `council trust FILE`
read it) and planned; the GitHub Actions recipe's council commands are parsed by council's
CLI. docs/local.md's example also runs to a final report against the scripted server, with
the real CLIs (tests/realcli/test_selfhosted_real.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from council.cli import main
from council.config import Overrides, load_options, review_file
from council.run.prepare import plan

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def yaml_examples() -> list[tuple[str, str]]:
    """(`file:line`, text) of each ```yaml block of README.md and docs/*.md."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", match.group(1)))
    return found


EXAMPLES = yaml_examples()
CONFIGS = [(where, text) for where, text in EXAMPLES if "jobs" not in yaml.safe_load(text)]
WORKFLOWS = [(where, text) for where, text in EXAMPLES if "jobs" in yaml.safe_load(text)]


def example(doc: str) -> str:
    """The text of the one config example of `doc` (a path under the repository)."""
    (text,) = [text for where, text in CONFIGS if where.startswith(f"{doc}:")]
    return text


def test_the_examples_are_found() -> None:
    """The extraction sees the examples the docs have: a change of fence is not a silent
    pass."""
    assert {where.split(":")[0] for where, _ in CONFIGS} >= {"README.md", "docs/local.md"}
    assert [where.split(":")[0] for where, _ in WORKFLOWS] == ["docs/watch.md"]


@pytest.mark.parametrize(("where", "text"), CONFIGS, ids=[w for w, _ in CONFIGS])
def test_each_config_example_loads_and_plans(where: str, text: str, tmp_path: Path) -> None:
    """Copied as written into a config file, each example is obeyed (`--config FILE`) and
    planned, and `council trust` can review it as a project's council.yaml."""
    config = tmp_path / "council.yaml"
    config.write_text(text, encoding="utf-8")
    options = load_options(Overrides(config=str(config)))
    assert [s.name for s in options.seats] == list(yaml.safe_load(text).get("agents") or
                                                   [s.name for s in options.seats])
    assert options.synthesizer in [s.name for s in options.seats]
    assert plan(options)
    assert review_file(config).lines


def test_the_self_hosted_example_names_who_writes_the_report(tmp_path: Path) -> None:
    """docs/local.md's seats replace the default ones and name no synthesiser: the first one
    writes the final report, and the plan says so and how to pick another."""
    config = tmp_path / "local.yaml"
    config.write_text(example("docs/local.md"), encoding="utf-8")
    options = load_options(Overrides(config=str(config)))
    assert options.synthesizer == "local-claude"
    said = "\n".join(plan(options))
    assert "written by local-claude, the first agent, as none is named claude" in said
    assert "--synthesizer NAME" in said


def council_commands(text: str) -> list[list[str]]:
    """The council command lines of a workflow's `run:` steps, as argv (a shell variable
    stands for a run id)."""
    commands = []
    for job in yaml.safe_load(text)["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                lexer = shlex.shlex(line.replace("$last", "RUNID"), posix=True,
                                    punctuation_chars=True)
                lexer.whitespace_split = True
                words: list[str] = []
                for token in [*lexer, ";"]:
                    if token.strip("();<>|&") and token != "then":
                        words.append(token)
                        continue
                    if words[:1] == ["council"]:
                        commands.append(words[1:])
                    words = []
    return commands


@pytest.mark.parametrize(("where", "text"), WORKFLOWS, ids=[w for w, _ in WORKFLOWS])
def test_each_workflow_example_gives_council_commands_it_has(where: str, text: str) -> None:
    commands = council_commands(text)
    assert {argv[0] for argv in commands} >= {"run", "adopt", "list"}
    for argv in commands:
        parent = main.make_context("council", list(argv), resilient_parsing=False)
        name, command, rest = main.resolve_command(parent, list(argv))
        assert command is not None, argv
        with command.make_context(name, rest, parent=parent) as ctx:  # parsed, not invoked
            assert isinstance(ctx, click.Context)
