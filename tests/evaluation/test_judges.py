"""Who judges: `--judge` and `--second-judge` as written, resolved to Inspect's model and the
vendor behind it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from council.evaluation import judges
from council.evaluation.judges import JudgeRefused


@pytest.mark.parametrize(("spec", "model", "vendor"), [
    ("cli:claude", "cli/claude", "claude"),
    ("cli:claude/opus", "cli/claude/opus", "claude"),
    ("cli:codex:gpt-5.5", "cli/codex/gpt-5.5", "codex"),
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "claude"),
    ("google/gemini-2.5-pro", "google/gemini-2.5-pro", "gemini"),
    ("openai/gpt-5", "openai/gpt-5", "codex"),
    ("mockllm/model", "mockllm/model", "mockllm"),  # no CLI's: its provider stands for it
])
def test_each_form_names_its_model_and_vendor(spec: str, model: str, vendor: str) -> None:
    judge = judges.resolve(spec)
    assert (judge.model, judge.vendor, judge.seat) == (model, vendor, None)
    assert judge.label == spec


def test_a_seat_is_its_cli_with_its_model() -> None:
    judge = judges.resolve("claude")  # the built-in seat
    assert (judge.model, judge.vendor, judge.seat) == ("cli/claude/opus", "claude", "claude")
    assert judge.label == "claude (cli:claude/opus)"
    assert judges.resolve("claude", test=True).model == "cli/claude/haiku"


def test_a_seat_of_the_users_config(tmp_path: Path) -> None:
    config = Path(os.environ["COUNCIL_CONFIG_HOME"]) / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("agents:\n  critic:\n    cli: gemini\n    model: pro\n"
                      "  local:\n    cli: claude\n    model: qwen3\n"
                      "    base_url: http://127.0.0.1:11434\n")
    assert judges.resolve("critic").model == "cli/gemini/pro"
    with pytest.raises(JudgeRefused, match=r"^judge local: the agent talks to a server of "
                                           r"yours \(base_url\)"):
        judges.resolve("local")
    with pytest.raises(JudgeRefused, match=r"^judge nobody: no agent of that name in the "
                                           r"council config \(agents: critic, local\)"):
        judges.resolve("nobody")


def test_a_second_judge_of_another_vendor() -> None:
    first = judges.resolve("cli:gemini")
    assert judges.second(first, "cli:codex").model == "cli/codex"
    assert judges.second(first, "anthropic/claude-sonnet-4-5").vendor == "claude"


@pytest.mark.parametrize(("first", "second", "vendor"), [
    ("cli:claude", "anthropic/claude-opus-4", "claude"),
    ("google/gemini-2.5-pro", "cli:gemini/flash", "gemini"),
    ("claude", "cli:claude", "claude"),  # a seat is its CLI's vendor
    ("mockllm/model", "mockllm/other", "mockllm"),
])
def test_a_second_judge_of_the_same_vendor_is_refused(first: str, second: str,
                                                      vendor: str) -> None:
    with pytest.raises(JudgeRefused) as refused:
        judges.second(judges.resolve(first), second)
    assert str(refused.value) == (f"--second-judge {second} is of the same vendor ({vendor}) "
                                  f"as --judge {first}: name another vendor's judge")
