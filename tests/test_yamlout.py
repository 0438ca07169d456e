from __future__ import annotations

from typing import Any

import pytest
import yaml

from council.yamlout import dump

TRICKY = ["", "plain", "yes", "no", "null", "~", "1", "0x1F", "1e3", "- item", "key: value",
          "# not a comment", "'single'", '"double"', "back\\slash", "tab\there", "new\nline",
          "cr\rlf", "\x00nul\x01", "ünï 研究 🦉", "\u2028\u2029\x85\ufeff", "\ud800", "  spaces  ",
          "{{ 7*7 }}", "$(rm -rf /)", "@at", "`tick`", "%percent", "!tag", "&anchor *alias",
          "? question", ">folded", "|literal", "2026-11-22T01:00:00Z", "..."]


@pytest.mark.parametrize("text", TRICKY)
def test_every_string_reads_back_exactly(text: str) -> None:
    data = {"topic": text, text or "empty": [text, {"k": text}], "n": 3}
    assert yaml.safe_load(dump(data)) == data


def test_identifier_keys_are_plain() -> None:
    text = dump({"phase": "x", "claude-2": {"max_iterations": 1}, "yes": 1, "a b": 2})
    assert text.splitlines()[:3] == ['phase: "x"', "claude-2:", "  max_iterations: 1"]
    assert yaml.safe_load(text) == {"phase": "x", "claude-2": {"max_iterations": 1},
                                    "yes": 1, "a b": 2}


def test_nested_state_like_data_round_trips() -> None:
    data: dict[str, Any] = {
        "schema_version": 1, "phase": "research", "error": None, "ok": True,
        "options": {"seats": [{"name": "claude", "extra_args": [], "model": None},
                              {"name": "codex", "extra_args": ["--x", "y"], "model": "gpt"}],
                    "timeout": 12.5, "max_cost": 1e-05, "empty": {}},
        "agents": {"claude": {"phases": {"research": {
            "iteration": 2, "usage": {"cost_usd": 0.000123, "per_iteration": [
                [1, 100, 20, 0.01], [2, 50, 5, None]]}}}}},
    }
    assert yaml.safe_load(dump(data)) == data
