"""Inspect's entry point into council (`[project.entry-points.inspect_ai]`): importing this
registers the `council/deep_research` task and the `cli/<claude|codex|gemini>` model
provider."""

from __future__ import annotations

from council.evaluation.judge import cli
from council.evaluation.task import deep_research

__all__ = ["cli", "deep_research"]
