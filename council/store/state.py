"""state.yaml: the run's phase and every agent's progress. This module is its schema (the
records and their validation), its text (the YAML, with council's secrets redacted in the
data) and the file as seen by a process that does not own the run.

During a run the state has one owner, the supervisor, which holds it in memory and mirrors
it to state.yaml (owner.py); every phase gets that owner from the run's context and reads
from it. `load_state` and `update_state` are for commands that read or change a run they do
not own (`council status`, `watch`, `resume`, `report`, `cancel` with no supervisor, the
plugin's hooks): there the file is the state, read and changed under an exclusive lock
(disk.locked), and a test (tests/test_state_readers.py) keeps them out of the run's own
code. Writes go through disk.atomic_write (temp file, fsync, rename).

The records are mutable dataclasses on purpose: they are only ever changed inside an update
(`StateOwner.update`, or `update_state` for the file), which holds the lock for the whole
read-modify-write; what a reader is given is never changed by it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from council.errors import ConfigError, StateError
from council.graph import NAMES, RECORDED, RESEARCH
from council.paths import SEAT_NAME, run_work
from council.runoptions import RunOptions
from council.store import agentfs, disk, redact
from council.store.progress import utc_now

SCHEMA_VERSION = 1
STATE_FILE = "state.yaml"
# The phases a state may name: the graph's, in its order (graph.py imports nothing of
# council's own, so state.py stays below everything that reads it).
PHASES = NAMES


class RunEnd(StrEnum):
    """The phases a run ends in: declared here once. A member is its word (StrEnum), so it
    compares equal to the string state.yaml holds, and is written back as that string."""

    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ENDED: tuple[RunEnd, ...] = tuple(RunEnd)
RUN_PHASES = (*PHASES, *ENDED)


class SeatStatus(StrEnum):
    """An agent's status in one phase. pending → (queued: waiting for a process slot,
    --max-parallel) → running → one of the ends. complete: wrote the marker; capped: hit its
    iteration cap; stopped: the CLI ended its loop early but left a report; failed: no usable
    output."""

    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETE = "complete"
    CAPPED = "capped"
    STOPPED = "stopped"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"


AGENT_STATUSES: tuple[SeatStatus, ...] = tuple(SeatStatus)


def said(status: str, max_iterations: int) -> str:
    """A seat's status in a phase as a reader sees it (status, watch, progress.log, the
    page): a phase of one turn that took its turn is complete; "capped 1/1" reads as a
    failure. state.yaml keeps the status itself."""
    if status == SeatStatus.CAPPED and max_iterations <= 1:
        return SeatStatus.COMPLETE.value
    return str(status)
USABLE = (SeatStatus.COMPLETE, SeatStatus.CAPPED, SeatStatus.STOPPED)
# The synthesiser when the Claude Code plugin's main session writes the final report: a
# value of `synthesizer`, so declared with the state (views/ reads it, phases/ writes it).
MAIN_SESSION = "main-session"

T = TypeVar("T")


@dataclass
class AgentPhase:
    """One agent's work in one phase."""

    # A SeatStatus (parsed as one; StrEnum, so typed as the string it also is).
    status: str = SeatStatus.PENDING
    iteration: int = 0
    max_iterations: int = 0
    pid: int | None = None
    pid_started: float | None = None  # process start time, so a recycled pid is never hit
    exit_code: int | None = None
    output: str | None = None
    log: str | None = None
    session_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    error: str | None = None
    failure: str | None = None  # auth, quota, rate_limit, timeout, idle, ... (failover.py)
    # When a failure the vendor timed (a plan's limit, a quota, a rate limit) may be tried
    # again: ISO 8601 UTC, from its reset or its wait (agents/failure.Failure.until).
    retry_at: str | None = None
    # Every model that answered the seat in this phase, as its CLI reported them (gemini may
    # answer on another model than the one asked); None: the CLI does not say.
    models: list[str] | None = None
    # The seat's report was published though the seat failed: what it had finished by then.
    partial: bool = False
    # ledger.Usage as a dict, plus "per_iteration": [[iteration, tokens_in, tokens_out, cost]]
    usage: dict[str, Any] | None = None
    # refinement only: sources and cited claims of the agent's research report that its
    # refined one dropped (sources.disappeared, regression.dropped_claims)
    dropped_sources: list[str] | None = None
    dropped_claims: list[str] | None = None
    sha256: str | None = None  # of the published snapshot (snapshots.py)
    original_sha256: str | None = None  # of the agent's own file, when the snapshot was cut

    @property
    def usable(self) -> bool:
        return self.status in USABLE


