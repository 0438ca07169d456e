"""Published reports are snapshots: council copies an agent's output into the run folder the
moment the agent finishes, records the copy's sha256, and every later phase reads that copy.
An agent that edits its original afterwards (its folder stays writable to it in later
phases), or anyone who edits the snapshot, is detected here and named: in progress.log when
council notices, and in the final report's provenance. Nothing an agent does to a file after
publication can change what the council read."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from council.state import RunState
from council.workspace import Workspace

# The synthesis is stamped by council after publication, so it is no snapshot.
UNCHECKED = ("synthesis",)
_CHUNK = 1 << 20
_digests: dict[Path, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, sha256)


def digest(path: Path) -> str | None:
    """The file's sha256, or None if it is gone. A file whose size and mtime have not
    changed since it was last hashed is not read again."""
    try:
        info = path.stat()
    except OSError:
        return None
    known = _digests.get(path)
    if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
        return known[2]
    sha = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                sha.update(chunk)
    except OSError:
        return None
    _digests[path] = (info.st_mtime_ns, info.st_size, sha.hexdigest())
    return sha.hexdigest()


def publish(source: Path, target: Path) -> str:
    """Copy source to target atomically (readers see the old or the new snapshot, never a
    torn one); returns the snapshot's sha256."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    sha = hashlib.sha256()
    with source.open("rb") as src, tmp.open("wb") as dst:
        while chunk := src.read(_CHUNK):
            sha.update(chunk)
            dst.write(chunk)
    os.replace(tmp, target)
    _digests.pop(target, None)
    return sha.hexdigest()


def changes(ws: Workspace, state: RunState) -> list[str]:
    """Every snapshot, or original, that no longer matches what was published: one sentence
    each, the same sentence each time it is found (so a caller can tell new ones)."""
    found = []
    for seat, rec in state.agents.items():
        for phase, ap in rec.phases.items():
            if phase in UNCHECKED or not ap.usable or not ap.sha256:
                continue
            published = ws.published_output(seat, phase)
            if digest(published) != ap.sha256:
                found.append(f"the published {phase} output of {seat} ({published.name}) was "
                             f"changed or removed after publication (sha256 "
                             f"{ap.sha256[:12]}… no longer matches)")
            original = digest(ws.working_output(seat, phase))
            if original is not None and original != ap.sha256:
                found.append(f"{seat} changed its {phase} output ({published.name}) in its "
                             "folder after it was published; council used the published "
                             f"snapshot (sha256 {ap.sha256[:12]}…)")
    return found
