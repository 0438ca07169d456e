"""The layout of one run's folder, research/<id>/, and how ids are made and checked.

    research/<id>/state.yaml, progress.log, final-report.md
    research/<id>/<seat>-report.md, <seat>-refined.md     published outputs
    research/<id>/agents/<seat>/                            the seat's working folder (cwd)
    research/<id>/loops/                                     loop counters and continuation
                                                             prompts, out of the agents' reach
    research/<id>/logs/<seat>-<phase>.jsonl / .stderr.log  the CLI's full output

Agents work inside their own folder, where each CLI's permission rules let them write
without a shell or a bypass flag; the supervisor publishes their reports to the run folder.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from council import paths
from council.errors import RunNotFoundError, UsageError
from council.state import STATE_FILE

RUN_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
OUTPUT_SUFFIX = {"research": "report", "refinement": "refined", "gapfill": "gaps"}
FINAL_REPORT = "final-report.md"
CLAIMS = "claims.json"
COUNTERPOINTS = "counterpoints.md"
DISSENT = "dissent.md"  # the dissent memo: the strongest case against the emerging answer
GAPS = "gaps.json"  # the gaps the first coverage judgement found, and who researches each
# A phase that runs beside the same seat's research works in a folder of its own: each CLI
# keeps per-folder settings (gemini's .gemini/settings.json carries the phase's hook).
OWN_FOLDER = ("dissent",)


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> str:
    """Ids come from users (status, resume): never let one walk out of the research dir."""
    if not RUN_ID.match(run_id):
        raise UsageError(f"{run_id!r} is not a run id (expected YYYYMMDD-HHMMSS-xxxxxx)")
    return run_id


@dataclass(frozen=True)
class Workspace:
    """Paths of one run; pure, so hooks and tests can compute them without I/O."""

    root: Path

    @property
    def id(self) -> str:
        return self.root.name

    def seat_dir(self, seat: str) -> Path:
        return self.root / "agents" / seat

    def output_name(self, seat: str, phase: str) -> str:
        if phase == "synthesis":
            return FINAL_REPORT
        if phase == "scope":
            return "scope-draft.json"  # the agent's answer; council writes scope.json
        if phase == "claims":
            return "claims-draft.json"  # the extractor's list; council adds the verdicts
        if phase == "verification":
            return f"{seat}-verdicts.json"
        if phase == "recheck":
            return "recheck-draft.json"  # the second coverage judgement, after gap fill
        if phase == "antagonist":
            return COUNTERPOINTS
        if phase == "dissent":
            return DISSENT
        return f"{seat}-{OUTPUT_SUFFIX[phase]}.md"

    def work_dir(self, seat: str, phase: str) -> Path:
        """The agent's working folder for `phase`: its cwd, the one place it may write."""
        folder = self.seat_dir(seat)
        return folder / phase if phase in OWN_FOLDER else folder

    def working_output(self, seat: str, phase: str) -> Path:
        """Where the agent writes (inside its own folder)."""
        return self.work_dir(seat, phase) / self.output_name(seat, phase)

    def published_output(self, seat: str, phase: str) -> Path:
        return self.root / self.output_name(seat, phase)

    def private_home(self, seat: str) -> Path:
        """A HOME for a seat whose CLI can read outside its folder: empty but for what that
        CLI brings, and outside every folder an agent may write to."""
        return self.root / "homes" / seat

    def peers_dir(self, seat: str, phase: str) -> Path:
        return self.work_dir(seat, phase) / f"{phase}-inputs"

    def loop_file(self, seat: str, phase: str) -> Path:
        """The running loop's counters, shared by the runner and the agent's hook. Kept out
        of the agent's own (writable) folder, so an agent cannot raise its own cap."""
        return self.root / "loops" / f"{seat}-{phase}-loop.txt"

    def instructions_file(self, seat: str, phase: str) -> Path:
        """The continuation prompt the hook sends back: also out of the agent's reach."""
        return self.root / "loops" / f"{seat}-{phase}-continue.md"

    def log_file(self, seat: str, phase: str) -> Path:
        return self.root / "logs" / f"{seat}-{phase}.jsonl"

    def stderr_file(self, seat: str, phase: str) -> Path:
        return self.root / "logs" / f"{seat}-{phase}.stderr.log"

    @property
    def final_report(self) -> Path:
        return self.root / FINAL_REPORT


def ensure_base(base: Path) -> None:
    """The research folder exists and takes new files, or a UsageError saying it does not:
    checked before a run prints its plan or asks anything."""
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / f".council-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot create a run folder in {base}: {exc.strerror or exc}") from exc


def create_workspace(base: Path | None = None) -> Workspace:
    base = base or paths.research_dir()
    try:
        base.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            root = base / new_run_id()
            try:
                root.mkdir()
            except FileExistsError:
                continue
            (root / "logs").mkdir()
            (root / "agents").mkdir()
            (root / "loops").mkdir()
            _point_latest(base, root)
            return Workspace(root)
    except OSError as exc:
        raise UsageError(f"cannot create a run folder in {base}: {exc.strerror}") from exc
    raise UsageError(f"cannot find a free run id in {base}")


def _point_latest(base: Path, root: Path) -> None:
    """research/latest → the newest run, so `tail -F research/latest/progress.log` always
    follows the current run (replaced atomically)."""
    tmp = base / f".latest-{root.name}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(root.name)
    os.replace(tmp, base / "latest")


def find_run(run_id: str | None, base: Path | None = None,
             require_state: bool = True) -> Workspace:
    """The run with that id, or the latest run when no id is given. `require_state=False`
    also finds a run folder whose state.yaml is gone (to rebuild it)."""
    base = base or paths.research_dir()
    if run_id is not None:
        root = base / check_run_id(run_id)
        marker = STATE_FILE if require_state else "progress.log"
        if not (root / marker).is_file() and not (root / STATE_FILE).is_file():
            raise RunNotFoundError(f"no run {run_id} in {base}")
        return Workspace(root)
    runs = list_runs(base)
    if not runs:
        raise RunNotFoundError(f"no council runs in {base}")
    return runs[-1]


def list_runs(base: Path | None = None) -> list[Workspace]:
    """Runs sorted oldest first (ids start with their UTC start time)."""
    base = base or paths.research_dir()
    if not base.is_dir():
        return []
    return [
        Workspace(p)
        for p in sorted(base.iterdir())
        if RUN_ID.match(p.name) and (p / STATE_FILE).is_file()
    ]
