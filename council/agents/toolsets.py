"""What each CLI offers a seat: its built-in tools, and council's own instructions in place of
the CLI's coding-agent system prompt (docs/cost.md).

Every request a CLI sends carries every tool definition it offers and its whole system
prompt; for a research seat most of both are a coding agent's (claude's 25 tools, Workflow
alone 21 KB; codex's and gemini's 22 and 31 KB of coding instructions). A phase declares the
tools it needs once (graph.Phase.tools: WEB, FILES or EDIT); each adapter turns that into its
CLI's own switches and names its tools in its `Instructions`, checked against the pinned
versions. Containment is not decided here: the permission mode, sandbox and approval mode
stay as the adapters set them; a tool left out is one the model never sees.

A seat's own configuration wins: a seat whose extra_args name the CLI's own switch (`asks`)
keeps what it asked for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from council import prompts
from council.graph import WEB
from council.store import agentfs, loop


@dataclass(frozen=True)
class Instructions:
    """A CLI's part of council's system prompt (prompts/system.md.j2): the tools it offers a
    seat for each toolset, as its prompt names them, and how to write files and search the
    web with them."""

    tools: Mapping[str, tuple[str, ...]]
    how_to_write: str
    how_to_search: str


def asks(extra_args: Sequence[str], *flags: str) -> bool:
    """Whether a seat's own extra_args give one of `flags` (`--tools X` or `--tools=X`)."""
    return any(a == f or a.startswith(f + "=") for a in extra_args for f in flags)


def write_system(instructions: Instructions, toolset: str, folder: Path, name: str) -> Path:
    """council's instructions for a seat of a CLI with these `instructions`, written in
    council's own folder (`folder`, out of every agent's reach) as `name`; the path the CLI
    is pointed at."""
    text = prompts.render("system", web=toolset == WEB, marker=loop.MARKER,
                          tools=instructions.tools[toolset],
                          how_to_write=instructions.how_to_write,
                          how_to_search=instructions.how_to_search)
    agentfs.write(folder, name, text)
    return folder / name
