"""One adapter per CLI, behind the `Adapter` protocol; `adapter_for` is the static registry.

Kept import-light: hooks import sub-modules of this package."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from council.agents.base import Adapter


def adapter_for(cli: str) -> Adapter:
    from council.agents import claude, codex, gemini

    registry: dict[str, Adapter] = {
        "claude": claude.ClaudeAdapter(),
        "codex": codex.CodexAdapter(),
        "gemini": gemini.GeminiAdapter(),
    }
    return registry[cli]
