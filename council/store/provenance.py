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
what the run's seats would run first. What it cannot tell: a run the user removed, and a
folder of the same id unpacked at the same path that the file system gives the same inode
(run ids are random, so the folder would have to be a copy of that very run).

The record is read bounded and written with disk.atomic_write under its lock; a record
council cannot read makes every run foreign (it refuses; it never guesses).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from council import paths
from council.errors import CouncilError
from council.store import agentfs, disk

REGISTRY = "runs.json"
VERSION = 1
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
class Identity:
    """What makes a folder the one council made: its real path, device and inode."""

    path: str
    dev: int
    ino: int

    @classmethod
    def of(cls, root: Path) -> Identity | None:
        """The folder's identity, or None when it is not a real folder (a link, missing)."""
        try:
            info = os.lstat(root)
            real = os.path.realpath(root)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        return cls(real, info.st_dev, info.st_ino)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "dev": self.dev, "ino": self.ino}


def registry_file() -> Path:
    return paths.state_home() / REGISTRY


def load() -> dict[str, Identity]:
    """run id → the folder council made for it; empty when there is no record. A record
    that cannot be read or parsed holds no run (every run is then foreign)."""
    try:
        data = json.loads(agentfs.read(registry_file(), MAX_BYTES))
        runs = data["runs"]
        return {str(k): Identity(str(v["path"]), int(v["dev"]), int(v["ino"]))
                for k, v in runs.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def is_own(root: Path) -> bool:
    """Whether `root` is a run folder council made on this machine."""
    return own(root, load())


def own(root: Path, known: dict[str, Identity]) -> bool:
    """`is_own`, against a record already loaded (for listing many runs)."""
    recorded = known.get(root.name)
    return recorded is not None and recorded == Identity.of(root)


def require_own(root: Path, action: str) -> None:
    """Refuse (ForeignRunError) to `action` a run folder council did not make here."""
    if not is_own(root):
        raise ForeignRunError(root, action)


def record(root: Path) -> None:
    """Note `root`, a run folder council just made (or a user adopted), as council's."""
    identity = Identity.of(root)
    if identity is None:
        raise CouncilError(f"cannot record run {root.name}: {root} is "
                           f"{agentfs.describe(root)}, not a folder")
    _change(lambda runs: runs.__setitem__(root.name, identity))


def forget(run_id: str) -> None:
    _change(lambda runs: runs.pop(run_id, None))


def _change(edit: Callable[[dict[str, Identity]], object]) -> None:
    path = registry_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
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