@dataclass
class AgentRecord:
    cli: str
    model: str | None = None
    phases: dict[str, AgentPhase] = field(default_factory=dict)

    def phase(self, name: str) -> AgentPhase:
        return self.phases.setdefault(name, AgentPhase())


@dataclass
class RunState:
    id: str
    topic: str
    created_at: str
    # Parsed once, when the file is read (RunOptions.from_dict); written back as to_dict, so
    # state.yaml holds the same mapping it always did.
    options: RunOptions
    phase: str = RESEARCH.name
    agents: dict[str, AgentRecord] = field(default_factory=dict)
    synthesizer: str | None = None
    budget_exhausted: str | None = None  # why the budget stopped the loops, if it did
    completeness: dict[str, Any] | None = None  # score.Completeness.to_dict()
    provenance: list[str] | None = None  # snapshots changed after publication, seats moved
    dropped: dict[str, str] | None = None  # seats given up for the rest of the run, and why
    # Each phase of the graph that has ended: "done", or "skipped: why". `council resume`
    # starts from what is not here (graph.py, pipeline.py).
    steps: dict[str, str] | None = None
    updated_at: str | None = None
    ended_at: str | None = None
    error: str | None = None
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "topic": self.topic,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "ended_at": self.ended_at,
            "phase": str(self.phase),  # a RunEnd is written as its word
            "error": self.error,
            "synthesizer": self.synthesizer,
            "budget_exhausted": self.budget_exhausted,
            "completeness": self.completeness,
            "provenance": self.provenance,
            "dropped": self.dropped,
            "steps": self.steps,
            "options": self.options.to_dict(),
            "agents": {
                name: {
                    "cli": rec.cli,
                    "model": rec.model,
                    "phases": {p: _record(ap) for p, ap in rec.phases.items()},
                }
                for name, rec in self.agents.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> RunState:
        """Validate a parsed state file; any surprise is a StateError naming the key."""
        if not isinstance(data, Mapping):
            raise StateError(f"{where}: not a council state file (expected a mapping)")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise StateError(
                f"{where}: schema_version {version!r} is not {SCHEMA_VERSION}; "
                "this run was written by another council version"
            )
        top = {f.name for f in fields(cls)}
        _check_keys(data, top, where)
        for key in ("id", "topic", "created_at"):
            if not isinstance(data.get(key), str):
                raise StateError(f"{where}: '{key}' must be a string")
        phase = data.get("phase")
        if phase not in RUN_PHASES:
            raise StateError(f"{where}: phase {phase!r} is not one of {', '.join(RUN_PHASES)}")
        steps = data.get("steps")
        if steps is not None and (not isinstance(steps, Mapping) or not all(
                k in PHASES and isinstance(v, str) for k, v in steps.items())):
            raise StateError(f"{where}: 'steps' must map phase names to what became of them")
        agents_raw = data.get("agents") or {}
        if not isinstance(agents_raw, Mapping) or not isinstance(data.get("options") or {},
                                                                  Mapping):
            raise StateError(f"{where}: 'agents' and 'options' must be mappings")
        options = stored_options(data.get("options") or {}, where)
        agents = {str(name): _agent_record(name, raw, where)
                  for name, raw in agents_raw.items()}
        return cls(
            id=data["id"],
            topic=data["topic"],
            created_at=data["created_at"],
            options=options,
            phase=RunEnd(phase) if phase in ENDED else phase,
            agents=agents,
            synthesizer=data.get("synthesizer"),
            budget_exhausted=data.get("budget_exhausted"),
            completeness=data.get("completeness"),
            provenance=data.get("provenance"),
            dropped=data.get("dropped"),
            steps=dict(steps) if steps is not None else None,
            updated_at=data.get("updated_at"),
            ended_at=data.get("ended_at"),
            error=data.get("error"),
        )


def _agent_record(name: Any, raw: Any, where: str) -> AgentRecord:
    """One agent's record in a state file, checked: its CLI, model and phase records."""
    if not isinstance(name, str) or not SEAT_NAME.fullmatch(name):
        raise StateError(f"{where}: agent name {str(name)[:40]!r} is not a seat name "
                         "(a lowercase word)")
    loc = f"{where}: agents.{name}"
    if not isinstance(raw, Mapping):
        raise StateError(f"{loc} must be a mapping")
    if not isinstance(raw.get("cli"), str) or not SEAT_NAME.fullmatch(raw["cli"]):
        raise StateError(f"{loc}.cli must be a CLI's name")
    _check_keys(raw, {"cli", "model", "phases"}, loc)
    phases_raw = raw.get("phases") or {}
    if not isinstance(phases_raw, Mapping):
        raise StateError(f"{loc}.phases must be a mapping")
    phases = {}
    for pname, praw in phases_raw.items():
        if pname not in RECORDED:
            raise StateError(f"{loc}.phases: unknown phase {pname!r}")
        phases[pname] = _agent_phase(praw, f"{loc}.phases.{pname}")
    return AgentRecord(cli=str(raw.get("cli")), model=raw.get("model"), phases=phases)


def begun(state: RunState) -> bool:
    """Whether anything has been done for the run (a phase begun by an agent, a step
    ended, or the run ended): the supervisor's refusal and the views' `starting` read it."""
    return state.phase not in PHASES or bool(state.steps) or any(
        rec.phases for rec in state.agents.values())


def stored_options(data: Mapping[str, Any], where: str) -> RunOptions:
    """A run's options as state.yaml or run.json holds them, typed: the one place they are
    parsed. A bad value is the file's fault, so a StateError naming the file and the key."""
    try:
        return RunOptions.from_dict(data)
    except ConfigError as exc:
        raise StateError(f"{where}: {exc}") from exc


def _record(ap: AgentPhase) -> dict[str, Any]:
    """One agent phase as state.yaml holds it: the status as its plain word (PyYAML's safe
    dumper cannot represent an Enum)."""
    return {f.name: str(ap.status) if f.name == "status" else getattr(ap, f.name)
            for f in fields(ap)}


def _agent_phase(raw: Any, where: str) -> AgentPhase:
    if not isinstance(raw, Mapping):
        raise StateError(f"{where} must be a mapping")
    names = {f.name for f in fields(AgentPhase)}
    _check_keys(raw, names, where)
    status = raw.get("status", SeatStatus.PENDING)
    if status not in AGENT_STATUSES:
        raise StateError(f"{where}: status {status!r} is not one of {', '.join(AGENT_STATUSES)}")
    for key in ("iteration", "max_iterations"):
        value = raw.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise StateError(f"{where}: '{key}' must be a whole number")
    return AgentPhase(**{**{k: raw[k] for k in names if k in raw},
                         "status": SeatStatus(status)})


def _check_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        raise StateError(f"{where}: unknown key {unknown[0]!r}")


def state_path(run_dir: Path) -> Path:
    return run_dir / STATE_FILE


class States(Protocol):
    """Where a run's state is read and changed: its owner during the run (owner.StateOwner),
    or the file, for a process that does not own the run (StateFile). Code that serves both
    (the final report's stamp, the page, a phase change) is given one of them."""

    @property
    def state(self) -> RunState:
        """The state as it is now: read it, never change it (changes go through `update`)."""
        ...

    def update(self, change: Callable[[RunState], T], now: bool = False) -> T:
        """Apply `change` under the lock and record it; returns (a copy of) what it returns."""
        ...


@dataclass(frozen=True)
class StateFile:
    """The state of a run this process does not own: each read is the file's (a copy, see
    `load_state`), each change a locked read-modify-write of it (`update_state`)."""

    run_dir: Path

    @property
    def state(self) -> RunState:
        return load_state(self.run_dir)

    def update(self, change: Callable[[RunState], T], now: bool = False) -> T:
        return update_state(self.run_dir, change, now)


def load_state(run_dir: Path) -> RunState:
    """The run's state, for a command that reads a run it does not own (a copy it may keep).
    While the file holds exactly the text this process last wrote or read, the parsed copy
    is reused (a twelve-agent state takes ~15 ms to parse, ~1.5 ms to copy, microseconds to
    compare): `council watch` reads it at every change of the run."""
    return copy.deepcopy(_current(run_dir))


def readable(run_dir: Path) -> RunState:
    """`load_state` for a command a person (or an MCP client) is waiting on: a corrupt or
    missing file's one line also names the way out."""
    try:
        return load_state(run_dir)
    except StateError as exc:
        raise StateError(f"{exc}; `council resume --rebuild {run_dir.name}` rebuilds it from "
                         "the run's reports") from exc


def _current(run_dir: Path) -> RunState:
    """The cached state object itself (never handed out): the owner's, if this process owns
    the run, or parsed again only if the file's text is not what this process last wrote or
    read."""
    owner = _owners.get(run_dir)
    if owner is not None:
        return owner.state
    text = _text(run_dir)
    cached = _known.get(run_dir)
    if cached is not None and cached[0] == text:
        return cached[1]
    state = _parse(text, state_path(run_dir))
    _known[run_dir] = (text, state)
    return state


MAX_STATE_BYTES = 64 << 20  # a run's state is kilobytes; a planted one may be a terabyte


def _text(run_dir: Path) -> str:
    """state.yaml's text: read bounded, following no link, never waiting on a FIFO (a run
    folder council did not make is read too, by status and list)."""
    path = state_path(run_dir)
    try:
        data = agentfs.read(path, MAX_STATE_BYTES + 1)
        if len(data) > MAX_STATE_BYTES:
            raise StateError(f"{path} is over {MAX_STATE_BYTES >> 20} MB: not a council state")
        return data.decode("utf-8")
    except FileNotFoundError as exc:
        raise StateError(f"{path} does not exist: is {run_dir.name} a council run?") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise StateError(f"cannot read {path}: {exc}") from exc


def take(run_dir: Path) -> tuple[str, RunState]:
    """The file's text and its state, for the process that takes ownership of the run
    (owner.owned): the object is the caller's from now on. A run just created is not parsed
    again: the state it was created with is handed over."""
    text = _text(run_dir)
    cached = _known.pop(run_dir, None)
    if cached is not None and cached[0] == text:
        return cached
    return text, _parse(text, state_path(run_dir))


def _parse(text: str, path: Path) -> RunState:
    import yaml  # only when the file changed under us: a fresh run never parses YAML

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise StateError(f"{path}{pos}: corrupt state file (not valid YAML)") from exc
    return RunState.from_dict(data, str(path))


def _save(run_dir: Path, state: RunState) -> None:
    """Write atomically and remember `state` as the file's content; the caller holds the
    lock and gives up `state` (it becomes the cache)."""
    state.updated_at = utc_now()
    text = dump(state)
    disk.atomic_write(state_path(run_dir), text, redacted=True)
    _known[run_dir] = (text, state)


def dump(state: RunState) -> str:
    """state.yaml's text: PyYAML, with libyaml's C emitter where it is installed. A secret of
    council's environment in any of its strings is redacted in the data, not the text, so
    the YAML quoting stays right, and the text is exactly what reaches the file."""
    text = _dump(state.to_dict())
    found = [(name, value) for name, value in redact.secrets() if value in text]
    # Token shapes and URL passwords too, not only the environment's values (redact.py).
    return _dump(_redacted(state.to_dict(), found)) if found or redact.holds(text, []) else text


def _redacted(value: Any, found: redact.Secrets) -> Any:
    if isinstance(value, str):
        return redact.text(value, found)[0]
    if isinstance(value, dict):
        return {k: _redacted(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, found) for v in value]
    return value


def _dump(data: dict[str, Any]) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    try:
        return str(yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True,
                             default_flow_style=False, width=2**31 - 1))
    except UnicodeEncodeError:  # a lone surrogate (a byte-decoded path or message)
        return str(yaml.dump(_utf8(data), Dumper=dumper, sort_keys=False,
                             allow_unicode=True, default_flow_style=False, width=2**31 - 1))


