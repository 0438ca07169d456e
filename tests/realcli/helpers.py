"""Running a real CLI the way council does, for the realcli tests."""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import pytest

CLIS = ("claude", "codex", "gemini")
FAKES_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"
# What a skip says, so a reader knows how to run the real-CLI tests.
ENABLE = ("install the tested versions with scripts/install-clis.sh (or set COUNCIL_CLI_CACHE "
          "to its cache), or put claude, codex and gemini on PATH")


@dataclass(frozen=True)
class RealClis:
    """The real CLIs the tests run (the `real_clis` fixture): `bin_dir` links each one, from
    wherever it was found; `versions` is what each reports, `sources` where it came from."""

    bin_dir: Path
    versions: dict[str, str]
    sources: dict[str, str]

    def path(self, cli: str) -> Path:
        return self.bin_dir / cli

    def describe(self) -> str:
        """`claude 2.1.332 (cache /x/bin), …`: the line a test session reports."""
        return ", ".join(f"{cli} {self.versions[cli]} ({self.sources[cli]})" for cli in CLIS)


def cli_cache(home: Path) -> Path:
    """The cache scripts/install-clis.sh installs the tested CLIs into."""
    return Path(os.environ.get("COUNCIL_CLI_CACHE") or home / ".cache" / "council" / "clis")


def locate(cache_bin: Path, path: str) -> dict[str, tuple[Path, str]]:
    """Where each CLI is, and where that is (for the report): the pinned cache first, so a
    session is reproducible where install-clis.sh ran, else the user's own install on `path`
    (the fakes in tests/fakes/bin never count). A CLI found nowhere is left out."""
    found: dict[str, tuple[Path, str]] = {}
    for cli in CLIS:
        exe = cache_bin / cli
        on_path = shutil.which(cli, path=path)
        if exe.is_file() and os.access(exe, os.X_OK):
            found[cli] = (exe, f"cache {cache_bin}")
        elif on_path and Path(on_path).resolve().parent != FAKES_BIN:
            found[cli] = (Path(on_path), f"PATH {on_path}")
    return found


