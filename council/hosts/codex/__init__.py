"""Codex: the plugin in extensions/codex/ (a skill and Claude-shaped hooks), installed from
this checkout's local marketplace. The user types `$council:deep-research ARGS`; the
UserPromptSubmit hook gets it as typed, and Stop answers as Claude's does. Hooks run only once
the user has trusted them (`/hooks`), or in `codex exec --dangerously-bypass-hook-trust`,
which council never passes for the user. council's own synthesiser writes the report: what a
codex session may write depends on the sandbox mode the user started it in.

Its hooks are `council hook codex-prompt` and `council hook codex-stop`. What Codex has
installed of council, whether it trusts the hooks, and how `council setup codex` installs and
trusts them: install.py."""

from __future__ import annotations

from typing import Any

from council.hosts.base import COMMAND, Host, Install
from council.hosts.claude import ClaudeHost


class CodexHost(Host):
    name = "codex"
    label = "Codex"
    typed = f"${COMMAND}"
    project_env = None  # codex gives hooks the session's folder as `cwd`
    session_synthesises = False

    def turn_id(self, payload: dict[str, Any]) -> str | None:
        return str(payload.get("turn_id") or "") or None

    def unrun_command(self, prompt: str) -> str | None:
        return None  # the prompt hook always gets the command as typed: that is how it runs

    # Codex's hooks take Claude Code's answers, field for field (codex 0.169).
    refuse = ClaudeHost.refuse
    block = ClaudeHost.block
    allow = ClaudeHost.allow

    def install(self) -> Install:
        from council.hosts.codex import install

        return install


HOST = CodexHost()