def _utf8(value: Any) -> Any:
    """The same data with every string made writable as UTF-8 (lone surrogates → ?)."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_utf8(k): _utf8(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_utf8(v) for v in value]
    return value


def locked(run_dir: Path) -> disk.Locked:
    """Serialise writers of one run's state file (the hooks, `council cancel`)."""
    return disk.locked(run_work(run_dir) / ".state.lock")


# The text of state.yaml this process last wrote or read, per run, with its state: `council
# watch` reads the state at every change of the run, and parsing YAML each time would put its
# CPU on the critical path. Any other writer changes the text, forcing a fresh parse; callers
# only ever get copies, so the cached state stays as written.
_known: dict[Path, tuple[str, RunState]] = {}

# The runs this process owns (owner.owned registers and releases them). The run's own code
# is handed its owner and never looks here; this only keeps a by-path reader or writer in the
# owning process (a test, a host's flow) from reading a stale file or writing around the owner.
_owners: dict[Path, States] = {}


def update_state(run_dir: Path, change: Callable[[RunState], T], now: bool = False) -> T:
    """Load, change and save the state file under its lock, for a process that does not own
    the run; returns (a copy of) what `change` returns. `change` works on the cached state
    itself, so an update costs no copy of the whole state; if it fails half-way, the cache
    is dropped and the file is left as it was. In the process that owns the run, this is
    the owner's update (`now`: write its mirror at once)."""
    owner = _owners.get(run_dir)
    if owner is not None:
        return owner.update(change, now)
    with locked(run_dir):
        state = _current(run_dir)
        try:
            result = change(state)
            _save(run_dir, state)
        except BaseException:
            _known.pop(run_dir, None)
            raise
        return copy.deepcopy(result)


