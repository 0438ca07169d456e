"""The layout of one run's folder, research/<id>/, and how ids are made and checked.

    research/<id>/state.yaml, progress.log, final-report.md
    research/<id>/<seat>-report.md, <seat>-refined.md     published outputs
    research/<id>/agents/<seat>/                            the seat's working folder (cwd)
    research/<id>/agents/<seat>.dissent/                    its folder for the dissent, beside
                                                             the research folder, not in it
    research/<id>/loops/                                     loop counters and continuation
                                                             prompts, out of the agents' reach
    research/<id>/logs/<seat>-<phase>.jsonl / .stderr.log  the CLI's full output
    research/<id>/work/                                      the agents' JSON drafts and the
                                                             lock files (paths.run_work; a run
                                                             made before has them on top)

Agents work inside their own folder, where each CLI's permission rules let them write
without a shell or a bypass flag; the supervisor publishes their reports to the run folder.
The run folder is 0700: whatever council or an agent writes in it, whatever that file's own
mode, no other user of the machine can reach it.

"The latest run" is the one research/latest names: the link this machine wrote when it made
the run. Not the highest-sorting id: a cloned repository can ship research/2999…/state.yaml.
"""

from __future__ import annotations

import calendar
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from council import graph, paths
from council.errors import RunNotFoundError, UsageError
from council.paths import RUN_ID
from council.store import agentfs, gitignore, provenance
from council.store.state import STATE_FILE

LATEST = "latest"
RUN_MODE = 0o700  # a run folder and the folders council makes in it
LATEST_SLACK_S = 120  # research/latest is written within a second of its run's id
# The published outputs that later phases and the report read by name (graph.py declares
# every phase's output).
FINAL_REPORT = graph.SYNTHESIS.output
COUNTERPOINTS = graph.ANTAGONIST.output
DISSENT = graph.DISSENT.output  # the dissent memo: the strongest case against the answer
CLAIMS = "claims.json"  # council's own: the claims listed, judged and verified
GAPS = "gaps.json"  # the gaps the first coverage judgement found, and who researches each


# A phase as the workspace takes it: its Phase, or its name as a run's records and a hook's
# arguments give it (read here, at that edge: `phase_of`).
PhaseLike = graph.Phase | str


def phase_of(phase: PhaseLike) -> graph.Phase:
    """The Phase itself, from a Phase or the name a record or a hook's argument gives."""
    return phase if isinstance(phase, graph.Phase) else graph.BY_NAME[phase]


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> str:
    """Ids come from users (status, resume): never let one walk out of the research dir."""
    if not RUN_ID.fullmatch(run_id):
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

    def output_name(self, seat: str, phase: PhaseLike) -> str:
        """The file `seat` writes in `phase` (graph.Phase.output). A JSON answer (scope,
        claims, recheck) is the agent's draft: council writes scope.json and claims.json."""
        return phase_of(phase).file(seat)

    def work_dir(self, seat: str, phase: PhaseLike) -> Path:
        """The agent's working folder for `phase`: its cwd, the one place it may write.

        A phase declared with its own folder (the dissent, which runs beside the same seat's
        research) works beside the seat's folder, in agents/<seat>.<phase>/: each CLI keeps
        per-folder settings (gemini's .gemini/settings.json carries the phase's hook), and the
        research agent, which may write anywhere in its own folder, must not reach the memo.
        A seat name has no dot (config.SEAT_NAME), so no seat's own folder bears that name."""
        if phase_of(phase).own_folder:
            return self.root / "agents" / f"{seat}.{_name(phase)}"
        return self.seat_dir(seat)

    def working_output(self, seat: str, phase: PhaseLike) -> Path:
        """Where the agent writes (inside its own folder)."""
        return self.work_dir(seat, phase) / self.output_name(seat, phase)

    def published_output(self, seat: str, phase: PhaseLike) -> Path:
        """Where council publishes it: a report at the top, a JSON draft in `work`."""
        folder = self.work if phase_of(phase).draft else self.root
        return folder / self.output_name(seat, phase)

    @property
    def work(self) -> Path:
        """The run's working files' folder (paths.run_work): drafts and locks."""
        return paths.run_work(self.root)

    def private_home(self, seat: str) -> Path:
        """A HOME for a seat whose CLI can read outside its folder: empty but for what that
        CLI brings, and outside every folder an agent may write to."""
        return self.root / "homes" / seat

    def peers_dir(self, seat: str, phase: PhaseLike) -> Path:
        return self.work_dir(seat, phase) / f"{_name(phase)}-inputs"

    def loop_file(self, seat: str, phase: PhaseLike) -> Path:
        """The running loop's counters, shared by the runner and the agent's hook. Kept out
        of the agent's own (writable) folder, so an agent cannot raise its own cap."""
        return self.root / "loops" / f"{seat}-{_name(phase)}-loop.txt"

    def instructions_file(self, seat: str, phase: PhaseLike) -> Path:
        """The continuation prompt the hook sends back: also out of the agent's reach."""
        return self.root / "loops" / f"{seat}-{_name(phase)}-continue.md"

    def log_file(self, seat: str, phase: PhaseLike) -> Path:
        return self.root / "logs" / f"{seat}-{_name(phase)}.jsonl"

    def stderr_file(self, seat: str, phase: PhaseLike) -> Path:
        return self.root / "logs" / f"{seat}-{_name(phase)}.stderr.log"

    @property
    def final_report(self) -> Path:
        return self.root / FINAL_REPORT


