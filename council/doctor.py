"""`council doctor`: can each CLI run here? On PATH, its version, whether council is tested
with that version, and where its login comes from (preflight.py's checks, the same a run
makes before it starts). No network calls, and no secret is ever printed."""

from __future__ import annotations

from council.config import CLIS
from council.preflight import Readiness, check


def row(found: Readiness) -> str:
    """One line per CLI, with the fix when it cannot run."""
    if found.path is None:
        return f"{found.cli:<7} not found on PATH: {found.problem}"
    tested = ("-" if found.version is None else "yes" if found.version == found.tested
              else f"no (council is tested with {found.tested})")
    login = (f"credentials: {found.credentials}" if found.credentials
             else f"credentials: none ({found.problem})")
    return (f"{found.cli:<7} {found.version or 'unknown version'} at {found.path}; "
            f"tested: {tested}; {login}")


def run_doctor() -> tuple[list[str], int]:
    """The rows, and 0 if at least one agent can run here, else 1."""
    found = check(list(CLIS))
    return [row(r) for r in found.values()], 0 if any(r.ready for r in found.values()) else 1
