"""What a host adapter says about its protocol. The defaults are Claude Code's, which Codex
shares for its hook answers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

COMMAND = "council:deep-research"


class Host:
    name = "claude"
    label = "Claude Code"
    typed = f"/{COMMAND}"  # how the user types the command in this host
    project_env: str | None = "CLAUDE_PROJECT_DIR"
    # True: research and refinement here, then the host's own session writes the synthesis
    # (it has the conversation). False: council's synthesiser writes it and the host's session
    # is told where the report is.
    session_synthesises = True

    def research_dir(self, payload: dict[str, Any]) -> Path:
        """The project's research/ folder. The host's project variable first: the payload's
        cwd follows the session's `cd`s, and both hooks of a turn must find the same folder."""
        env = os.environ.get("COUNCIL_RESEARCH_DIR")
        if env:
            return Path(env)
        project = ((os.environ.get(self.project_env) if self.project_env else None)
                   or payload.get("cwd") or os.getcwd())
        return Path(str(project)) / "research"

    def session_id(self, payload: dict[str, Any]) -> str:
        return str(payload.get("session_id") or "")

    def turn_id(self, payload: dict[str, Any]) -> str | None:
        """What ties a stop to the prompt of its turn, where the host sends one."""
        return str(payload.get("prompt_id") or "") or None

    def command_args(self, prompt: str) -> str | None:
        """The arguments of the command, as the prompt hook sees it, or None for any other
        prompt. Only the prompt's start counts: the command quoted in a question starts
        nothing."""
        text = prompt.lstrip()
        if not text.startswith(self.typed):
            return None
        rest = text[len(self.typed):]
        if rest and not rest[0].isspace():
            return None  # /council:deep-researcher is another command
        return rest

    def unrun_command(self, prompt: str) -> str | None:
        """Why the command reached the prompt hook as typed rather than run by the host, where
        a host can fail to load it; None for a prompt that is not the command."""
        return None

    # What the hooks answer.
    def refuse(self, why: str) -> dict[str, Any]:
        """The prompt hook's answer to a request that cannot run: the host sends nothing to
        the model and shows the reason."""
        return {"decision": "block", "reason": f"Research council not started: {why}."}

    def block(self, reason: str, message: str) -> dict[str, Any]:
        """The stop hook's answer that makes the session go on, with `reason` as its next
        prompt."""
        return {"decision": "block", "reason": reason, "systemMessage": message}

    def allow(self, message: str | None = None) -> dict[str, Any]:
        return {"systemMessage": message} if message else {}
