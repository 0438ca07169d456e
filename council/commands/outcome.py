"""How a run that `council run` or `council resume` supervised ended: the lines to print
(on stdout, on stderr) and the exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from council.commands.resume import hint
from council.evidence import changes
from council.run import supervisor

# `--exit-code`: the run failed, or its claims could not be compared with the earlier run's
# (changes.compared): neither may read as "no change" (0) or "changed" (1).
EXIT_UNKNOWN = 3
# A run that finished, with its final report, without a seat it started with (a plan limit,
# a refused login, a crash): scripts and cron tell it from a full run. Without --exit-code.
EXIT_DEGRADED = 3


@dataclass(frozen=True)
class Outcome:
    code: int
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


def outcome(result: supervisor.RunResult, base: Path, exit_code: bool = False) -> Outcome:
    """A --since run says in one line what changed, or that nothing did, then where its
    report is; with `exit_code` a changed one exits 1 (changes.json's `changed`), and one
    that failed or could not compare exits EXIT_UNKNOWN. Without `exit_code`, a run that
    finished without a seat it started with exits EXIT_DEGRADED, naming each seat and why on
    stderr."""
    found = changes.load(result.ws.root) if result.exit_code == 0 else None
    if found is not None and not changes.compared(found):
        if exit_code:
            return Outcome(EXIT_UNKNOWN, err=[f"council: {changes.headline(found)}"])
        said = Outcome(0, err=[f"council: {changes.headline(found)}"])
        found = None  # the run itself finished: say where its report is
    else:
        said = Outcome(0)
    out, err = said.out, said.err
    if result.exit_code == 0:
        out += [changes.headline(found)] if found is not None else []
        out.append(f"final report: {result.message}")
        page = result.ws.root / "report.html"
        if page.is_file():
            out.append(f"report page: {page} (council open {result.ws.id})")
    elif result.exit_code in supervisor.SIGNAL_EXIT.values():  # cancelled: resumable
        err.append(f"council: {result.message}; {hint(result.ws, base)}")
    else:
        err.append(f"council: {result.message}")
    if exit_code and result.exit_code == supervisor.EXIT_FAILED:
        return Outcome(EXIT_UNKNOWN, out, err)
    if exit_code:
        changed = found is not None and bool(found.get("changed"))
        return Outcome(1 if changed else result.exit_code, out, err)
    return degraded(result, base, Outcome(result.exit_code, out, err))


def degraded(result: supervisor.RunResult, base: Path, said: Outcome) -> Outcome:
    """A done run that lost seats: exit EXIT_DEGRADED, with one line naming each and why,
    and how to add them."""
    if result.exit_code != 0 or not result.missing:
        return said
    line = (f"council: finished without {'; '.join(result.missing)}; "
            f"{hint(result.ws, base).replace('continue it', 'try them again')}")
    return Outcome(EXIT_DEGRADED, said.out, [*said.err, line])
