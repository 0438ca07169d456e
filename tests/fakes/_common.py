"""Shared machinery for the fake ``claude``/``codex``/``gemini`` executables.

Stdlib only and cheap to import: the fakes are spawned many times per test run.
The scripting contract (``COUNCIL_FAKE_SCRIPT``) and the log format
(``COUNCIL_FAKE_LOG``) are documented in ``tests/fakes/README.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

Json = dict[str, Any]

MARKER = "<!-- RESEARCH_COMPLETE -->"
REPORT_RE = re.compile(r"^Report file: (.+)$", re.MULTILINE)


# ---------------------------------------------------------------- small utils
def uuid4() -> str:
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid7() -> str:
    ms = time.time_ns() // 1_000_000
    b = bytearray(ms.to_bytes(6, "big") + os.urandom(10))
    b[6] = (b[6] & 0x0F) | 0x70
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


def iso_now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _sigpipe_death() -> None:
    """stdout reader went away: die of SIGPIPE like the native CLIs (Python ignores it by default;
    it stays ignored elsewhere so a hook that does not read its stdin cannot kill us)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def out(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _sigpipe_death()


def emit(obj: Json) -> None:
    """One JSON object per line on stdout, flushed at once (no buffering surprises)."""
    out(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")


def err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def inside(path: str, root: str) -> bool:
    path = os.path.realpath(path)
    root = os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_stdin_all() -> str:
    try:
        return sys.stdin.read()
    except (OSError, ValueError, AttributeError):
        return ""


def stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def stdin_usable() -> bool:
    try:
        os.fstat(0)
        return True
    except OSError:
        return False


# ---------------------------------------------------------------- report path / phase
def report_from_prompt(prompt: str | None, cwd: str) -> str | None:
    if not prompt:
        return None
    m = REPORT_RE.search(prompt)
    if not m:
        return None
    p = m.group(1).strip()
    return p if os.path.isabs(p) else os.path.join(cwd, p)


def phase_of(report: str | None) -> str:
    if not report:
        return "unknown"
    name = os.path.basename(report)
    if name == "final-report.md":
        return "synthesis"
    if name.endswith("-refined.md"):
        return "refinement"
    if name.endswith("-gaps.md"):
        return "gapfill"
    if name.endswith("-report.md"):
        return "research"
    if name == "scope-draft.json":
        return "scope"
    if name == "claims-draft.json":
        return "claims"
    if name == "recheck-draft.json":
        return "recheck"
    if name == "dissent.md":
        return "dissent"
    if name.endswith("-verdicts.json"):
        return "verification"
    if name == "counterpoints.md":
        return "antagonist"
    if name == "ask-answer.md":
        return "ask"
    return "unknown"


# ---------------------------------------------------------------- behaviour
def load_behaviour(cli: str, seat: str, phase: str) -> Json:
    path = os.environ.get("COUNCIL_FAKE_SCRIPT")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            mapping = json.load(fh)
    except (OSError, ValueError) as exc:
        err(f"fake {cli}: cannot read COUNCIL_FAKE_SCRIPT={path}: {exc}")
        sys.exit(97)
    for key in (f"{seat}:{phase}", seat, f"{cli}:{phase}", cli, "*"):
        if key in mapping:
            return dict(mapping[key] or {})
    return {}


class Behaviour:
    def __init__(self, raw: Json) -> None:
        self.raw = raw
        self.never_finish = bool(raw.get("never_finish"))
        self.write_nothing = bool(raw.get("write_nothing"))
        self.finish_after = 1 if raw.get("marker_first_turn") else int(raw.get("finish_after", 2))
        self.crash = bool(raw.get("crash"))
        self.crash_on_turn = int(raw.get("crash_on_turn", 1))
        # "server": a sticky HTTP 500 (each CLI's own words; council retries it within the
        # phase); "bad_request": an HTTP 400, which no CLI and not council retries.
        self.crash_kind = str(raw.get("crash_kind", "server"))
        message = raw.get("crash_message")  # codex: the failed turn's error text, as given
        self.crash_message = message if isinstance(message, str) else None
        # Only the first N processes that reach the crash turn crash (counted per CLI and
        # seat in $HOME/.council-fake-crashes), then the fault has passed.
        count = raw.get("crash_count")
        self.crash_count = None if count is None else int(count)
        # The vendor's Retry-After (seconds) on a crash_kind "rate_limit" answer.
        self.retry_after = float(raw.get("retry_after", 8) or 0)
        self.hang = bool(raw.get("hang"))
        self.hang_after_turn = int(raw.get("hang_after_turn", 0) or 0)
        self.ignore_sigterm = bool(raw.get("ignore_sigterm"))
        self.spawn_grandchild = bool(raw.get("spawn_grandchild"))
        self.delay = float(raw.get("delay", 0) or 0)
        self.flood_bytes = int(raw.get("flood_bytes", 0) or 0)
        self.text_only = bool(raw.get("text_only"))
        self.exit_code = int(raw.get("exit_code", 0) or 0)
        self.pad_bytes = int(raw.get("pad_bytes", 0) or 0)
        content = raw.get("content")
        self.content = content if isinstance(content, str) else None

    def hang_after(self, turn: int) -> None:
        """`hang_after_turn`: finish turn N (report written), then hang like a stuck agent."""
        if self.hang_after_turn and turn >= self.hang_after_turn:
            hang_forever()

    def crashes_on(self, turn: int, who: str = "") -> bool:
        """Whether this turn crashes; `who` (cli-seat) counts the crashes of `crash_count`
        across processes."""
        if not (self.crash and turn == self.crash_on_turn):
            return False
        if self.crash_count is None:
            return True
        folder = os.path.join(os.environ.get("HOME") or os.path.expanduser("~"),
                              ".council-fake-crashes")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", who) or "any")
        try:
            with open(path, encoding="utf-8") as fh:
                done = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            done = 0
        if done >= self.crash_count:
            return False
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(str(done + 1))
        return True

    def wants_write(self, turn: int, report: str | None) -> bool:
        """Does the model make a (report-writing) tool call on this turn?"""
        if not report or self.write_nothing:
            return False
        return not (self.text_only and turn > 1)

    def marker_due(self, turn: int) -> bool:
        return not self.never_finish and turn == self.finish_after

    def sleep(self) -> None:
        if self.delay > 0:
            time.sleep(self.delay)


def pasted_appendix(nbytes: int, cli: str, seat: str) -> str:
    """About nbytes of an appendix pasted from a source: hard-wrapped prose, no blank line,
    a cited sentence on every line (the worst case for council's text processing)."""
    words = ("tide", "moon", "orbit", "basin", "shelf", "surge", "phase", "range", "lunar",
             "solar", "estuary", "current", "gauge", "datum", "wave", "harbour")
    lines, size, i = ["\n## Appendix (pasted)\n\n"], 0, 0
    while size < nbytes:
        a, b, c = words[i % 16], words[i // 16 % 16], words[i // 256 % 16]
        line = (f"Line {i}: the pasted source says the {a} {b} {c} figure rose "
                f"{i % 97}.{i % 7}% in {1900 + i % 125}, see https://example.net/{seat}/{i} "
                f"and [{i % 9 + 1}].\n")
        lines.append(line)
        size, i = size + len(line), i + 1
    return "".join(lines)


def write_report(path: str, cli: str, seat: str, turn: int, marker: bool,
                 content: str | None = None, pad_bytes: int = 0) -> str:
    """Append this turn's section; returns "add" or "update".

    Once the marker is present it is kept as the last line (later turns move it down).
    With `content` (the behaviour key), write exactly that instead (e.g. a JSON answer).
    With `pad_bytes`, turn 1 also appends a pasted appendix of about that size.
    """
    existed = os.path.exists(path)
    if content is not None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
        return "update" if existed else "add"
    text = ""
    if existed:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    else:
        text = f"# {cli} report\n"
    had_marker = MARKER in text
    if had_marker:
        kept = [ln for ln in text.splitlines(True) if ln.strip() != MARKER]
        text = "".join(kept).rstrip("\n") + "\n"
    text += (
        f"\n## Turn {turn} by {cli} ({seat})\n\n"
        f"Fake findings written by the {cli} test double on turn {turn}.\n\n"
        f"- https://example.org/{cli}/{seat}/{turn}\n"
        f"- https://example.com/{cli}/{seat}/{turn}/source\n"
    )
    if pad_bytes and turn == 1:
        text += pasted_appendix(pad_bytes, cli, seat)
    if marker or had_marker:
        text += f"\n{MARKER}\n"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return "update" if existed else "add"


# ---------------------------------------------------------------- log
def process_start_time() -> float | None:
    """When the kernel started this process (so benchmarks count the fake's own start-up as
    agent time, not council's)."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age
    except (OSError, ValueError, AttributeError):
        return None


class Log:
    def __init__(self, cli: str, seat: str) -> None:
        self.cli, self.seat = cli, seat
        self.path = os.environ.get("COUNCIL_FAKE_LOG")

    def __call__(self, event: str, **fields: Any) -> None:
        if not self.path:
            return
        rec = {"cli": self.cli, "seat": self.seat, "event": event, "pid": os.getpid(),
               "t": time.time(), **fields}
        if event == "start":
            rec["exec_t"] = process_start_time()
            # What the CLI was given of council's environment: names only, and its HOME.
            rec["env_names"] = sorted(os.environ)
            rec["home"] = os.environ.get("HOME")
        data = (json.dumps(rec, ensure_ascii=False) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def finish(log: Log, code: int) -> NoReturn:
    log("exit", code=code)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


# ---------------------------------------------------------------- process behaviours
def setup_process(b: Behaviour, log: Log, cwd: str, on_term: int | None = None) -> None:
    """spawn_grandchild first (so it does not inherit SIG_IGN), then signal dispositions.

    on_term: exit code to use on SIGTERM (e.g. 143 codex, 0 gemini); None = die by the signal.
    """
    if b.spawn_grandchild:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"], stdin=subprocess.DEVNULL
        )
        path = os.path.join(cwd, "grandchild.pid")
        with open(path + ".tmp", "w") as fh:  # renamed: a reader never sees it half-written
            fh.write(f"{child.pid}\n")
        os.replace(path + ".tmp", path)
        log("grandchild", grandchild_pid=child.pid)
    if b.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return

    def handler(signum: int, _frame: object) -> None:
        if on_term is None:
            log("exit", code=-signum, signal=signum)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        log("exit", code=on_term, signal=signum)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(on_term)

    signal.signal(signal.SIGTERM, handler)


def hang_forever() -> NoReturn:
    while True:
        signal.pause()


def flood(
    nbytes: int,
    line_fn: Callable[[int, str], str] | None = None,
    stream: TextIO | None = None,
) -> None:
    """Write about ``nbytes`` of noise lines; ``line_fn(i, pad)`` makes one line (no newline)."""
    stream = stream or sys.stdout
    line_fn = line_fn or (lambda i, pad: f"noise {i}: {pad}")
    written, i = 0, 0
    while written < nbytes:
        line = line_fn(i, "x" * min(1000, max(1, nbytes - written)))
        if stream is sys.stdout:
            out(line + "\n")
        else:
            stream.write(line + "\n")
        written += len(line) + 1
        i += 1
    stream.flush()


# ---------------------------------------------------------------- hooks
def run_hook(
    shell: list[str], command: str, cwd: str, env: dict[str, str], payload: Json, timeout: float,
    socket_stdin: bool = False,
) -> tuple[int, str, str, bool]:
    """Run one command hook. Returns (exit_code, stdout, stderr, timed_out).

    `socket_stdin`: the payload comes through one end of a socketpair, as the real CLIs send
    it (node's 'pipe' stdio is a socketpair on Linux; seen in claude 2.1.197 and read in gemini
    0.61). bash then takes itself for a remote shell's, and a top-level `bash -c` sources
    ~/.bashrc first."""
    data = json.dumps(payload, ensure_ascii=False)
    stdin: Any = subprocess.PIPE
    sender = None
    if socket_stdin:
        import socket

        sender, stdin = socket.socketpair()
    try:
        proc = subprocess.Popen(
            [*shell, command],
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as exc:
        if sender is not None:
            sender.close()
        return 127, "", str(exc), False
    finally:
        if sender is not None:
            stdin.close()  # the child has its own copy
    if sender is not None:
        import threading

        # The thread writes the payload, ends the hook's stdin and closes our end.
        threading.Thread(target=_send_and_close, args=(sender, data.encode()),
                         daemon=True).start()
    try:
        so, se = proc.communicate(None if sender is not None else data, timeout=timeout)
        return proc.returncode, so, se, False
    except subprocess.TimeoutExpired:
        proc.kill()  # the hook stays in our process group, like the real CLIs' hooks
        try:
            so, se = proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:  # a grandchild of the hook still holds the pipes
            so, se = "", ""
        return proc.wait(), so or "", se or "", True


def _send_and_close(sock: Any, data: bytes) -> None:
    """Write the payload and end the hook's stdin (a hook that never reads it is no error)."""
    import socket

    with sock, contextlib.suppress(OSError):
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)


def parse_json_obj(text: str | None) -> Json | None:
    text = (text or "").strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def load_json_file(path: str) -> Json | None:
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
        return obj if isinstance(obj, dict) else None
    except (OSError, ValueError):
        return None


def save_json_file(path: str, obj: Any) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)
    os.replace(tmp, path)
