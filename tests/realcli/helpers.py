"""Running a real CLI the way council does, for the realcli tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
