"""Gemini CLI: the extension in extensions/gemini/. Its custom command
`/council:deep-research ARGS` expands to a prompt that holds ARGS between two marker lines;
BeforeAgent sees only that expanded prompt (the model too: nothing says a command was used),
so the markers are how the request is recognised. AfterAgent is the stop: `deny` with a reason
sends the reason as the next prompt in the same process. Gemini sends no turn id; a stop is
matched to the session's newest open request. council's own synthesiser writes the report: a
headless gemini session may only write files under `--approval-mode auto_edit`.

In a folder the user has not trusted, Gemini loads no extension command, yet still runs the
extension's hooks: the command then arrives as typed, and would go to the model as a plain
prompt. BeforeAgent refuses it, saying how to trust the folder. (Headless, an untrusted folder
stops gemini before any hook, with exit 55 and its own message.)

Its hooks are `council hook gemini-before` and `council hook gemini-after`. What Gemini CLI
has installed of council, whether it trusts a folder, and how `council setup gemini` links the
extension: install.py."""

from __future__ import annotations

from typing import Any

from council.hosts.base import COMMAND, Host, Install, typed_args

OPEN, CLOSE = f"[{COMMAND}]", f"[/{COMMAND}]"


class GeminiHost(Host):
    name = "gemini"
    label = "Gemini CLI"
    typed = f"/{COMMAND}"
    project_env = "GEMINI_PROJECT_DIR"
    session_synthesises = False

    def turn_id(self, payload: dict[str, Any]) -> str | None:
        return None

    def command_args(self, prompt: str) -> str | None:
        """ARGS from the command's expansion: the prompt starts with the opening marker line
        and ARGS run to the closing one."""
        text = prompt.lstrip()
        if not text.startswith(OPEN + "\n"):
            return None
        body = text[len(OPEN) + 1:]
        end = body.find("\n" + CLOSE)
        return None if end < 0 else " " + body[:end]

    def unrun_command(self, prompt: str) -> str | None:
        if typed_args(prompt, self.typed) is None:
            return None
        return ("Gemini ran no extension command: this folder is not trusted. Trust it with "
                "`/permissions trust` (or start gemini with --skip-trust), then type the "
                "command again")

    def refuse(self, why: str) -> dict[str, Any]:
        return {"decision": "deny", "reason": f"Research council not started: {why}."}

    def block(self, reason: str, message: str) -> dict[str, Any]:
        return {"decision": "deny", "reason": reason, "systemMessage": message}

    def allow(self, message: str | None = None) -> dict[str, Any]:
        return {"decision": "allow", **({"systemMessage": message} if message else {})}

    def install(self) -> Install:
        from council.hosts.gemini import install

        return install


HOST = GeminiHost()