RUN_SPEC = "run.json"  # what the run was asked to do, written once: what a rebuild starts from


def create_state(run_dir: Path, state: RunState) -> None:
    import json

    disk.atomic_write(run_dir / RUN_SPEC, json.dumps(
        {"id": state.id, "topic": state.topic, "created_at": state.created_at,
         # No value of a secret: an MCP server's env names variables (runoptions).
         "options": state.options.to_dict()},
        indent=2, ensure_ascii=False) + "\n")
    with locked(run_dir):
        _save(run_dir, copy.deepcopy(state))


def read_spec(run_dir: Path) -> RunState:
    """The state the run was created with, from run.json (no agent has a record yet): what
    `council resume --rebuild` starts from. Raises OSError, ValueError, KeyError, TypeError
    or StateError for a file that is missing or not one council wrote."""
    import json

    path = run_dir / RUN_SPEC
    spec = json.loads(agentfs.read(path, MAX_STATE_BYTES).decode("utf-8"))
    return RunState(id=str(spec["id"]), topic=str(spec["topic"]),
                    created_at=str(spec["created_at"]),
                    options=stored_options(spec["options"], str(path)))


def replace_state(run_dir: Path, state: RunState) -> None:
    """Write a state that is not derived from the file (a rebuild): the file is not read."""
    with locked(run_dir):
        _known.pop(run_dir, None)
        _save(run_dir, copy.deepcopy(state))
