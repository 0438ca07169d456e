"""What every CLI adapter provides. Adapters know their CLI's argv, files, hook protocol and
output format; they know nothing of phases: a job's `tag` is only a file-name label."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Protocol

from council.agents.failure import Failure
from council.agents.toolsets import Instructions, write_system
from council.clis import Cli
from council.domains import Policy
from council.errors import CouncilError
from council.evidence.ledger import Usage
from council.evidence.sources import canonical, extract
from council.graph import WEB
from council.runoptions import Seat
from council.store import agentfs

HOOK_ENTRY = Path(__file__).resolve().parent.parent / "__main__.py"
# The hooks' HOME, in the job's private folder: empty, council's, out of every agent's reach.
HOOK_HOME = "hook-home"

# The most model requests one iteration of a seat's loop may make (see turn_cap).
TURNS_PER_ITERATION = 50


def turn_cap(max_iterations: int) -> int:
    """The most model requests one CLI process of a seat may make: claude's `--max-turns` and
    gemini's `model.maxSessionTurns` both count every request of the process, the ones after
    each hook continuation included, and both CLIs loop a seat's whole phase in one process.

    Why TURNS_PER_ITERATION is 50: an iteration makes one request per search, page read or
    file write, plus the one answering council's continuation (evidence/estimate.py counts
    two at the least). A thorough iteration reads a few dozen sources; 50 leaves it room, yet
    a model that keeps calling tools inside one turn is stopped after 50 requests per
    iteration instead of running on until the phase's time limit or the budget."""
    return max(1, max_iterations) * TURNS_PER_ITERATION


@dataclass(frozen=True)
class AgentJob:
    """One seat's loop: where it works, what it reads first, how its hook is called."""

    seat: Seat
    tag: str
    cwd: Path
    prompt_file: Path
    hook_args: tuple[str, ...]
    max_iterations: int
    # A HOME of the agent's own, outside its folder, for a CLI whose tools read anywhere:
    # `~/…` and other tools' default credential paths then lead nowhere.
    home: Path | None = None
    # A folder of council's for this seat's CLI settings (claude's --settings file): outside
    # every folder an agent may write to, so no agent can rewrite the hooks that loop it.
    private_dir: Path | None = None
    # graph.WEB or graph.FILES: the tools the seat is offered (its phase's Phase.tools), and
    # council's instructions in place of the CLI's coding-agent prompt (agents/toolsets.py).
    tools: str = WEB
    # The run's source policy (domains.py): claude holds its WebFetch to it; the other CLIs
    # have no per-domain switch (docs/sources.md), and the ledger flags what any seat cited.
    sources: Policy = field(default_factory=Policy)

    def council_dir(self) -> Path:
        """`private_dir`, which a CLI with hooks or settings files needs (the runner sets it;
        nothing may fall back to the agent's own, writable folder)."""
        if self.private_dir is None:
            raise ValueError(f"{self.seat.name}: no private folder for {self.seat.cli}'s "
                             "settings and hooks")
        return self.private_dir

    def hook_home(self) -> Path:
        """The HOME the hook processes get, made on first use: an empty folder of council's,
        so nothing a shell or a program reads from `~` at start-up (a .bashrc that prints,
        a profile) is there."""
        home = self.council_dir() / HOOK_HOME
        home.mkdir(mode=0o700, exist_ok=True)
        return home

    def system_prompt(self, instructions: Instructions) -> Path:
        """council's instructions for this job's CLI (its adapter's `instructions`) and
        tools, written in its private folder: the agent cannot rewrite what it is told it
        may do."""
        return write_system(instructions, self.tools, self.council_dir(),
                            f"{self.seat.name}-{self.tag}-system.md")

    def hook_command(self, cli: str, home: Path) -> str:
        """`council hook CLI …` as one shell-safe command string (CLIs run hooks in a shell),
        with `home` as its HOME (a shell assignment: no extra process).

        It runs with the supervisor's own interpreter (no PATH lookup), and runs the entry
        file directly: `-m` would cost an import of runpy after every agent turn. `-I`
        (isolated) takes nothing from the agent's folder or the environment: no PYTHONPATH
        (an empty or relative entry would put the agent's folder, its cwd, on sys.path, and
        a sitecustomize.py the agent wrote would run as the user), no user site-packages,
        not the entry file's folder. The entry file finds its own package (__main__.py)."""
        argv = [sys.executable, "-I", str(HOOK_ENTRY), "hook", cli, *self.hook_args]
        return " ".join([f"HOME={shlex.quote(str(home))}", *(shlex.quote(a) for a in argv)])


