"""Inspect's entry point into council (`[project.entry-points.inspect_ai]`): importing this
registers the `council/deep_research` task, its `council/<configuration>` model (what
answers) and the `cli/<claude|codex|gemini>` model provider (the judge)."""

from __future__ import annotations

from council.evaluation.judge import cli
from council.evaluation.task import council, deep_research

__all__ = ["cli", "council", "deep_research"]
