"""Running a real CLI the way council does, for the realcli tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest


@dataclass(frozen=True)
class RealClis:
    """Where the pinned CLIs are (the `real_clis` fixture)."""

    bin_dir: Path
    versions: dict[str, str]

    def path(self, cli: str) -> Path:
        return self.bin_dir / cli


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
