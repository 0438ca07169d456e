"""One adapter per CLI, behind the `Adapter` protocol; `ADAPTERS` is the static registry (a new
CLI is registered here and in clis.py: docs/internals.md, "Adding a CLI").

Kept import-light: hooks import sub-modules of this package, so each adapter is imported
only when it is asked for."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from council.agents.base import Adapter


def _claude() -> Adapter:
    from council.agents.claude import ClaudeAdapter

    return ClaudeAdapter()


def _codex() -> Adapter:
    from council.agents.codex import CodexAdapter

    return CodexAdapter()


def _gemini() -> Adapter:
    from council.agents.gemini import GeminiAdapter

    return GeminiAdapter()


# Every CLI's adapter, by the CLI's name in clis.REGISTRY.
ADAPTERS: dict[str, Callable[[], Adapter]] = {"claude": _claude, "codex": _codex,
                                              "gemini": _gemini}


def adapter_for(cli: str) -> Adapter:
    """The adapter of `cli` (KeyError for a CLI council does not know)."""
    return ADAPTERS[cli]()


def adapters() -> list[Adapter]:
    """Every CLI's adapter, in the registry's order."""
    return [make() for make in ADAPTERS.values()]
