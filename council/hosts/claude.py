"""Claude Code: the plugin in this repository's root (.claude-plugin/, commands/, hooks/).
UserPromptSubmit sees `/council:deep-research ARGS` as typed and carries a `prompt_id` that
every Stop of the same turn repeats; a blocked prompt never reaches the model (seen on
2.1.197: `UserPromptSubmit operation blocked by hook:` and the reason). The session writes the
synthesis: it has the conversation, and its Stop hook's 7200 s cover the phases before."""

from __future__ import annotations

from council.hosts.base import Host


class ClaudeHost(Host):
    pass