def reported_version(out: str) -> str | None:
    """The version in a CLI's `--version` output: `2.1.332 (Claude Code)`, `codex-cli
    0.171.0`, `0.61.0`."""
    match = re.search(r"(?<![\w.])(\d+\.\d+\.\d+[\w.+-]*)", out)
    return match.group(1) if match else None


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def events(self) -> list[dict[str, Any]]:
        """The JSON object lines of stdout."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict):
                    out.append(event)
        return out

    def describe(self) -> str:
        return (f"{self.argv} exited {self.returncode} after {self.seconds:.1f}s\n"
                f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}")


def run_cli(argv: list[str], *, cwd: Path, env: Mapping[str, str],
            stdin_file: Path | None = None, timeout: float = 60) -> Run:
    """Run a CLI as council does: own process group, stdin from a file or /dev/null.

    On timeout the whole group is killed (gemini's relaunch parent ignores SIGTERM)."""
    started = time.monotonic()
    with open(stdin_file or os.devnull, "rb") as stdin:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            run = Run(argv, proc.returncode, out.decode(errors="replace"),
                      err.decode(errors="replace"), time.monotonic() - started)
            pytest.fail(f"timed out after {timeout}s: {run.describe()}")
    return Run(argv, proc.returncode, out.decode(errors="replace"),
               err.decode(errors="replace"), time.monotonic() - started)


# Text that would take over a terminal (issue 43, item 7): an OSC 52 (writes the user's
# clipboard), a CSI 2J (clears the screen), the one-byte C1 CSI, a bell, a bidi override and
# rich markup. Short enough that `council list` does not cut its topic.
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
HOSTILE = f"[blink]look[/blink] {OSC52}\x1b[2J\x9b2J \u202eevil"
# What none of the output may hold: the sequences' introducers, raw.
CONTROLS = ("\x1b", "\x9b", "\x07", "\u202e")


def controls(text: str) -> list[str]:
    return [c for c in CONTROLS if c in text]


def sent(shown: str) -> list[str]:
    """The run's sequences in what a terminal was sent (rich's own styling aside): the
    clipboard write, the clear, the C1 CSI, the bell, the override, blinking."""
    return [c for c in ("\x1b]52", "\x1b[2J", "\x9b", "\x07", "\u202e", "\x1b[5m")
            if c in shown]


def on_a_terminal(args: list[str], env: dict[str, str], cwd: Path,
                  timeout: float = 120, exit_code: int = 0) -> bytes:
    """What `args` sent to a pseudo-terminal (its stdin, stdout and stderr), byte for byte,
    until it ended."""
    master, slave = os.openpty()
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the program ended and closed the terminal
                break
            if not data:
                break
            shown += data
        assert proc.wait(timeout=30) == exit_code, shown.decode(errors="replace")
        return shown
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Terminal:
    """A CLI's interactive UI in a private tmux server, read as a person at the terminal
    reads it (`screen` holds the last capture)."""

    def __init__(self, name: str, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        if shutil.which("tmux") is None:
            if os.environ.get("COUNCIL_REQUIRE_REAL_CLIS") == "1":
                pytest.fail("tmux is needed for the interactive tests (.ci/run installs it)")
            pytest.skip("tmux is not installed: install it to run the interactive tests")
        self.sock = f"council-{name}-{os.getpid()}"
        self.screen = ""
        self._tmux("new-session", "-d", "-s", "main", "-x", "200", "-y", "50", "-c", str(cwd),
                   "env", "-i", *[f"{k}={v}" for k, v in env.items()], *argv)

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              check=True, timeout=30, stdin=subprocess.DEVNULL).stdout

    def shows(self, pattern: str, timeout: float) -> bool:
        """Whether the screen shows `pattern` (a regex) within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.screen = self._tmux("capture-pane", "-p", "-t", "main", "-S", "-200")
            if re.search(pattern, self.screen):
                return True
            time.sleep(0.2)  # polling what the terminal shows
        return False

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        """Type `text` and press Enter once it shows (an Enter before the text lands is
        lost)."""
        self._tmux("send-keys", "-t", "main", "-l", text)
        assert self.shows(re.escape(text), 30), self.screen
        self.keys("Enter")

    def close(self) -> None:
        """End the CLI and everything it started (an interactive gemini outlives tmux's
        SIGHUP), then the tmux server."""
        procs: list[psutil.Process] = []
        with suppress(subprocess.SubprocessError, psutil.Error, ValueError):
            for pid in self._tmux("list-panes", "-a", "-F", "#{pane_pid}").split():
                pane = psutil.Process(int(pid))
                procs += [pane, *pane.children(recursive=True)]
        with suppress(subprocess.SubprocessError):
            subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        for proc in procs:
            with suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(procs, timeout=10)


# --------------------------------------------------------------------------- what a run left
def forms(value: str) -> set[str]:
    """`value` as it may travel: as is, percent-encoded, or inside base64 (an image or file
    tool's payload) at each of the three alignments, keeping only the characters no
    neighbouring byte shares."""
    out = {value, quote(value, safe="")}
    data = value.encode()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode()
        first, end = -(-8 * shift // 6), 8 * (shift + len(data)) // 6
        out.add(encoded[first:end])
    return out


def secrets_in(data: str | bytes, planted: Mapping[str, str]) -> set[str]:
    """The names of the `planted` values (name: value) that `data` holds in any of their
    `forms`."""
    raw = data.encode() if isinstance(data, str) else data
    return {name for name, value in planted.items()
            if any(form.encode() in raw for form in forms(value))}


def _data_of(fd: int, limit: int) -> bytes:
    """What a regular file holds, its holes left out: a sparse terabyte is read as the few
    bytes it really has. More than `limit` bytes of data is a test failure."""
    parts: list[bytes] = []
    pos = total = 0
    while True:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data after pos
                return b"".join(parts)
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        total += end - start
        assert total <= limit, f"over {limit:,} bytes of data in one file of the run"
        parts.append(os.pread(fd, end - start, start))
        pos = end


def run_files(root: Path, limit: int = 256 << 20) -> Iterator[tuple[str, bytes]]:
    """Every regular file under `root`, as (path relative to root, its data), walked without
    following a link and opened without following one, blocking on one or reading holes."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                continue  # a link, a socket, gone
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    yield str(path.relative_to(root)), _data_of(fd, limit)
            finally:
                os.close(fd)


def links_leaving(root: Path) -> dict[str, str]:
    """Each symbolic link under `root` whose target lies outside it (relative path: target),
    links not followed."""
    out = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                target = os.readlink(path)
                where = os.path.normpath(os.path.join(folder, target))
                if os.path.commonpath([where, str(root)]) != str(root):
                    out[str(path.relative_to(root))] = target
    return out


def allocated(root: Path, skip: Iterable[str] = ()) -> int:
    """Bytes of disk the files under `root` take (holes are free), but for `skip` (relative
    paths)."""
    skipped = set(skip)
    total = 0
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            path = Path(folder) / name
            if str(path.relative_to(root)) not in skipped:
                with suppress(OSError):
                    total += path.lstat().st_blocks * 512
    return total


def fingerprint(paths: Iterable[Path]) -> dict[str, str]:
    """What each path is, without following a link: a file's sha256, a folder's listing with
    each entry's fingerprint, a link's target. Taken before and after a run, the two must be
    equal for files the run had no business changing."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            info = path.lstat()
        except FileNotFoundError:
            out[str(path)] = "missing"
            continue
        if stat.S_ISLNK(info.st_mode):
            out[str(path)] = f"link to {os.readlink(path)}"
        elif stat.S_ISDIR(info.st_mode):
            inner = fingerprint(sorted(path.iterdir()))
            out[str(path)] = "folder " + hashlib.sha256(
                json.dumps(inner, sort_keys=True).encode()).hexdigest()
            out.update(inner)
        elif stat.S_ISREG(info.st_mode):
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[str(path)] = f"mode {info.st_mode:o}"
    return out


def processes_in(root: Path) -> list[psutil.Process]:
    """Processes whose command line names `root` or whose working folder is inside it."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        cmdline, cwd = proc.info["cmdline"] or [], proc.info["cwd"] or ""
        if str(root) in " ".join(cmdline) or cwd == str(root) or \
                cwd.startswith(str(root) + os.sep):
            found.append(proc)
    return found


@dataclass
class Bounded:
    """A command that was given `bound` seconds: what it printed, and whether it had to be
    killed (its whole process group) when the time was up."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    killed: bool

    def describe(self) -> str:
        how = "killed after" if self.killed else f"exited {self.returncode} after"
        return (f"{how} {self.seconds:.0f} s\n--- stdout\n{self.stdout[-3000:]}\n"
                f"--- stderr\n{self.stderr[-3000:]}")


def run_bounded(argv: list[str], *, cwd: Path, env: Mapping[str, str], bound: float,
                started: Callable[[psutil.Popen], None] | None = None) -> Bounded:
    """Run `argv` in a session of its own, stdin /dev/null; `started(proc)` runs once it is
    started. Past `bound` seconds its process group is killed."""
    began = time.monotonic()
    proc = psutil.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        start_new_session=True)
    killed = False
    try:
        if started is not None:
            started(proc)
        try:
            out, err = proc.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            killed = True
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Bounded(proc.returncode, out, err, time.monotonic() - began, killed)


# ---------------------------------------------------------------- killing and resuming a run
def kill_supervisor(proc: psutil.Popen) -> list[psutil.Process]:
    """SIGKILL a `council run`, as a crash would: its agents are left running. Returns its
    process tree as it was, for `end` to clean up if the test fails before the resume."""
    tree = proc.children(recursive=True)
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    except BaseException:
        end(tree)  # the caller never gets the tree to clean up
        raise
    return tree


def resume_killed(run: Path, env: Mapping[str, str],
                  timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """`council resume` the run a killed supervisor left; then nothing of the killed run's
    agents may be left, codex's sandbox helpers included."""
    resumed = subprocess.run(
        [sys.executable, "-m", "council", "resume", run.name],
        env={**env, "COUNCIL_RESEARCH_DIR": str(run.parent)}, cwd=run.parent.parent,
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert leftovers(run) == []
    return resumed


def leftovers(run: Path) -> list[str]:
    """Processes still running with the run's folder on their command line."""
    return [" ".join(p.info["cmdline"])[:200] for p in psutil.process_iter(["cmdline"])
            if str(run) in " ".join(p.info["cmdline"] or [])]


def end(processes: Iterable[psutil.Process]) -> None:
    """Kill what is still running of a test's processes (only after a test that failed
    before its resume ended them)."""
    for process in processes:
        with suppress(psutil.Error):
            process.kill()
