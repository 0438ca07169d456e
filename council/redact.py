"""Secrets out of every file council writes.

The allow-lists (agents/environment.py) keep council's secrets out of each agent's reach;
this is the second line, for a value that got through anyway (a login helper's error that
echoes a key, a model that was handed one): before council writes a file, the value of every
variable of its own environment whose name looks like a secret is replaced by
`REDACTED:NAME`. An agent's own files (its report and its CLI's logs) are scrubbed in place
when its turn in a phase ends, before anything is published from them, and the run's
progress.log names the agent and the variable, never the value.

Imported by the hooks' event writer, so it keeps to the standard library's lightest
modules."""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # not typing's: its import would add ~20 ms to every hook
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

# A variable is a secret when its name holds one of these (case-insensitive)...
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE")
# ...and its value is long enough to be one: a short value ("1", "true", "dummy") replaced
# wherever it occurs would mangle the text and hide nothing.
MIN_LENGTH = 8
_CHUNK = 1 << 20

Secrets = list[tuple[str, str]]  # (name, value), longest value first


def secrets(environ: Mapping[str, str] | None = None) -> Secrets:
    """The secret-looking variables of `environ` (council's own environment by default)."""
    env = os.environ if environ is None else environ
    found = [(name, value) for name, value in env.items()
             if len(value) >= MIN_LENGTH and any(w in name.upper() for w in SECRET_WORDS)]
    return sorted(found, key=lambda item: (-len(item[1]), item[0]))


def mark(name: str) -> str:
    """What stands for a secret: no space or bracket, so a URL that held it stays one URL and
    a YAML or markdown value stays what it was."""
    return f"REDACTED:{name}"


def text(value: str, found: Secrets | None = None) -> tuple[str, list[str]]:
    """`value` with every secret replaced, and the names of those it held."""
    names = []
    for name, secret in secrets() if found is None else found:
        if secret in value:
            value = value.replace(secret, mark(name))
            names.append(name)
    return value, names


def clean(value: str) -> str:
    """`value` with every secret replaced."""
    return text(value)[0]


def scrub_file(path: Path, found: Secrets | None = None) -> list[str]:
    """Replace every secret in the file at `path`, in place and atomically, reading it in
    chunks (a report or log may be far larger than memory should hold); the names of the
    secrets it held. A file that holds none is only read; a missing file holds none; a
    file that held one but could not be rewritten raises OSError."""
    pairs = [(name, secret.encode(), mark(name).encode())
             for name, secret in (secrets() if found is None else found)]
    if not pairs:
        return []
    keep = max(len(s) for _, s, _ in pairs) - 1  # a secret may straddle two chunks
    try:
        held = _held(path, pairs, keep)
        if not held:
            return []
    except OSError:
        return []
    tmp = path.with_name(f".{path.name}.{os.getpid()}.redact")
    try:
        with path.open("rb") as src, tmp.open("wb") as dst:
            buf = b""
            while chunk := src.read(_CHUNK):
                buf = _replace(buf + chunk, pairs)
                cut = max(len(buf) - keep, 0)
                dst.write(buf[:cut])
                buf = buf[cut:]
            dst.write(_replace(buf, pairs))
        os.replace(tmp, path)
    except OSError:  # e.g. a full disk: the caller must not publish the file as clean
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return held


def _held(path: Path, pairs: list[tuple[str, bytes, bytes]], keep: int) -> list[str]:
    held: set[str] = set()
    with path.open("rb") as src:
        tail = b""
        while chunk := src.read(_CHUNK):
            window = tail + chunk
            held.update(name for name, secret, _ in pairs if secret in window)
            tail = window[-keep:] if keep else b""
    return [name for name, _, _ in pairs if name in held]


def _replace(data: bytes, pairs: list[tuple[str, bytes, bytes]]) -> bytes:
    for _, secret, replacement in pairs:
        if secret in data:
            data = data.replace(secret, replacement)
    return data
