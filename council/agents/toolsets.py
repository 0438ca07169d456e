"""What each CLI offers a seat: its built-in tools, and council's own instructions in place of
the CLI's coding-agent system prompt (docs/cost.md).

Every request a CLI sends carries every tool definition it offers and its whole system
prompt; for a research seat most of both are a coding agent's (claude's 25 tools, Workflow
alone 21 KB; codex's and gemini's 22 and 31 KB of coding instructions). A phase declares the
tools it needs once (graph.Phase.tools: WEB or FILES); these functions turn that into each
CLI's own switches, checked against the pinned versions (claude 2.1.197, codex 0.169.0,
gemini 0.61.0). Containment is not decided here: the permission mode, sandbox and approval
mode stay as the adapters set them; a tool left out is one the model never sees.

A seat's own configuration wins: a claude seat whose extra_args name `--tools` (to offer
the Agent tool, say) or `--system-prompt…`, or a codex seat that names
`model_instructions_file`, keeps what it asked for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from council import prompts
from council.graph import EDIT, FILES, WEB
from council.store import agentfs, loop

# claude's `--tools`: the built-in set offered at all (its permission rules only approve).
# No Agent: a seat that starts subagents multiplies tokens out of the budget's sight.
# Grep's definition alone is 3.3 KB; Glob and Read find and read a seat's few files.
CLAUDE_TOOLS = {FILES: ("Read", "Write", "Edit", "Glob"), EDIT: ("Read", "Edit", "Glob"),
                WEB: ("Read", "Write", "Edit", "Glob", "WebSearch", "WebFetch")}
# gemini's `tools.core` in the seat's workspace settings: the only tools registered. auto_edit
# already leaves the shell out; this drops invoke_agent, enter_plan_mode, update_topic.
GEMINI_TOOLS = {FILES: ("read_file", "write_file", "replace", "glob", "grep_search",
                        "list_directory"),
                EDIT: ("read_file", "replace", "glob", "grep_search", "list_directory"),
                WEB: ("read_file", "write_file", "replace", "glob", "grep_search",
                      "list_directory", "web_fetch", "google_web_search")}
# codex has no such switch: apply_patch both adds and updates files, so an EDIT seat of codex
# is asked to patch (docs/watch.md) but could still replace the file whole.
# codex's features a research seat never uses, each verified to leave the request in 0.169:
# goals (get/create/update_goal, 3.3 KB), apps (tool_search and the apps' instructions),
# multi_agent (spawn_agent and its tools), sleep_tool. `tools.view_image=false` is accepted
# but leaves view_image offered, and request_user_input has no switch: both stay.
CODEX_OFF = ("goals", "apps", "multi_agent", "sleep_tool")


def names(cli: str, toolset: str) -> tuple[str, ...]:
    """The tools `cli` offers a seat of a phase whose toolset is `toolset`, as its system
    prompt names them (codex: the ones council's instructions mention)."""
    if cli == "claude":
        return CLAUDE_TOOLS[toolset]
    if cli == "gemini":
        return GEMINI_TOOLS[toolset]
    return ("apply_patch", "exec_command", *(("web_search",) if toolset == WEB else ()))


def asks(extra_args: Sequence[str], *flags: str) -> bool:
    """Whether a seat's own extra_args give one of `flags` (`--tools X` or `--tools=X`)."""
    return any(a == f or a.startswith(f + "=") for a in extra_args for f in flags)


def claude_args(toolset: str, extra_args: Sequence[str], system: Path | None) -> list[str]:
    args: list[str] = []
    if not asks(extra_args, "--tools"):
        args += ["--tools", ",".join(CLAUDE_TOOLS[toolset])]
    if system is not None and not asks(extra_args, "--system-prompt", "--system-prompt-file"):
        args += ["--system-prompt-file", str(system)]
    return args


def codex_args(toolset: str, extra_args: Sequence[str], system: Path | None) -> list[str]:
    args = ["-c", f"web_search={'live' if toolset == WEB else 'disabled'}",
            # bundled skills: 3.6 KB of instructions a research seat never uses
            "-c", "skills.bundled.enabled=false"]
    for feature in CODEX_OFF:
        args += ["--disable", feature]
    if system is not None and not any("model_instructions_file" in a for a in extra_args):
        # a JSON string is a TOML string
        args += ["-c", f"model_instructions_file={json.dumps(str(system))}"]
    return args


def gemini_settings(toolset: str, more: Sequence[str] = ()) -> dict[str, object]:
    """`tools` of the workspace settings: the toolset's tools and `more` (a seat's own MCP
    servers' tools, which `core` would deny too: agents/mcp.gemini_core)."""
    return {"core": [*GEMINI_TOOLS[toolset], *more]}


def write_system(cli: str, toolset: str, folder: Path, name: str) -> Path:
    """council's instructions for a `cli` seat, written in council's own folder (`folder`,
    out of every agent's reach) as `name`; the path the CLI is pointed at."""
    text = prompts.render(f"system-{cli}", web=toolset == WEB, marker=loop.MARKER,
                          tools=names(cli, toolset))
    agentfs.write(folder, name, text)
    return folder / name