def _name(phase: PhaseLike) -> str:
    """The phase's name, as a file name holds it (no lookup: any name makes a path)."""
    return phase.name if isinstance(phase, graph.Phase) else phase


def check_base(base: Path) -> Path:
    """`base`, refused (UsageError) when it is a link: a cloned repository can ship
    `research` as a link to any folder of the user's, and council would make, list and
    sweep runs there. The user names the real folder instead."""
    if os.path.islink(base):
        raise UsageError(f"the research folder {base} is {agentfs.describe(base)}: council "
                         "does not follow it; remove it, or name the real folder with "
                         "--research-dir")
    return base


def ensure_base(base: Path) -> None:
    """The research folder takes new files (or, not made yet, the folder it would be made
    in does), or a UsageError saying it does not: checked before a run prints its plan or
    asks anything, and making nothing, so a run declined at --confirm leaves no research/
    (create_workspace makes it). The probe is a new file of a random name (O_EXCL |
    O_NOFOLLOW): a link or FIFO planted at any name is neither written through nor waited
    on."""
    check_base(base)
    made = next((p for p in (base, *base.absolute().parents) if os.path.lexists(p)), base)
    try:
        probe = made / f".council-probe-{os.getpid()}-{secrets.token_hex(8)}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot create a run folder in {base}: {exc.strerror or exc}") from exc


def create_workspace(base: Path | None = None) -> Workspace:
    """A new, empty run folder (0700) in `base`, which research/latest then names; `base`
    gets its .gitignore (gitignore.py) if it has none."""
    base = check_base(base or paths.research_dir())
    try:
        base.mkdir(parents=True, exist_ok=True)  # the user's umask decides research/'s mode
        gitignore.ensure(base)
        for _ in range(5):
            root = base / new_run_id()
            try:
                root.mkdir(RUN_MODE)
            except FileExistsError:
                continue
            os.chmod(root, RUN_MODE)  # explicit: a umask can take bits off, never add them
            provenance.record(root)  # before anything else: from now on it is council's
            for sub in ("logs", "agents", "loops", paths.RUN_WORK):
                (root / sub).mkdir(RUN_MODE)
            _point_latest(base, root)
            return Workspace(root)
    except OSError as exc:
        raise UsageError(f"cannot create a run folder in {base}: {exc.strerror}") from exc
    raise UsageError(f"cannot find a free run id in {base}")


def _point_latest(base: Path, root: Path) -> None:
    """research/latest → the newest run, so `tail -F research/latest/progress.log` always
    follows the current run (replaced atomically). A bare id, relative: `latest_id` accepts
    nothing else."""
    tmp = base / f".latest-{root.name}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(root.name)
    os.replace(tmp, base / "latest")


