"""What council does in an agent's folder, where the agent (or a page that turned it) may
have left anything: a link to ~/.ssh/id_ed25519 or /proc/self/environ named as its report, a
FIFO, a sparse terabyte, a link at the name of the next phase's prompt or inputs folder, an
AGENTS.override.md that steers its own next phase.

- At a phase's start the folder is a real folder (`own_folder`); every file a CLI would load
  from it as instructions or settings is moved out of the way (`quarantine`, again before
  each of codex's turns, since each `codex exec resume` reads them anew); the prompt and
  the inputs are written through agentfs, and whatever stood at their names is removed
  without being followed (`put`, `copy_inputs`).
- At a phase's end the report is read once, through agentfs and bounded, into a capture of
  council's outside every agent's folder (`take_report`); it is scrubbed there, and the
  judging and publishing that follow read the capture alone. A report that is not a plain
  file within the bound fails the seat and is removed without being followed.

Every read and write of a path in an agent's folder goes through agentfs; nothing here
follows a link an agent made. progress.log says whenever something hostile stood there."""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from council import clis
from council.agents import adapters
from council.errors import CouncilError
from council.store import agentfs, events, redact, snapshots
from council.store.workspace import Workspace

# The files each CLI loads from its working folder as standing instructions or settings, by
# their names at the folder's top (each CLI also looks in the folders above, which are
# council's): each CLI's `memory_files` and `config_entries` (clis.py), and what its adapter
# finds besides (`memory_files`: names the user's config adds). An agent (or a page that
# injected a prompt into it) could plant one during a phase to steer the next, so none, of any
# CLI (a seat's fallback may run another CLI there), survives into a new phase.
MEMORY_FILES = tuple(n for cli in clis.REGISTRY.values() for n in cli.memory_files)
CONFIG_ENTRIES = tuple(n for cli in clis.REGISTRY.values() for n in cli.config_entries)
# Claude reads a CLAUDE.md of a subfolder when it works there, and gemini 0.61 loads a
# GEMINI.md of a subfolder its tools touch (loadJitSubdirectoryMemory): looked for at any
# depth. Every name is compared in any case: on a case-insensitive disk (macOS's) a CLI that
# opens CLAUDE.md reads the Claude.MD an agent wrote.
NESTED = tuple(n for cli in clis.REGISTRY.values() for n in cli.nested_memory)
# The walk lists at most this many entries; past it the seat fails, saying so, rather than
# start a CLI in a folder council could not check (an agent could leave millions).
WALK_BUDGET = 10_000


class FolderTooLarge(CouncilError):
    """The seat's folder holds more entries than the quarantine walk lists."""


def own_folder(ws: Workspace, seat: str, phase: str) -> Path:
    """The seat's working folder for `phase`, each of its folders below the run's agents/
    a real folder: one an agent swapped for a link (or anything else) is removed without
    being followed and made again."""
    folder = ws.work_dir(seat, phase)
    agents = ws.root / "agents"
    try:
        parts = folder.relative_to(agents).parts
    except ValueError:  # a layout without agents/: nothing of an agent's above it
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    agents.mkdir(exist_ok=True)
    current = agents
    for part in parts:
        parent, current = current, current / part
        what = agentfs.describe(current)
        if what == "a folder":
            continue
        if what != "missing":
            agentfs.remove(parent, part)
            events.emit(ws.root, phase, f"warning: its folder {current.name} was {what}; "
                        "removed without following it, and made again", agent=seat)
        current.mkdir()
    return folder


def quarantine(ws: Workspace, seat: str, phase: str) -> None:
    """Move every instruction or settings file a CLI would load from the seat's folder to
    loops/quarantine/ (out of every agent's reach), at the start of each phase and before
    each codex turn. Entries are moved themselves, never what they name; a link, FIFO,
    device or hard-linked file is removed instead, so no file of the run points outside it.
    FolderTooLarge, before anything is moved, when the folder holds more than WALK_BUDGET
    entries: the seat fails with that reason."""
    folder = ws.work_dir(seat, phase)
    top, below = set(), set()
    for adapter in adapters():
        at_top, at_any_depth = adapter.memory_files(folder)
        top |= {n.casefold() for n in at_top}
        below |= {n.casefold() for n in at_any_depth}
    kept = [cli.kept for cli in clis.REGISTRY.values() if cli.kept is not None]
    skip = {k.name for k in kept}
    for rel in instruction_entries(folder, top, below, WALK_BUDGET, skip):
        _set_aside(ws, seat, phase, folder, rel)
    for folder_kept in kept:
        _kept_folder(ws, seat, phase, folder, folder_kept)


