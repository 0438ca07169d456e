"""A sample's council run as the evaluation sees it: which run folder answers the question,
whether it is finished, resumable or to start afresh, and what it produced (the final report,
its sources and claims, its integrity figures (integrity.json), and its tokens, dollars and
wall time as council's ledger read them from the CLIs; Inspect cannot meter the CLIs itself).

Each sample has a folder of its own, `RUNS/<configuration>/<question>/`, holding a research
folder for `council run --research-dir` and `wall.json`, the run's wall time summed over
every invocation that worked on it (an interrupted and resumed run counts the time it ran,
not the night between)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from council.errors import CouncilError
from council.evidence import ledger, reportcheck
from council.evidence.ledger import Usage
from council.store import agentfs
from council.store.disk import atomic_write
from council.store.runlock import live_supervisor
from council.store.state import RunEnd, RunState, load_state
from council.store.workspace import Workspace, own_runs

REUSE, RESUME, NEW = "reuse", "resume", "new"
ENDED_BADLY = (RunEnd.FAILED,)
WALL_FILE = "wall.json"
MAX_REPORT_BYTES = 64 << 20
# sources.json and claims.json go into the sample's metadata whole (so a published log bundle
# stands on its own), up to this size each; a larger one is named by its path only.
MAX_LEDGER_BYTES = 512 << 10
SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sample_folder(runs_dir: Path, configuration_slug: str, sample_id: str) -> Path:
    """`RUNS/<configuration>/<question>`: the question's id made safe for a path (an id is
    the user's or a benchmark's text), with a hash so two ids never share a folder."""
    readable = SAFE.sub("-", sample_id).strip("-.")[:40] or "q"
    digest = hashlib.sha256(sample_id.encode()).hexdigest()[:8]
    return runs_dir / configuration_slug / f"{readable}-{digest}"


def decide(state: RunState | None, supervised: bool) -> str:
    """What to do with the latest run of this question: reuse it (done), resume it
    (interrupted or cancelled, or held by a supervisor an earlier evaluation left
    running), or start a new one (none yet, or it failed: the failed folder is kept)."""
    if state is None or state.phase in ENDED_BADLY:
        return NEW
    if state.phase == RunEnd.DONE and not supervised:
        return REUSE
    return RESUME


def latest(research: Path, topic: str) -> tuple[Workspace, RunState] | None:
    """The newest run in `research` that asked exactly this question (an edited question
    is a new run). Only a run council made on this machine (provenance.py): a log folder
    shared with others, or unpacked from a tarball, may hold runs whose "final report" is a
    link to a private key; those are never reused, resumed or read into a sample."""
    for ws in reversed(own_runs(research)):
        try:
            state = load_state(ws.root)
        except CouncilError:
            continue
        if state.topic.strip() == topic.strip():
            return ws, state
    return None


def supervised(ws: Workspace) -> bool:
    return live_supervisor(ws.root) is not None


# ---------------------------------------------------------------------------- wall time

def walls(folder: Path) -> dict[str, float]:
    try:
        data = agentfs.read_json(folder / WALL_FILE)
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()
            if isinstance(v, int | float)} if isinstance(data, dict) else {}


def add_wall(folder: Path, run_id: str, seconds: float) -> None:
    data = walls(folder)
    data[run_id] = round(data.get(run_id, 0.0) + max(seconds, 0.0), 3)
    atomic_write(folder / WALL_FILE, json.dumps(data, indent=1) + "\n")


# ------------------------------------------------------------------------------ outcome

@dataclass(frozen=True)
class Outcome:
    """What a finished run produced."""

    run_id: str
    run_dir: Path
    phase: str
    report: str
    usage: Usage
    wall_s: float
    per_agent: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: int = 0
    claims: dict[str, int] | None = None
    error: str | None = None
    per_phase: dict[str, dict[str, Any]] = field(default_factory=dict)  # Usage.to_dict()s
    # integrity.json's figures (evidence/reportcheck.figures); None: the run has none
    integrity: dict[str, Any] | None = None

    def metadata(self) -> dict[str, Any]:
        """The sample's record of its run (Inspect metadata: plain JSON): where it is, its
        usage per agent, and its source ledger and checked claims themselves."""
        return {
            "run_id": self.run_id, "run_dir": str(self.run_dir), "phase": self.phase,
            "usage": self.usage.to_dict(), "wall_s": round(self.wall_s, 3),
            "per_agent": self.per_agent, "sources": self.sources, "claims": self.claims,
            "sources_json": _ledger(self.run_dir / "sources.json"),
            "claims_json": _ledger(self.run_dir / "claims.json"),
            "error": self.error, "per_phase": self.per_phase, "integrity": self.integrity,
        }


def read_outcome(ws: Workspace, folder: Path) -> Outcome:
    """The run's report, usage, sources and claims, from its folder."""
    state = load_state(ws.root)
    per_agent = {}
    for name, record in state.agents.items():
        used = sum((Usage.from_dict(p.usage) for p in record.phases.values()), Usage())
        per_agent[name] = {"cli": record.cli, "model": record.model, **used.to_dict()}
    return Outcome(
        run_id=state.id, run_dir=ws.root, phase=state.phase,
        report=_report(ws.final_report), usage=ledger.spent(state),
        wall_s=walls(folder).get(state.id, 0.0), per_agent=per_agent,
        sources=_count_sources(ws.root / "sources.json"), claims=_tally(ws.root / "claims.json"),
        error=state.error,
        per_phase={phase: used.to_dict() for phase, used in ledger.per_phase(state).items()},
        integrity=reportcheck.figures(ws))


def _report(path: Path) -> str:
    """The report's first MAX_REPORT_BYTES, read as every file of a run is: no link
    followed, nothing but a plain file."""
    try:
        return agentfs.read(path, MAX_REPORT_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _ledger(path: Path) -> Any:
    """A run's JSON file for the metadata: its content, or its path when it is too large,
    or None when the run has none (a run without verification has no claims.json)."""
    try:
        size = agentfs.size(path)
    except OSError:
        return None
    return _json(path) if size <= MAX_LEDGER_BYTES else {"path": str(path), "bytes": size}


def _json(path: Path, limit: int = MAX_REPORT_BYTES) -> Any:
    try:
        return json.loads(agentfs.read(path, limit + 1)[:limit].decode("utf-8"))
    except (OSError, ValueError):
        return None


def _count_sources(path: Path) -> int:
    data = _json(path)
    sources = data.get("sources") if isinstance(data, dict) else None
    return len(sources) if isinstance(sources, list) else 0


def _tally(path: Path) -> dict[str, int] | None:
    data = _json(path)
    tally = data.get("tally") if isinstance(data, dict) else None
    if not isinstance(tally, dict):
        return None
    return {str(k): int(v) for k, v in tally.items() if isinstance(v, int)}