@dataclass(frozen=True)
class Invocation:
    """One process to start. stdin_file None means /dev/null."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    stdin_file: Path | None = None


@dataclass(frozen=True)
class Outcome:
    """What the CLI's own output says about the run that just ended."""

    session_id: str | None = None
    error: str | None = None


class Adapter(Protocol):
    """Everything council does with one CLI, over its whole life: a seat's loop (`prepare`,
    `resume`, `outcome`, the usage and requests in its log), a one-shot call (the eval's
    judge, `doctor --live`), what its agents see (`own_variables`), what it loads from an
    agent's folder (`memory_files`), where its login may be (`login_elsewhere`,
    `stranded_key`) and the pages in its log (`fetches`). Its MCP-config format, its
    self-hosted settings and its tool switches are its own module's; its plain facts (hook
    reply, login file, keys, request size…) are `facts`, in clis.py, where the floors that
    cannot import an adapter read them. A CLI without a behaviour says so in its module."""

    cli: str
    facts: Cli
    # True: the CLI loops in one process through council's hook. False: council re-invokes
    # the CLI on the same session (`resume`) between turns.
    native_loop: bool
    # Whether an interrupted session can be continued (council resume) rather than restarted.
    resumes_sessions: bool
    # council's system prompt's part for this CLI: its tools by toolset, how to use them.
    instructions: Instructions
    # Whether a seat of it (a vendor one) runs with a private HOME in the run folder.
    private_home: bool

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        """Write the CLI's settings files and return the first invocation; with a session id,
        continue that session with the prompt in `job.prompt_file`."""
        ...

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        """The next turn of an externally looped session."""
        ...

    def outcome(self, log: Path, returncode: int | None, start: int = 0) -> Outcome:
        """Read the session id and any failure from the CLI's output log, from byte `start`."""
        ...

    def lost_session(self, said: str) -> bool:
        """Whether the CLI's error output `said` means the session to resume does not exist
        (its CLI was killed before it wrote it, or it was removed): council then starts a
        fresh session on the partial report instead of failing the seat."""
        ...

    def classify(self, events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
                 now: datetime, tz: tzinfo | None = None) -> Failure | None:
        """The failure one process of the CLI ended in, from its output `events`, its
        `stderr` and exit code, read the vendor's way (agents/failure.py), or None when it
        did not fail."""
        ...

    def answered_models(self, events: Iterable[dict[str, Any]]) -> list[str]:
        """Every model the CLI says answered, in order ([] when it does not say)."""
        ...

    def own_retry(self, event: dict[str, Any]) -> bool:
        """Whether an output event is a retry the CLI makes on its own (claude's api_retry,
        codex's "Reconnecting... n/m"): counted with council's retries, never stacked."""
        ...

    def fatal(self, event: dict[str, Any]) -> Failure | None:
        """The failure an output event makes certain while the CLI still runs (claude
        retrying a refused login ten times): council stops the process at once."""
        ...

    def usage_counter(self, model: str | None) -> UsageCounter:
        """A fresh count of the tokens and cost in the CLI's output events, fed one event at
        a time (see LogTail), so a growing log is read once, not again every second."""
        ...

    def requests(self, events: Iterable[dict[str, Any]]) -> int | None:
        """The model requests the CLI says a seat's phase made, from its output events (the
        phase accounts, evidence/accounts.py), or None when the CLI does not report them."""
        ...

    def one_shot(self, folder: Path, prompt: Path, model: str | None = None) -> Invocation:
        """One headless call with no tools and none of the user's MCP servers, in `folder`
        (an empty folder of council's: private_root), which it may prepare: the prompt in
        the file `prompt` on stdin, JSON events on stdout. The invocation's env is what the
        call needs besides the CLI's allow-list (environment.agent_env). CouncilError when
        the CLI's own config cannot be read safely."""
        ...

    def answer(self, log: Path) -> str:
        """A one-shot call's final answer, from its JSON events."""
        ...

    def own_variables(self, environ: Mapping[str, str]) -> set[str]:
        """Variables besides its facts' that the CLI is told to read (by its own config),
        which its agents may see."""
        ...

    def memory_files(self, folder: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What the CLI would load from an agent's `folder` as instructions or settings: the
        names (or relative paths) at its top, and those it loads at any depth."""
        ...

    def login_elsewhere(self, config_dir: Path, env: Mapping[str, str]) -> str | None:
        """Where a login comes from besides its keys and its login file (a name, never a
        value), or None."""
        ...

    def stranded_key(self, env: Mapping[str, str], home: Path) -> str | None:
        """A key the CLI on its own would read from a file council keeps from its agents
        (named with the file, never its value), or None."""
        ...

    def fetches(self, event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
        """(call id, URL, None) for each page fetch an event of its log starts, (call id,
        None, text) for each fetched page's text it carries (agents/pages.py)."""
        ...

    def doctor_notes(self) -> list[str]:
        """Lines `council doctor` adds about this CLI's containment here, if any."""
        ...


class UsageCounter(Protocol):
    def add(self, event: dict[str, Any]) -> None: ...

    def total(self) -> Usage: ...


class LogTail:
    """The JSON events a growing log gained since the last call: only complete lines are
    consumed, so a line the CLI is still writing is read whole next time."""

    def __init__(self, log: Path) -> None:
        self.log, self.offset, self.restarts = log, 0, 0

    def new_events(self, final: bool = False) -> Iterator[dict[str, Any]]:
        """`final`: the CLI has exited, so a last line without a newline is complete too.
        A log that shrank was replaced: it is read again from its start (`restarts` counts
        it, so a caller can start its count afresh)."""
        try:
            handle = self.log.open("rb")
        except FileNotFoundError:
            return
        with handle:
            if os.fstat(handle.fileno()).st_size < self.offset:
                self.offset, self.restarts = 0, self.restarts + 1
            handle.seek(self.offset)
            for raw in handle:
                if not raw.endswith(b"\n") and not final:
                    break  # still being written
                self.offset += len(raw)
                event = json_object(raw)
                if event is not None:
                    yield event


def read_usage(adapter: Adapter, log: Path, model: str | None) -> Usage:
    """Tokens and cost of a whole log."""
    counter = adapter.usage_counter(model)
    for event in json_events(log):
        counter.add(event)
    return counter.total()


MAX_LOG_LINE = 64 << 20  # one event of a CLI's log: a tool result holds a fetched page at most


def json_events(log: Path, start: int = 0) -> Iterator[dict[str, Any]]:
    """Each JSON object line of a CLI's output log; non-JSON lines are skipped.

    Streams the file: a flooding agent's 10 MB log is never held in memory. Opened as
    agentfs opens what an agent could have touched: no link followed, a plain file only
    (anything else has no events)."""
    try:
        handle = os.fdopen(agentfs.open_regular(log), "rb")
    except OSError:  # missing, or a link, FIFO or device where the log should be
        return
    with handle:
        handle.seek(start)
        # A line is read MAX_LOG_LINE bytes at most: a log with no newline (a sparse file)
        # is never held whole; the cut pieces of a longer line are not JSON, and skipped.
        for raw in iter(lambda: handle.readline(MAX_LOG_LINE), b""):
            event = json_object(raw)
            if event is not None:
                yield event


def json_object(raw: bytes) -> dict[str, Any] | None:
    """One line of a CLI's JSON-lines log as an object, or None (not JSON, not an object)."""
    line = raw.strip()
    if not line.startswith(b"{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def page_url(params: Any) -> str | None:
    """The canonical URL a page-fetch tool call's parameters name: its `url`, else the first
    URL in its `prompt`."""
    if not isinstance(params, dict):
        return None
    if isinstance(params.get("url"), str):
        return canonical(params["url"])
    found = extract(params["prompt"]) if isinstance(params.get("prompt"), str) else []
    return canonical(found[0]) if found else None


def model_args(flag: str, seat: Seat) -> list[str]:
    return [flag, seat.model] if seat.model else []


def failure(cli: str, returncode: int | None, message: str | None,
            known: Mapping[int, str] | None = None) -> str | None:
    """One line saying how a CLI failed, or None when it did not."""
    if message is None and returncode in (0, None):
        return None
    parts = []
    if returncode not in (0, None):
        meaning = (known or {}).get(returncode) if returncode is not None else None
        parts.append(f"{cli} exited with code {returncode}"
                     + (f" ({meaning})" if meaning else ""))
    else:
        parts.append(f"{cli} reported an error")
    if message:
        parts.append(" ".join(message.split())[:300])
    return ": ".join(parts)


def private_root(name: str) -> Path:
    """A folder of council's for one-off CLI calls outside a run (the eval's judge, `doctor
    --live`): `$XDG_CACHE_HOME/council/<name>`, else `~/.cache/council/<name>`, 0700 and this
    user's, with an empty `.git` folder in it.

    Not $TMPDIR: gemini and codex walk up from their folder to the project root (the first
    folder holding `.git`) and read every GEMINI.md or AGENTS.md on the way, so another local
    user's /tmp/.git and /tmp/GEMINI.md became the CLI's instructions. Here the walk ends at
    this folder, whose only entries are council's."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = base / "council" / name
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise CouncilError(f"{root} is not a folder of this user's: remove it, and council "
                           "makes its own there")
    if stat.S_IMODE(info.st_mode) != 0o700:
        root.chmod(0o700)
    (root / ".git").mkdir(mode=0o700, exist_ok=True)
    return root
