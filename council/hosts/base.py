"""What a host is to council: `Host`, what its hooks say and answer (flow.py drives them),
and `Install`, what it has installed of council and how `council setup` installs it
(setup.py drives that, over what install.py shares). Each host implements both in its own
folder, hosts/<name>/: the hooks in its `__init__.py`, the install in its `install.py`, which
the hooks never import.

Imported by every hook call of a host: nothing heavy at module level."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from council.hosts.install import Plan
    from council.readiness.setup import HostSetup

COMMAND = "council:deep-research"


class Host(Protocol):
    """A host's hook protocol. The methods with a body are what every host does the same
    way from its own attributes; the rest each host says for itself."""

    name: str  # its `council setup` name, and the name of its CLI
    label: str
    typed: str  # how the user types the command in this host
    project_env: str | None  # the variable its hooks are given the project in
    # True: research and refinement here, then the host's own session writes the synthesis
    # (it has the conversation). False: council's synthesiser writes it and the host's session
    # is told where the report is.
    session_synthesises: bool

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
        ...

    def command_args(self, prompt: str) -> str | None:
        """The arguments of the command, as the prompt hook sees it, or None for any other
        prompt. Only the prompt's start counts: the command quoted in a question starts
        nothing."""
        return typed_args(prompt, self.typed)

    def unrun_command(self, prompt: str) -> str | None:
        """Why the command reached the prompt hook as typed rather than run by the host, where
        a host can fail to load it; None for a prompt that is not the command."""
        ...

    # What the hooks answer.
    def refuse(self, why: str) -> dict[str, Any]:
        """The prompt hook's answer to a request that cannot run: the host sends nothing to
        the model and shows the reason."""
        ...

    def block(self, reason: str, message: str) -> dict[str, Any]:
        """The stop hook's answer that makes the session go on, with `reason` as its next
        prompt."""
        ...

    def allow(self, message: str | None = None) -> dict[str, Any]:
        """The stop hook's answer that lets the session stop, with `message` shown."""
        ...

    def install(self) -> Install:
        """The host's install module (imported only here: the hooks never need it)."""
        ...


def typed_args(prompt: str, typed: str) -> str | None:
    """What follows `typed` at the prompt's start, or None when the prompt does not start
    with the command."""
    text = prompt.lstrip()
    if not text.startswith(typed):
        return None
    rest = text[len(typed):]
    if rest and not rest[0].isspace():
        return None  # /council:deep-researcher is another command
    return rest


class Install(Protocol):
    """A host's install of council, as its own files record it: each host's install.py is
    one, as a module."""

    def check(self) -> HostSetup:
        """What `council doctor` says of the host: is council set up in it, and if not the
        one line that fixes it. Read from the host's files, never changed."""
        ...

    def plan(self, files: Path) -> Plan:
        """The host CLI's commands that install council from `files` (setup.hostfiles()),
        none when it is set up; a SetupError when something of the user's is in the way."""
        ...

    def finish(self) -> list[str]:
        """After the plan ran: what else was done for the hooks to run (each a line), or
        nothing."""
        ...
