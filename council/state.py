"""state.yaml: the run's phase and every agent's progress.

During a run the state has one owner, the supervisor, and lives in its memory (`owned`):
state.yaml is only its mirror, written atomically (temp file, fsync, rename) at most every
200 ms and at every phase change, and never read back to decide anything. Whatever another
process does to the file (garbles, truncates, deletes or replaces it: an agent that escaped
its folder, a user's editor) changes no decision and ends nothing: the next write puts the
true state back and progress.log says so once. Outside a run (`council status`, `cancel`
with no supervisor, the plugin's hooks), the file is the state, read and changed under an
exclusive lock.

The records are mutable dataclasses on purpose: they are only ever changed inside
`update_state`, which holds the lock for the whole read-modify-write.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from council import redact, store
from council.errors import StateError
from council.graph import NAMES, RESEARCH
from council.progress import utc_now

SCHEMA_VERSION = 1
STATE_FILE = "state.yaml"
# The phases a state may name: the graph's, in its order (graph.py imports nothing of
# council's own, so state.py stays below everything that reads it).
PHASES = NAMES
RUN_PHASES = (*PHASES, "done", "failed", "cancelled")
# pending → (queued: waiting for a process slot, --max-parallel) → running → one of the
# ends. complete: wrote the marker; capped: hit its iteration
# cap; stopped: the CLI ended its loop early but left a report; failed: no usable output.
AGENT_STATUSES = (
    "pending", "queued", "running", "complete", "capped", "stopped", "failed", "cancelled",
    "skipped",
)
USABLE = ("complete", "capped", "stopped")

T = TypeVar("T")


@dataclass
class AgentPhase:
    """One agent's work in one phase."""

    status: str = "pending"
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
    failure: str | None = None  # auth, quota, rate_limit, timeout, idle, ... (failures.py)
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
    options: dict[str, Any]
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
            "phase": self.phase,
            "error": self.error,
            "synthesizer": self.synthesizer,
            "budget_exhausted": self.budget_exhausted,
            "completeness": self.completeness,
            "provenance": self.provenance,
            "dropped": self.dropped,
            "steps": self.steps,
            "options": self.options,
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
        options = data.get("options") or {}
        if not isinstance(agents_raw, Mapping) or not isinstance(options, Mapping):
            raise StateError(f"{where}: 'agents' and 'options' must be mappings")
        agents = {}
        for name, raw in agents_raw.items():
            loc = f"{where}: agents.{name}"
            if not isinstance(raw, Mapping):
                raise StateError(f"{loc} must be a mapping")
            _check_keys(raw, {"cli", "model", "phases"}, loc)
            phases_raw = raw.get("phases") or {}
            if not isinstance(phases_raw, Mapping):
                raise StateError(f"{loc}.phases must be a mapping")
            phases = {}
            for pname, praw in phases_raw.items():
                if pname not in PHASES:
                    raise StateError(f"{loc}.phases: unknown phase {pname!r}")
                phases[pname] = _agent_phase(praw, f"{loc}.phases.{pname}")
            agents[str(name)] = AgentRecord(
                cli=str(raw.get("cli")), model=raw.get("model"), phases=phases
            )
        return cls(
            id=data["id"],
            topic=data["topic"],
            created_at=data["created_at"],
            options=dict(options),
            phase=phase,
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


def _record(ap: AgentPhase) -> dict[str, Any]:
    return {f.name: getattr(ap, f.name) for f in fields(ap)}


def _agent_phase(raw: Any, where: str) -> AgentPhase:
    if not isinstance(raw, Mapping):
        raise StateError(f"{where} must be a mapping")
    names = {f.name for f in fields(AgentPhase)}
    _check_keys(raw, names, where)
    status = raw.get("status", "pending")
    if status not in AGENT_STATUSES:
        raise StateError(f"{where}: status {status!r} is not one of {', '.join(AGENT_STATUSES)}")
    for key in ("iteration", "max_iterations"):
        value = raw.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise StateError(f"{where}: '{key}' must be a whole number")
    return AgentPhase(**{k: raw[k] for k in names if k in raw})


def _check_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        raise StateError(f"{where}: unknown key {unknown[0]!r}")


def state_path(run_dir: Path) -> Path:
    return run_dir / STATE_FILE


def load_state(run_dir: Path) -> RunState:
    """The run's state. A supervisor reads it dozens of times per phase: while the file
    holds exactly the text this process last wrote or read, the parsed copy is reused (a
    twelve-agent state takes ~15 ms to parse, ~1.5 ms to copy, microseconds to compare)."""
    return copy.deepcopy(_current(run_dir))


def _current(run_dir: Path) -> RunState:
    """The cached state object itself (never handed out): the owner's, or parsed again only
    if the file's text is not what this process last wrote or read."""
    if run_dir in _owned:
        return _owned[run_dir].state
    path = state_path(run_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise StateError(f"{path} does not exist: is {run_dir.name} a council run?") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise StateError(f"cannot read {path}: {exc}") from exc
    cached = _known.get(run_dir)
    if cached is not None and cached[0] == text:
        return cached[1]
    state = _parse(text, path)
    _known[run_dir] = (text, state)
    return state


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


def _save(run_dir: Path, state: RunState, now: bool = False) -> None:
    """Write atomically and remember `state` as the file's content; the caller holds the
    lock and gives up `state` (it becomes the cache). An owner's state is mirrored to the
    file at most every COALESCE seconds and at every phase change (`_Owner.mirror`)."""
    state.updated_at = utc_now()
    owner = _owned.get(run_dir)
    if owner is None:
        text = dump(state)
        atomic_write(state_path(run_dir), text, redacted=True)
        _known[run_dir] = (text, state)
        return
    owner.mirror(run_dir, now)


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


def atomic_write(path: Path, text: str, redacted: bool = False) -> None:
    """Replace path with text so readers see the old or the new file, never a torn one;
    no secret of council's environment in it (redact.py), unless the caller has `redacted`
    it already (state.yaml, redacted in its data). store.atomic_write does it."""
    store.atomic_write(path, text, redacted=redacted)


def locked(run_dir: Path) -> store.Locked:
    """Serialise writers of one run's state (hooks and the supervisor): store.locked."""
    return store.locked(run_dir / ".state.lock")


# The text of state.yaml this process last wrote or read, per run, with its state: a
# supervisor with twelve agents reads and updates the state hundreds of times, and parsing
# YAML each time would put its CPU on the critical path. Any other writer changes the text,
# forcing a fresh parse; callers only ever get copies, so the cached state stays as written.
_known: dict[Path, tuple[str, RunState]] = {}


COALESCE = 0.2  # seconds: the owner writes its mirror at most this often, and at phase changes


@dataclass
class _Owner:
    """The supervisor's hold on a run's state. Its changes (hundreds per phase with a dozen
    agents) are mirrored to state.yaml at most every COALESCE seconds, at once when the phase
    changes, and a timer writes the last one of a burst; so the file is never more than
    COALESCE behind, and a crash loses at most that. Whatever another process did to the file
    is overwritten, and said once in progress.log; a file that cannot be written is said once
    and tried again."""

    state: RunState  # the truth, whatever happens to the file
    written: str | None  # the text the owner last wrote to the mirror
    told: bool = False  # whether progress.log already says the file was tampered with
    lock: threading.RLock = field(default_factory=threading.RLock)
    phase: str | None = None  # the phase the mirror shows
    last: float = 0.0  # when the mirror was last written (monotonic)
    dirty: bool = False
    timer: threading.Timer | None = None

    def mirror(self, run_dir: Path, now: bool = False) -> None:
        with self.lock:
            self.dirty = True
            wait = self.last + COALESCE - time.monotonic()
            if now or self.state.phase != self.phase or wait <= 0:
                self.write(run_dir)
            elif self.timer is None:
                self.timer = threading.Timer(wait, self.flush, (run_dir,))
                self.timer.daemon = True
                self.timer.start()

    def flush(self, run_dir: Path) -> None:
        """Write what is not written yet (the timer, and the owner's exit)."""
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if self.dirty:
                self.write(run_dir)

    def write(self, run_dir: Path) -> None:
        from council import events  # only the supervisor owns a state: hooks never pay for it

        state = self.state
        text = dump(state)
        path = state_path(run_dir)
        self.dirty, self.last = False, time.monotonic()
        try:
            on_disk: str | None = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if on_disk != self.written and not self.told:
            self.told = True
            events.emit(run_dir, "run", f"{path.name} was changed by another process "
                        "(garbled, truncated, replaced or deleted); the supervisor's own "
                        "state is kept and the file rewritten from it")
        try:
            atomic_write(path, text, redacted=True)
        except OSError as exc:
            if self.written is not None:  # said once per failing spell
                events.emit(run_dir, "run", f"cannot write {path.name} "
                            f"({exc.strerror or exc}); the run goes on and tries again at "
                            "the next change")
            self.written = None
            return
        self.written, self.told, self.phase = text, False, state.phase


_owned: dict[Path, _Owner] = {}


@contextmanager
def owned(run_dir: Path) -> Iterator[RunState]:
    """Own the run's state for the length of the block (the supervisor, holding the run's
    lock): read once, then kept in memory and only mirrored to the file. Yields a copy."""
    state = _current(run_dir)
    owner = _owned[run_dir] = _Owner(state, written=_known[run_dir][0], phase=state.phase)
    try:
        yield copy.deepcopy(state)
    finally:
        owner.flush(run_dir)  # the last change reaches the file before anyone else reads it
        _owned.pop(run_dir, None)
        _known.pop(run_dir, None)  # the next reader believes the file again


def update_state(run_dir: Path, change: Callable[[RunState], T], now: bool = False) -> T:
    """Load, change and save the state under the lock; returns (a copy of) what `change`
    returns. `change` works on the cached state itself, so an update costs no copy of the
    whole state; if it fails half-way, the cache is dropped and the file is left as it was.
    An owner's changes need no file lock (no other process writes during a run), only its
    own lock against the thread that writes its mirror. `now` writes the mirror at once: a
    change a crash must not lose, such as the pid of an agent just started (a resume stops
    orphans by the pids it finds in the file)."""
    owner = _owned.get(run_dir)
    with owner.lock if owner else locked(run_dir):
        state = _current(run_dir)
        try:
            result = change(state)
            _save(run_dir, state, now)
        except BaseException:
            if run_dir not in _owned:  # an owner's state is never dropped
                _known.pop(run_dir, None)
            raise
        return copy.deepcopy(result)


RUN_SPEC = "run.json"  # what the run was asked to do, written once: what a rebuild starts from


def create_state(run_dir: Path, state: RunState) -> None:
    import json

    atomic_write(run_dir / RUN_SPEC, json.dumps(
        {"id": state.id, "topic": state.topic, "created_at": state.created_at,
         "options": state.options}, indent=2, ensure_ascii=False) + "\n")
    with locked(run_dir):
        _save(run_dir, copy.deepcopy(state))


def replace_state(run_dir: Path, state: RunState) -> None:
    """Write a state that is not derived from the file (a rebuild): the file is not read."""
    with locked(run_dir):
        _known.pop(run_dir, None)
        _save(run_dir, copy.deepcopy(state))

