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


@dataclass(frozen=True)
class Outcome:
    code: int
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


def outcome(result: supervisor.RunResult, base: Path, exit_code: bool = False) -> Outcome:
    """A --since run says in one line what changed, or that nothing did, then where its
    report is; with `exit_code` a changed one exits 1 (changes.json's `changed`), and one
    that failed or could not compare exits EXIT_UNKNOWN."""
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
    changed = found is not None and bool(found.get("changed"))
    return Outcome(1 if exit_code and changed else result.exit_code, out, err)
