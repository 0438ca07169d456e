"""`council eval … --shard I/N`: worker I of N runs its share of the eval set into the log
folder every worker shares, on Inspect's own worker protocol (inspect_ai/_eval/
eval_set_selection.py, eval_set_manifest.py), so that Inspect's resume and retry rules hold
and council grows no scheduler.

The unit of work is one Inspect task: one configuration × one slice of SLICE questions. The
same tasks, with the same identifiers, make up the eval set with or without --shard, which
is what lets the same command without --shard close the set (Inspect's eval set finds every
shard's log by its task identifier, reuses it, and retries what is missing or failed).

A worker:
1. captures the eval set's manifest (INSPECT_EVAL_SET_CAPTURE: every task and its
   identifier, nothing run);
2. takes the tasks whose place in the manifest is I-1 modulo N, a partition, so no two
   workers ever run the same task, however they interleave;
3. leaves out those of its tasks whose newest log in DIR is finished and fully scored, and
   resumes the others from their newest log, if any (Inspect reuses the log's finished
   samples, recovering them from its sample buffer if the worker was killed);
4. runs them with INSPECT_EVAL_SET_SELECTION into DIR, stamped with one eval set id every
   worker shares (DIR/.eval-set-id, the file Inspect's own eval set reads).

Each worker holds its own per-vendor slots (slots.py: file locks on its own machine)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from council.errors import CouncilError, UsageError
from council.store import agentfs

SLICE = 5  # questions per task: 100 questions × 3 configurations are 60 tasks to share
SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
EVAL_SET_ID_FILE = ".eval-set-id"  # Inspect's own (evalset.eval_set_id_for_log_dir)
# What that file may hold: Inspect's own ids (a short uuid), set_id's, one a person chose.
SET_ID_CHARS = 128
SET_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{SET_ID_CHARS - 1}}}")
SET_ID_BYTES = 4096  # read at most this much of it: an id with room for a newline or spaces


class ShardError(UsageError):
    """A --shard that is not I/N with 1 ≤ I ≤ N."""


class SocketPathTooLong(CouncilError):
    """Inspect's worker mode binds a Unix socket in its data folder, whose path is too long."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as written
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    """`I/N` → Shard, or one line saying what is wrong."""
    found = SHARD.fullmatch(text)
    if found is None:
        raise ShardError(f"--shard {text!r}: write I/N, worker I of N (e.g. 1/4)")
    index, count = int(found[1]), int(found[2])
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text}: I must be between 1 and N (1 ≤ {index} ≤ {count} "
                         "does not hold)")
    return Shard(index, count)


def slices(questions: int, size: int = SLICE) -> list[tuple[int, int | None]]:
    """The (start, stop) of each task's questions. One slice of all of them when they fit in
    one: (0, None), the task an evaluation of few questions has always had."""
    if questions <= size:
        return [(0, None)]
    return [(start, start + size) for start in range(0, questions, size)]


def share(identifiers: Sequence[str], shard: Shard) -> list[str]:
    """This worker's tasks: those at place I-1 modulo N in the manifest's order."""
    return [ident for place, ident in enumerate(identifiers)
            if place % shard.count == shard.index - 1]


def set_id(identifiers: Sequence[str]) -> str:
    """The eval set id every worker of this set derives alike, from its tasks."""
    digest = hashlib.sha256("\n".join(sorted(identifiers)).encode()).hexdigest()[:16]
    return f"council-{digest}"


def shared_set_id(log_dir: Path, identifiers: Sequence[str]) -> str:
    """DIR/.eval-set-id: the one there (an earlier run's, another worker's), else this set's
    own, created exclusively so two workers starting at once agree."""
    path = log_dir / EVAL_SET_ID_FILE
    wanted = set_id(identifiers)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
    except FileExistsError:
        return _existing_set_id(path) or wanted
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(wanted)
    return wanted


def _existing_set_id(path: Path) -> str | None:
    """The eval set id in the file at `path` (None: empty). It goes into every log of the set,
    so it is read as what an agent leaves is (agentfs: no link followed, a plain file only,
    never waited on, bounded), and must be an id: else the UsageError naming the fix."""
    fix = "remove it, or give another --log-dir"
    try:
        data = agentfs.read(path, SET_ID_BYTES + 1)
    except (agentfs.UnsafeFile, PermissionError) as exc:
        raise UsageError(f"{exc} (it holds the eval set's id); {fix}") from None
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        text = None
    if text is None or len(data) > SET_ID_BYTES or (text and not SET_ID.fullmatch(text)):
        raise UsageError(f"{path} is not an eval set id (letters, digits, '.', '_' and '-', "
                         f"at most {SET_ID_CHARS}); {fix}")
    return text or None


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


@dataclass(frozen=True)
class Planned:
    identifier: str
    samples: int
    configuration: str


def capture(run: Callable[[], Any]) -> list[Planned]:
    """The eval set's tasks, as Inspect's capture mode lists them: `run` calls eval_set,
    which writes the manifest and exits (SystemExit) without running or touching DIR."""
    from inspect_ai._eval.eval_set_manifest import INSPECT_EVAL_SET_CAPTURE, EvalSetCapture

    with tempfile.TemporaryDirectory(prefix="council-capture-") as tmp:
        path = Path(tmp) / "manifest.json"
        with _env(INSPECT_EVAL_SET_CAPTURE, str(path)):
            try:
                run()
            except SystemExit as exc:
                if exc.code not in (0, None):
                    raise
        manifest = EvalSetCapture.model_validate_json(path.read_bytes())
    return [Planned(t.identifier, t.samples, str(t.args.get("configuration", "?")))
            for t in sorted(manifest.tasks, key=lambda t: t.sequence)]


