"""Published reports are snapshots: council copies an agent's output into the run folder the
moment the agent finishes, records the copy's sha256, and every later phase reads that copy.
An agent that edits its original afterwards (its folder stays writable to it in later
phases), or anyone who edits the snapshot, is detected here and named: in progress.log when
council notices, and in the final report's provenance. Nothing an agent does to a file after
publication can change what the council read.

What an agent left is never trusted: its report is captured (`capture`) through agentfs,
bounded, into a file of council's before anything is scrubbed, judged or published from it,
and its working copy is only ever hashed through agentfs, bounded."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from council.store import agentfs, disk, loop
from council.store.state import RunState
from council.store.workspace import Workspace, phase_of

_CHUNK = 1 << 20
_digests: dict[Path, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, sha256)


def digest(path: Path, bound: int | None = None) -> str | None:
    """The file's sha256, or None if it is gone or is not a plain file (within `bound`
    bytes, when one is given). A file whose size and mtime have not changed since it was
    last hashed is not read again."""
    try:
        return _digest(path, bound)
    except OSError:
        return None


def _digest(path: Path, bound: int | None) -> str:
    """The sha256 of the plain file at `path`, opened through agentfs (no link followed, no
    FIFO waited on); raises FileNotFoundError, agentfs.UnsafeFile, or Refused for a file
    over `bound`."""
    fd = agentfs.open_regular(path)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if bound is not None and info.st_size > bound:
            raise Refused(path, _oversize(info.st_size, bound))
        known = _digests.get(path)
        if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
            return known[2]
        sha = hashlib.sha256()
        left = info.st_size if bound is None else bound
        while left > 0 and (chunk := handle.read(min(_CHUNK, left))):
            left -= len(chunk)
            sha.update(chunk)
    _digests[path] = (info.st_mtime_ns, info.st_size, sha.hexdigest())
    return sha.hexdigest()


class Refused(agentfs.UnsafeFile):
    """What an agent left as its report is not a plain file within the bound; `what` says
    what stood there ("a link to /root/.ssh/id_ed25519", "a FIFO", "a file of … bytes")."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} is {what}")
        self.what = what


def _oversize(size: int, bound: int) -> str:
    return f"a file of {size:,} bytes, over the {bound:,}-byte bound"


def capture(source: Path, target: Path, bound: int) -> int:
    """Copy the report an agent left at `source` into council's own file `target` (outside
    every agent's folder), at most `bound` bytes, and return its size: the one read of the
    agent's file, after which its text is scrubbed, judged and published from `target`
    alone, so nothing the agent does to its file in between can change what is published.
    Raises FileNotFoundError when there is no report, and Refused when it is anything but
    a regular file with one link (a link, FIFO, device, hard link) or claims more than
    `bound` bytes (a sparse terabyte is refused before a byte of it is read)."""
    try:
        fd = agentfs.open_regular(source)
    except FileNotFoundError:
        raise
    except agentfs.UnsafeFile as exc:
        raise Refused(source, agentfs.describe(source)) from exc
    with os.fdopen(fd, "rb", buffering=0) as src:
        size = os.fstat(fd).st_size
        if size > bound:
            raise Refused(source, _oversize(size, bound))
        copied = 0

        def chunks() -> Iterator[bytes]:
            nonlocal copied
            # One byte past the bound tells a file that grew after it was measured.
            while chunk := src.read(min(_CHUNK, bound + 1 - copied)):
                copied += len(chunk)
                if copied > bound:
                    raise Refused(source, _oversize(copied, bound))
                yield chunk

        disk.atomic_write(target, chunks(), redacted=True, durable=False, mode=0o644)
    _digests.pop(target, None)
    return copied


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
    council's own checks, read what fits. `source` is council's own file (an agent's report
    as `capture` took it), never a path in an agent's folder."""
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
    disk.atomic_write(target, data, redacted=True, durable=False, mode=0o644)
    _digests.pop(target, None)
    return Published(hashlib.sha256(data).hexdigest(), original, size, len(data), full)


def _copy(source: Path, target: Path) -> str:
    sha = hashlib.sha256()

    def chunks() -> Iterator[bytes]:
        with source.open("rb") as src:
            while chunk := src.read(_CHUNK):
                sha.update(chunk)
                yield chunk

    disk.atomic_write(target, chunks(), redacted=True, durable=False, mode=0o644)
    _digests.pop(target, None)
    return sha.hexdigest()


def changes(ws: Workspace, state: RunState) -> list[str]:
    """Every snapshot, or original, that no longer matches what was published: one sentence
    each, the same sentence each time it is found (so a caller can tell new ones). The
    originals are the agents' own files: hashed through agentfs, within the run's report
    bound; one that is now a link, a FIFO or a flood counts as changed."""
    bound = loop.report_bound(state.options.max_report_bytes)
    found = []
    for seat, rec in state.agents.items():
        for name, ap in rec.phases.items():
            if not ap.usable or not ap.sha256:
                continue
            phase = phase_of(name)
            if not phase.snapshot:  # changed by council after publication: the final report
                continue
            published = ws.published_output(seat, phase)
            if digest(published) != ap.sha256:
                found.append(f"the published {name} output of {seat} ({published.name}) was "
                             f"changed or removed after publication (sha256 "
                             f"{ap.sha256[:12]}… no longer matches)")
            try:
                original: str | None = _digest(ws.working_output(seat, phase), bound)
            except FileNotFoundError:
                original = None
            except OSError:  # no longer a plain file within the bound: changed
                original = ""
            if original is not None and original != (ap.original_sha256 or ap.sha256):
                found.append(f"{seat} changed its {name} output ({published.name}) in its "
                             "folder after it was published; council used the published "
                             f"snapshot (sha256 {ap.sha256[:12]}…)")
    return found
