"""Claude Code: the plugin in this repository's root (.claude-plugin/, commands/, hooks/).
UserPromptSubmit sees `/council:deep-research ARGS` as typed and carries a `prompt_id` that
every Stop of the same turn repeats; a blocked prompt never reaches the model (seen on
2.1.197: `UserPromptSubmit operation blocked by hook:` and the reason). The session writes the
synthesis: it has the conversation, and its Stop hook's 7200 s cover the phases before.

Its hooks are `council hook prompt` and `council hook session` (hooks/hooks.json). What
Claude Code has installed of council, and how `council setup claude` installs it:
install.py."""

from __future__ import annotations

from typing import Any

from council.hosts.base import COMMAND, Host, Install


class ClaudeHost(Host):
    name = "claude"
    label = "Claude Code"
    typed = f"/{COMMAND}"
    project_env = "CLAUDE_PROJECT_DIR"
    session_synthesises = True

    def turn_id(self, payload: dict[str, Any]) -> str | None:
        return str(payload.get("prompt_id") or "") or None

    def unrun_command(self, prompt: str) -> str | None:
        return None  # Claude Code always runs its own plugin's command

    def refuse(self, why: str) -> dict[str, Any]:
        return {"decision": "block", "reason": f"Research council not started: {why}."}

    def block(self, reason: str, message: str) -> dict[str, Any]:
        return {"decision": "block", "reason": reason, "systemMessage": message}

    def allow(self, message: str | None = None) -> dict[str, Any]:
        return {"systemMessage": message} if message else {}

    def install(self) -> Install:
        from council.hosts.claude import install

        return install


HOST = ClaudeHost()
