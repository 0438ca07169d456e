"""Codex: the plugin in extensions/codex/ (a skill and Claude-shaped hooks), installed from
this checkout's local marketplace. The user types `$council:deep-research ARGS`; the
UserPromptSubmit hook gets it as typed, and Stop answers as Claude's does. Hooks run only once
the user has trusted them (`/hooks`), or in `codex exec --dangerously-bypass-hook-trust`,
which council never passes for the user. council's own synthesiser writes the report: what a
codex session may write depends on the sandbox mode the user started it in."""

from __future__ import annotations

from typing import Any

from council.hosts.base import COMMAND, Host


class CodexHost(Host):
    name = "codex"
    label = "Codex"
    typed = f"${COMMAND}"
    project_env = None  # codex gives hooks the session's folder as `cwd`
    session_synthesises = False

    def turn_id(self, payload: dict[str, Any]) -> str | None:
        return str(payload.get("turn_id") or "") or None