def latest_id(target: str, written: float) -> str | None:
    """The run id that research/latest names, or None. `target` is the link's text: only a
    bare run id, as `_point_latest` writes it (not a path, not "../x", not an id with a
    newline). `written` is the link's own mtime: council writes the link the moment it names
    the run, whose id is that moment in UTC; a link a git checkout made bears the checkout's
    time instead, whatever run it names."""
    if not RUN_ID.fullmatch(target):
        return None
    try:
        made = calendar.timegm(time.strptime(target[:15], "%Y%m%d-%H%M%S"))
    except ValueError:  # 99999999-…: no time at all
        return None
    return target if abs(written - made) <= LATEST_SLACK_S else None


def is_run(root: Path) -> bool:
    """A run folder: a real folder (not a link to one) holding a state.yaml file."""
    try:
        return stat.S_ISDIR(os.lstat(root).st_mode) and \
            stat.S_ISREG(os.lstat(root / STATE_FILE).st_mode)
    except OSError:
        return False


def latest_run(base: Path) -> Workspace | None:
    """The run research/latest names, if it is a link to a bare run id with a state.yaml
    that council made on this machine (provenance.py): a link and a run that came in a
    tarball, its mtime restored, are someone else's."""
    try:
        target = os.readlink(base / LATEST)
        written = os.lstat(base / LATEST).st_mtime
    except OSError:  # missing, or not a link (a file or folder someone else put there)
        return None
    run_id = latest_id(target, written)
    if not run_id or not is_run(base / run_id) or not provenance.is_own(base / run_id):
        return None
    return Workspace(base / run_id)


def active_runs(base: Path | None = None) -> list[Workspace]:
    """The runs of council's own (provenance.py) a live supervisor holds right now
    (runlock.py), oldest first."""
    from council.store.runlock import live_supervisor  # psutil: not for every importer

    return [ws for ws in own_runs(base) if live_supervisor(ws.root) is not None]


def find_run(run_id: str | None, base: Path | None = None,
             require_state: bool = True, act: str | None = None) -> Workspace:
    """The run with that id, or the latest run when no id (or `latest`, as every command
    that takes a run id and `--since` accept) is given. `require_state=False`
    also finds a run folder whose state.yaml is gone (to rebuild it). `act` says what the
    caller will do to the run ("cancel", "resume"): then a run council did not make on this
    machine is refused (provenance.ForeignRunError); without it the run is only read.

    The latest is the run research/latest names (`latest_id`); without such a link, the
    newest run a live supervisor holds: a cloned folder's files are the user's as much as
    council's own (same owner), but it brings no running supervisor. Else the user is asked
    for an id."""
    base = check_base(base or paths.research_dir())
    if run_id is not None and run_id != LATEST:
        root = base / check_run_id(run_id)
        if os.path.islink(root):
            raise RunNotFoundError(f"{root} is {agentfs.describe(root)}, not a run folder")
        marker = STATE_FILE if require_state else "progress.log"
        if not (root / marker).is_file() and not (root / STATE_FILE).is_file():
            raise RunNotFoundError(f"no run {run_id} in {base}")
        if act is not None:
            provenance.require_own(root, act)
        return Workspace(root)
    found = latest_run(base)
    if found is not None:
        return found
    active = active_runs(base)
    if active:
        return active[-1]
    if not list_runs(base):
        raise RunNotFoundError(f"no council runs in {base}")
    raise RunNotFoundError(f"{base / LATEST} ({agentfs.describe(base / LATEST)}) names no run "
                           "this machine made and no run is active: give a run id "
                           "(`council list` shows them)")


def list_runs(base: Path | None = None) -> list[Workspace]:
    """Runs sorted oldest first (ids start with their UTC start time), council's own and
    foreign ones alike: for reading (`own_runs` for acting)."""
    base = check_base(base or paths.research_dir())
    if not base.is_dir():
        return []
    return [Workspace(p) for p in sorted(base.iterdir())
            if RUN_ID.fullmatch(p.name) and is_run(p)]


def own_runs(base: Path | None = None) -> list[Workspace]:
    """The runs of `list_runs` that council made on this machine (provenance.py)."""
    known = provenance.load()
    return [ws for ws in list_runs(base) if provenance.own(ws.root, known)]