def instruction_entries(folder: Path, top: Iterable[str], below: Iterable[str],
                        budget: int = WALK_BUDGET, skip: Iterable[str] = ()) -> list[str]:
    """The paths (relative to `folder`) of the entries a CLI would load: those whose path is
    one of `top`, and those below the top whose path ends with one of `below` (names, or
    relative paths), compared in any case (casefolded). Walked breadth first, without
    following a link or entering a folder that goes whole (nor a folder of `skip`, a CLI's
    own that `_kept_folder` sorts); FolderTooLarge past `budget` entries."""
    skipped = frozenset(skip)
    exact = frozenset(top)
    names = frozenset(n for n in below if "/" not in n)
    paths = tuple(f"/{n}" for n in below if "/" in n)
    found: list[str] = []
    pending, seen = deque([""]), 0
    while pending:
        rel = pending.popleft()
        entries = []
        try:
            with os.scandir(folder / rel) as listing:
                for entry in listing:
                    seen += 1
                    if seen > budget:
                        raise FolderTooLarge(
                            f"its folder holds more than {budget:,} entries, too many to "
                            "check for instruction files a CLI would load: not started")
                    entries.append(entry)
        except OSError:
            continue  # gone, or not a folder any more: nothing to load there
        for entry in sorted(entries, key=lambda e: e.name):
            path = f"{rel}/{entry.name}" if rel else entry.name
            key = path.casefold()
            if key in exact or (rel and (entry.name.casefold() in names
                                         or key.endswith(paths))):
                found.append(path)
            elif entry.is_dir(follow_symlinks=False) and path not in skipped:
                pending.append(path)
    return found


def _kept_folder(ws: Workspace, seat: str, phase: str, folder: Path, kept: clis.KeptFolder
                 ) -> None:
    """A CLI's own folder (gemini's .gemini/) keeps only council's own: its settings files
    (plain files; the adapter rewrites them at the start) and its files kept while empty;
    its commands, skills, agents, policies, memory files and anything else go. A kept-empty
    file that held anything is replaced by an empty one."""
    where = folder / kept.name
    what = agentfs.describe(where)
    if what == "missing":
        return
    if what != "a folder":
        _set_aside(ws, seat, phase, folder, kept.name)
        return
    with os.scandir(where) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        info = os.lstat(where / name)
        plain = stat.S_ISREG(info.st_mode) and info.st_nlink == 1
        if plain and (name in kept.files or (name in kept.empty and not info.st_size)):
            continue
        _set_aside(ws, seat, phase, folder, f"{kept.name}/{name}")
        if name in kept.empty:
            agentfs.write(folder, f"{kept.name}/{name}", b"")


def _set_aside(ws: Workspace, seat: str, phase: str, folder: Path, rel: str) -> None:
    path = folder / rel
    try:
        info = os.lstat(path)
    except OSError:
        return
    what = agentfs.describe(path)
    if stat.S_ISDIR(info.st_mode):
        # codex's sandbox leaves an empty .codex/ and .agents/ (its mount points) after every
        # command: nothing to load, and nothing an agent wrote.
        with suppress(OSError):
            os.rmdir(path)  # only an empty folder goes; one with entries is moved below
            return
    if stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode) and info.st_nlink == 1):
        target = _quarantine_path(ws, f"{seat}-{phase}-{rel.replace('/', '--')}")
        os.rename(path, target)  # moves the entry itself: a folder's links stay unfollowed
        if stat.S_ISDIR(info.st_mode):
            _defuse(target)
        events.emit(ws.root, phase, f"moved {rel}, which an agent wrote into its folder, "
                    f"out of the way: {target}", agent=seat)
        return
    agentfs.remove(folder, rel)
    events.emit(ws.root, phase, f"removed {rel} from its folder: it was {what} (not "
                "followed)", agent=seat)


def _quarantine_path(ws: Workspace, name: str) -> Path:
    """A free name in loops/quarantine/: a later phase's planted file never replaces an
    earlier one's."""
    folder = ws.root / "loops" / "quarantine"
    folder.mkdir(parents=True, exist_ok=True)
    target, n = folder / name, 1
    while os.path.lexists(target):
        target, n = folder / f"{name}.{n}", n + 1
    return target


def _defuse(root: Path) -> None:
    """Unlink every link, FIFO, device or hard-linked file in a folder council moved into
    quarantine: nothing kept in the run names a file outside it."""
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    pending.append(Path(entry.path))
                elif not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                    os.unlink(entry.path)


