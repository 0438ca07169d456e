"""Published reports are snapshots: council copies an agent's output into the run folder the
moment the agent finishes, records the copy's sha256, and every later phase reads that copy.
An agent that edits its original afterwards (its folder stays writable to it in later
phases), or anyone who edits the snapshot, is detected here and named: in progress.log when
council notices, and in the final report's provenance. Nothing an agent does to a file after
publication can change what the council read."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Published:
    sha256: str  # of the snapshot the next phases read
    original_sha256: str  # of the agent's file (differs when the snapshot was cut)
    size: int  # the agent's file, in bytes
    cut_at: int | None = None  # the snapshot's size when the report was over the cap
    full: Path | None = None  # where the whole report is kept then


def full_copy(target: Path) -> Path:
    return target.with_name(f"{target.stem}.full{target.suffix}")


def publish(source: Path, target: Path, cap: int | None = None) -> Published:
    """Copy source to target atomically (readers see the old or the new snapshot, never a
    torn one). A markdown report over `cap` bytes is cut at its last line break before the
    cap, with a note saying so, and kept whole beside the snapshot: the next phases, and
    council's own checks, read what fits."""
    size = source.stat().st_size
    original = _copy(source, target)
    if cap is None or size <= cap or target.suffix != ".md":
        return Published(original, original, size)
    full = full_copy(target)
    os.replace(target, full)
    with source.open("rb") as handle:
        head = handle.read(cap).decode("utf-8", errors="ignore")
    head = head[:head.rfind("\n") + 1] or head
    note = (f"\n\n> **council:** this report is {size:,} bytes, over the run's "
            f"{cap:,}-byte cap (`max_report_bytes`): the next phases were given the text "
            f"above, its first {len(head.encode()):,} bytes. The whole report is "
            f"`{full.name}` in the run folder.\n")
    data = (head + note).encode("utf-8")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    _digests.pop(target, None)
    return Published(hashlib.sha256(data).hexdigest(), original, size, len(data), full)


def _copy(source: Path, target: Path) -> str:
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
            if original is not None and original != (ap.original_sha256 or ap.sha256):
                found.append(f"{seat} changed its {phase} output ({published.name}) in its "
                             "folder after it was published; council used the published "
                             f"snapshot (sha256 {ap.sha256[:12]}…)")
    return found
