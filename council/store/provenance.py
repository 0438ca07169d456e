"""Which run folders this machine's council made: a run folder not on that list is foreign.

A research folder can arrive with a cloned repository, an unpacked tarball or a shared eval
folder. Its run folders look exactly like council's own (same owner, same files), but every
byte of them was written by someone else: a progress.log that is a link to `~/.bashrc`, an
agent named `x; rm -rf ~; #`, recorded pids of the user's own processes, seats whose
`extra_args` start a shell command. So council records every run it creates, by id, with the
folder's real path and its device and inode, in the user's state folder
(`~/.local/state/council/runs.json`, `$XDG_STATE_HOME` or `$COUNCIL_STATE_HOME` if set), and
acts only on runs found there: a foreign run is read bounded, following no link, and never
signalled, swept, resumed, reused or written into.

The real path, device and inode make a record name one folder: a copy of a run (a shared
eval folder, a backup restored) is another folder, and a run the user moved is at another
path; both are foreign until the user takes them back with `council adopt ID`, which shows
what the run's seats would run first.

They do not make it the folder council made: a run removed and made again at the same path
(a tarball of that very run unpacked there) may get the same inode back, as ext4 hands out a
freed one again. So recording a run also seals it: council writes a file of its own in the
folder (SEAL, a random nonce) and records, with the nonce, that file's inode and change time
(ctime). No copy can carry those: a file made again, by `cp -a`, `tar x` or by hand, gets the
time it was made, and no call sets a ctime. A folder is council's when its path, device and
inode are the record's and its seal is the very file the record names. Changing the seal
(`chmod`, `touch`, a rename) unseals the run as a copy would; `council adopt` seals it anew.
A record written before seals existed holds none: that run is judged by its path, device and
inode, as it was then.

The record itself is believed only when no one else could have written it: a runs.json owned
by another user, or in a folder another user owns or may write (group or others), is no
record at all (every run is foreign; one warning line says why and how to fix it), and
council records no run in such a folder.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from council import paths
from council.errors import CouncilError
from council.store import agentfs, disk

REGISTRY = "runs.json"
VERSION = 2  # 2: each run's record holds its seal
SEAL = ".council-run"  # in the run folder: the file that seals it (the module's docstring)
_NONCE_BYTES = 16
MAX_BYTES = 64 << 20  # ~300,000 runs: more than a machine makes


class ForeignRunError(CouncilError):
    """A command would act on a run folder this machine did not make."""

    exit_code = 2

    def __init__(self, root: Path, action: str) -> None:
        self.root = root
        self.action = action
        super().__init__(f"{self._why()}; if you moved it there yourself, review it with "
                         f"`council adopt {root.name}`")

    def _why(self) -> str:
        return (f"{self.root} is not a run council made on this machine (a copied, cloned or "
                f"unpacked folder): council will not {self.action} it")

    def for_model(self) -> str:
        """The refusal as a model's tool call reads it: no command to run, since only a
        person may decide that a folder they did not make is theirs."""
        return (f"{self._why()}; if the user moved it there themselves, ask them to review it "
                "and adopt it in a terminal")


@dataclass(frozen=True)
class Seal:
    """The file that seals a run folder: the nonce it holds, its inode and its ctime."""

    nonce: str
    ino: int
    ctime_ns: int

    @classmethod
    def of(cls, root: Path) -> Seal | None:
        """The seal in `root` as it stands, or None: missing, a link, not a plain file, or
        not a nonce council writes."""
        try:
            fd = agentfs.open_regular(root / SEAL)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            text = os.read(fd, 4 * _NONCE_BYTES).decode("ascii", "replace").strip()
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(text) != 2 * _NONCE_BYTES:
            return None
        return cls(text, info.st_ino, info.st_ctime_ns)

    @classmethod
    def make(cls, root: Path) -> Seal:
        """Seal `root` anew: whatever stood at SEAL (a copied seal, a link, a folder) is
        replaced, never followed, by a new file with a new nonce."""
        if os.path.lexists(root / SEAL) and stat.S_ISDIR(os.lstat(root / SEAL).st_mode):
            agentfs.remove(root, SEAL)
        agentfs.write(root, SEAL, secrets.token_hex(_NONCE_BYTES) + "\n", mode=0o400)
        made = cls.of(root)
        if made is None:
            raise OSError(f"{root / SEAL} changed as it was written")
        return made

    def to_dict(self) -> dict[str, object]:
        return {"nonce": self.nonce, "ino": self.ino, "ctime_ns": self.ctime_ns}


@dataclass(frozen=True)
class Identity:
    """What makes a folder the one council made: its real path, device and inode, and the
    seal council left in it (None in a record written before seals)."""

    path: str
    dev: int
    ino: int
    seal: Seal | None = None

    @classmethod
    def of(cls, root: Path) -> Identity | None:
        """The folder's identity with its seal as it stands, or None when it is not a real
        folder (a link, missing)."""
        try:
            info = os.lstat(root)
            real = os.path.realpath(root)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        return cls(real, info.st_dev, info.st_ino, Seal.of(root))

    def names(self, now: Identity | None) -> bool:
        """Whether the folder as it stands (`now`) is the one this record names: the same
        path, device and inode, and the very seal recorded (when the record holds one)."""
        return now is not None and (self.path, self.dev, self.ino) == (
            now.path, now.dev, now.ino) and (self.seal is None or self.seal == now.seal)

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {"path": self.path, "dev": self.dev, "ino": self.ino}
        return found | ({"seal": self.seal.to_dict()} if self.seal else {})

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Identity:
        seal = data.get("seal")
        return cls(str(data["path"]), int(str(data["dev"])), int(str(data["ino"])),
                   Seal(str(seal["nonce"]), int(seal["ino"]), int(seal["ctime_ns"]))
                   if isinstance(seal, dict) else None)


def registry_file() -> Path:
    return paths.state_home() / REGISTRY


def load() -> dict[str, Identity]:
    """run id → the folder council made for it; empty when there is no record. A record
    that cannot be read or parsed, or that someone else could have written (`distrusted`),
    holds no run (every run is then foreign)."""
    path = registry_file()
    try:
        fd = agentfs.open_regular(path)
    except OSError:
        return {}
    with os.fdopen(fd, "rb", buffering=0) as handle:
        why = distrusted(path, os.fstat(fd))
        if why is not None:
            _warn(why)
            return {}
        try:
            data = json.loads(handle.read(MAX_BYTES))
            runs = data["runs"]
            return {str(k): Identity.from_dict(v) for k, v in runs.items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}


def distrusted(path: Path, info: os.stat_result | None = None) -> str | None:
    """Why the record at `path` (its file's facts `info`, when it is open) could have been
    written by someone other than this user, or None: the file is another user's, or its
    folder is another user's or writable by group or others. Like ssh's StrictModes: a
    record anyone may edit vouches for nothing."""
    me = os.geteuid()
    folder = path.parent
    try:
        held = os.lstat(folder)
    except OSError:
        return None  # no folder, no record: nothing to believe or refuse
    if not stat.S_ISDIR(held.st_mode) or held.st_uid != me:
        return (f"{folder} is not a folder of yours (owner uid {held.st_uid}): "
                f"council ignores {path.name} in it")
    if held.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"{folder} is writable by others (mode {stat.S_IMODE(held.st_mode):o}): "
                f"council ignores {path.name} in it; `chmod go-w {folder}` fixes it")
    if info is not None and info.st_uid != me:
        return (f"{path} is owned by uid {info.st_uid}, not you: council ignores it; "
                "remove it (council writes it again)")
    return None


_warned: set[str] = set()


def _warn(why: str) -> None:
    """One line on stderr, once per process and reason: every run counts as foreign."""
    if why not in _warned:
        _warned.add(why)
        sys.stderr.write(f"council: warning: {why}; until then every run counts as not "
                         "made by council\n")


def is_own(root: Path) -> bool:
    """Whether `root` is a run folder council made on this machine."""
    return own(root, load())


def own(root: Path, known: dict[str, Identity]) -> bool:
    """`is_own`, against a record already loaded (for listing many runs)."""
    recorded = known.get(root.name)
    return recorded is not None and recorded.names(Identity.of(root))


def require_own(root: Path, action: str) -> None:
    """Refuse (ForeignRunError) to `action` a run folder council did not make here."""
    if not is_own(root):
        raise ForeignRunError(root, action)


def record(root: Path) -> None:
    """Note `root`, a run folder council just made (or a user adopted), as council's, and
    seal it (the module's docstring)."""
    identity = Identity.of(root)
    if identity is None:
        raise CouncilError(f"cannot record run {root.name}: {root} is "
                           f"{agentfs.describe(root)}, not a folder")
    try:
        sealed = replace(identity, seal=Seal.make(root))
    except OSError as exc:
        raise CouncilError(f"cannot seal run {root.name} in {root / SEAL}: "
                           f"{exc.strerror or exc}") from exc
    _change(lambda runs: runs.__setitem__(root.name, sealed))


def forget(run_id: str) -> None:
    _change(lambda runs: runs.pop(run_id, None))


def _change(edit: Callable[[dict[str, Identity]], object]) -> None:
    path = registry_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if (why := distrusted(path)) is not None:
            raise CouncilError(f"cannot record council's runs: {why}")
        with disk.locked(path.parent / f".{REGISTRY}.lock"):
            runs = load()
            edit(runs)
            text = json.dumps({"version": VERSION,
                               "runs": {k: v.to_dict() for k, v in sorted(runs.items())}},
                              indent=1)
            # Ids and paths only: a path redaction rewrote would no longer match.
            disk.atomic_write(path, text + "\n", redacted=True)
    except OSError as exc:
        raise CouncilError(f"cannot record council's runs in {path}: "
                           f"{exc.strerror or exc}") from exc