def put(ws: Workspace, seat: str, phase: str, name: str, data: bytes | str) -> Path:
    """Write council's file `name` (a phase's prompt) into the seat's folder through agentfs,
    redacted like every file council writes (a topic or an earlier report may hold a
    secret): whatever stood there (a link to a file of the user's, a FIFO, a folder) is
    removed, not written through, and progress.log says so. Returns its path."""
    folder = ws.work_dir(seat, phase)
    what = agentfs.describe(folder / name)
    if what not in ("missing", "a regular file"):
        agentfs.remove(folder, name)
        events.emit(ws.root, phase, f"warning: {name} in its folder was {what}; removed "
                    "without following it", agent=seat)
    if isinstance(data, bytes):
        data = redact.clean(data.decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")
    else:
        data = redact.clean(data)
    agentfs.write(folder, name, data)
    return folder / name


def copy_inputs(ws: Workspace, seat: str, phase: str, inputs: Mapping[str, Path],
                bound: int) -> None:
    """The phase's inputs folder (`<phase>-inputs/`), made afresh: whatever stood at its
    path is removed without being followed, and each input (a file council published) is
    copied in through agentfs, at most `bound` bytes. Agents read other reports from inside
    their own folder, where every CLI may read."""
    if not inputs:
        return
    folder, rel = ws.work_dir(seat, phase), ws.peers_dir(seat, phase).name
    what = agentfs.fresh_dir(folder, rel)
    if what not in (None, "a folder"):
        events.emit(ws.root, phase, f"warning: {rel} in its folder was {what}; removed "
                    "without following it", agent=seat)
    for name, source in inputs.items():
        agentfs.write(folder, f"{rel}/{name}", agentfs.read(source, bound))


@dataclass(frozen=True)
class Taken:
    """The agent's report as council took it at the end of the phase."""

    capture: Path | None  # council's scrubbed copy; None when there is none to judge
    error: str | None = None  # why the seat fails because of its report, if it does


def capture_path(ws: Workspace, seat: str, phase: str) -> Path:
    return ws.root / "loops" / f"{seat}-{phase}-report.capture"


def take_report(ws: Workspace, seat: str, phase: str, bound: int,
                found: redact.Secrets) -> Taken:
    """Read the seat's report once (agentfs, at most `bound` bytes) into council's capture
    and scrub council's secrets from it; the agent's own file is rewritten from the
    scrubbed capture only when it held one. Anything but a plain file within the bound is
    not taken: it is removed from the agent's folder without being followed, progress.log
    names what it was, and the seat fails. Blocking file work: run it off the event loop."""
    report = ws.working_output(seat, phase)
    folder, name = report.parent, report.name
    capture = capture_path(ws, seat, phase)
    try:
        snapshots.capture(report, capture, bound)
    except FileNotFoundError:
        return Taken(None)
    except snapshots.Refused as exc:
        with suppress(OSError):
            agentfs.remove(folder, name)
        events.emit(ws.root, phase, f"warning: its report is {exc.what}: not published; "
                    "removed from its folder without following it", agent=seat)
        return Taken(None, f"its report was {_kind(exc.what)}: not published")
    except OSError as exc:
        return Taken(None, f"its report could not be read ({exc.strerror or exc})")
    try:
        names = redact.scrub_file(capture, found)
    except OSError as exc:  # held a secret, cannot be rewritten: nothing of it is kept
        capture.unlink(missing_ok=True)
        _empty(folder, name)
        events.emit(ws.root, phase, "warning: its report held a secret and could not be "
                    f"redacted ({exc.strerror or exc}); emptied", agent=seat)
        return Taken(None, "its report held a secret that could not be redacted")
    for held in names:
        events.emit(ws.root, phase, f"warning: its report held the value of {held}; "
                    "redacted", agent=seat)
    if names:  # the agent's own copy, which a resumed or later phase may read, too
        try:
            agentfs.write(folder, name, capture.read_bytes())
        except OSError:
            _empty(folder, name)
    return Taken(capture)


def _kind(what: str) -> str:
    """What stood there, without a link's target or a size: the seat's error is classified
    by its words (failover.py), and those are the agent's to choose."""
    if what.startswith("a link"):
        return "a link, not a plain file"
    if what.startswith("a file of"):
        return "larger than the report bound"
    return f"{what}, not a plain file"


def _empty(folder: Path, name: str) -> None:
    """The agent's file emptied (replaced, not truncated through a link), or else removed."""
    try:
        agentfs.write(folder, name, b"")
    except OSError:
        with suppress(OSError):
            agentfs.remove(folder, name)


def scrub_logs(ws: Workspace, seat: str, phase: str, found: redact.Secrets) -> None:
    """Scrub council's secrets from the CLI's logs (council's own files, written by spawn).
    A log that is not a plain file is removed, never followed."""
    for what, path in (("output log", ws.log_file(seat, phase)),
                       ("error log", ws.stderr_file(seat, phase))):
        stood = agentfs.describe(path)
        if stood == "missing":
            continue
        if stood != "a regular file":
            with suppress(OSError):
                agentfs.remove(path.parent, path.name)
            events.emit(ws.root, phase, f"warning: its {what} was {stood}; removed without "
                        "following it", agent=seat)
            continue
        try:
            names = redact.scrub_file(path, found)
        except OSError as exc:  # held a secret, cannot be rewritten: emptied, never kept
            _empty(path.parent, path.name)
            events.emit(ws.root, phase, f"warning: its {what} held a secret and could not "
                        f"be redacted ({exc.strerror or exc}); emptied", agent=seat)
            continue
        for held in names:
            events.emit(ws.root, phase, f"warning: its {what} held the value of {held}; "
                        "redacted", agent=seat)
