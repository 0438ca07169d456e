"""The hosts a council can be started from: Claude Code (a plugin), Gemini CLI (an
extension) and Codex (a plugin). One module, `flow.py`, captures a typed request, binds it to
the host's session and hands the result back; each host's own protocol (how its hook payloads
name the session, the turn and the project, what its hooks answer) is a small adapter here,
as each CLI's is in agents/.

Imported by every hook call, council's agents' included (`council hook claude` checks EVENTS):
nothing is imported here at module level."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own would cost the import of typing
if TYPE_CHECKING:
    from council.hosts.base import Host


def host_for(name: str) -> Host:
    if name == "gemini":
        from council.hosts.gemini import GeminiHost

        return GeminiHost()
    if name == "codex":
        from council.hosts.codex import CodexHost

        return CodexHost()
    from council.hosts.claude import ClaudeHost

    return ClaudeHost()


# `council hook EVENT` for each host's hooks file: the event, and the host it belongs to.
EVENTS = {
    "prompt": ("claude", "prompt"), "session": ("claude", "stop"),  # hooks/hooks.json
    "gemini-before": ("gemini", "prompt"), "gemini-after": ("gemini", "stop"),
    "codex-prompt": ("codex", "prompt"), "codex-stop": ("codex", "stop"),
}