def read_log(location: str, header_only: bool = False, attempts: int = 5) -> Any | None:
    """A log, read while another worker may be replacing it; None if it stays unreadable.

    Inspect writes each log whole and renames it into place, but its reader takes the file's
    size and then reads the tail by name, so a rename in between reads as a torn zip ("EOCD
    not found"). Such a read is tried again, as long as the file changed under it; a file
    that fails to read and did not change is broken, not busy."""
    from inspect_ai.log import read_eval_log

    for _ in range(attempts):
        before = _identity(location)
        try:
            return read_eval_log(location, header_only=header_only)
        except Exception:  # a torn, truncated or foreign file: Inspect raises many kinds
            if before is None or _identity(location) in (before, None):
                return None
    return None


T = TypeVar("T")
TORN_TRIES = 3  # a torn read needs a rename within microseconds of it: rare, never thrice


def torn(exc: BaseException) -> bool:
    """Whether `exc` is a log read torn by another worker's rename (read_log), however
    Inspect wrapped it: its zip reader's "EOCD not found", or a bad zip."""
    stack, seen = [exc], set()
    while stack:
        error = stack.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, zipfile.BadZipFile) or (
                isinstance(error, ValueError) and "EOCD not found" in str(error)):
            return True
        stack += [e for e in (error.__cause__, error.__context__) if e is not None]
        if isinstance(error, BaseExceptionGroup):
            stack += list(error.exceptions)
    return False


def again_if_torn(run: Callable[[], T]) -> T:
    """`run`, again (TORN_TRIES times in all) when it fails on a torn read: Inspect's eval
    set reads every log in the folder before it runs anything, and another worker may be
    renaming one in just then. `run` must be safe to repeat (a worker recomputes what it
    has left to do from the logs, as the same command run again would)."""
    for attempt in range(1, TORN_TRIES + 1):
        try:
            return run()
        except Exception as exc:
            if attempt == TORN_TRIES or not torn(exc):
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _identity(location: str) -> tuple[int, int, int] | None:
    """What changes when a log is rewritten or replaced: inode, size, modification time."""
    path = unquote(urlsplit(location).path) if location.startswith("file://") else location
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def newest_logs(log_dir: Path, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Task identifier → the header of its newest readable log in DIR (every worker's).
    A log that cannot be read is left out (its task counts as not done) and named to
    `warn`."""
    from inspect_ai._eval.evalset import task_identifier
    from inspect_ai.log import list_eval_logs

    newest: dict[str, Any] = {}
    for info in sorted(list_eval_logs(str(log_dir), recursive=False),
                       key=lambda info: info.mtime or 0):
        header = read_log(info.name, header_only=True)
        if header is None:
            if warn is not None:
                warn(f"council: cannot read the log {info.name}; its task counts as not done")
            continue
        newest[task_identifier(header, None)] = header
    return newest


def scored(header: Any) -> list[Any]:
    """The samples of a log that were scored without error."""
    full = read_log(header.location)
    return [s for s in (full.samples if full else None) or [] if s.scores and not s.error]


def finished(header: Any, samples: int) -> bool:
    """Whether a task's log needs no more work: ended well, every sample scored."""
    return header.status == "success" and not header.invalidated and \
        len(scored(header)) >= samples


def selection(eval_set_id: str, todo: Sequence[str], logs: dict[str, Any]) -> str:
    """An EvalSetSelection document: the tasks to run, each resumed from its newest log."""
    from inspect_ai._eval.eval_set_selection import EvalSetSelection, EvalSetSelectionTask

    tasks = [EvalSetSelectionTask(identifier=ident,
                                  resume=logs[ident].location if ident in logs else None)
             for ident in todo]
    return EvalSetSelection(version=1, eval_set_id=eval_set_id, tasks=tasks) \
        .model_dump_json(exclude_none=True)


@contextmanager
def selected(document: str) -> Iterator[None]:
    """INSPECT_EVAL_SET_SELECTION naming a file that holds `document`, for the block."""
    from inspect_ai._eval.eval_set_selection import INSPECT_EVAL_SET_SELECTION

    with tempfile.TemporaryDirectory(prefix="council-selection-") as tmp:
        path = Path(tmp) / "selection.json"
        path.write_text(document, encoding="utf-8")
        with _env(INSPECT_EVAL_SET_SELECTION, str(path)):
            yield


@contextmanager
def socket_path_named() -> Iterator[None]:
    """A worker always starts Inspect's ACP server (selection mode turns it on), a Unix
    socket in Inspect's data folder (`$XDG_DATA_HOME/inspect_ai/acp/<pid>.sock`); under a
    deep home folder that path passes the kernel's 108 bytes. One line that says so, not a
    traceback."""
    try:
        yield
    except OSError as exc:
        if "AF_UNIX path too long" not in str(exc):
            raise
        from inspect_ai._util.appdirs import inspect_data_dir

        raise SocketPathTooLong(
            f"Inspect's worker mode binds a socket in {inspect_data_dir('acp')}, a path too "
            "long for a socket: set XDG_DATA_HOME to a shorter folder (e.g. /tmp/inspect)"
        ) from None
