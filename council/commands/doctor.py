"""`council doctor`: can each CLI run here (readiness/doctor.py's checks)? Its findings are
computed once, then rendered as lines or as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from council.readiness import doctor as checks
from council.readiness.preflight import Readiness
from council.readiness.setup import HostSetup
from council.runoptions import RunOptions, Seat, search_path
from council.store.limits import Limit

# `council doctor --json`'s keys (documented in its --help): the top level, and each CLI's.
JSON_KEYS = ("ok", "clis", "hosts", "environment", "endpoints", "search", "credentials",
             "limits")
CLI_JSON_KEYS = ("cli", "path", "version", "tested", "tested_version", "credentials",
                 "ready", "problem", "live")
NO_AGENT = ("no agent can run here: install a CLI and log in to it, or start the server of "
            "a self-hosted seat, as the lines above say")


@dataclass(frozen=True)
class Findings:
    found: list[Readiness]  # each CLI as preflight finds it
    answers: dict[str, str] | None  # --live: each ready CLI's answer to the tiny prompt
    options: RunOptions | None  # the config's (None: it cannot be read)
    seats: tuple[Seat, ...]  # the configured seats, or one per CLI
    endpoints: list[dict[str, Any]]  # each self-hosted seat's server, as it answered
    notes: list[str]  # the endpoint check's notes
    hosted: set[str]  # the CLIs only self-hosted seats use
    ready: list[bool]  # per CLI of `found`: an agent of it can run here
    hosts: list[HostSetup]
    # Per seat: the credential it will use (`source`) and the login that overrides (a file).
    credentials: dict[str, dict[str, str | None]] = field(default_factory=dict)
    limits: list[Limit] = field(default_factory=list)  # recorded on this machine, in force

    @property
    def code(self) -> int:
        """0 when at least one agent can run here, else 1."""
        return 0 if any(self.ready) else 1


def doctor(hosts: list[HostSetup], live: bool = False) -> Findings:
    """Every check, once (`live`: and each ready CLI's answer to a tiny prompt). `hosts`:
    each host's setup (hosts/setup.check_hosts), which its caller, above the commands, reads."""
    found, answers = checks.checked(live)
    options = checks.configured()
    seats = checks.seats_of(options)
    rows, notes = checks.endpoint_rows(seats)
    hosted = checks.hosted_only(seats)
    return Findings(found, answers, options, seats, rows, list(notes), hosted,
                    [checks.can_run(r, seats, rows) for r in found], hosts,
                    checks.credential_rows(seats), checks.limit_rows())


def lines(f: Findings) -> list[str]:
    """`council doctor`'s lines."""
    header: tuple[str, ...] = checks.HEADER
    rows = [checks.cells(r, f.hosted) for r in f.found]
    if f.answers is not None:
        header = (*checks.HEADER, "live")
        rows = [(*row, f.answers.get(r.cli, "-")) for row, r in zip(rows, f.found, strict=True)]
    fixes = [p for r, ok in zip(f.found, f.ready, strict=True)
             if (p := checks.fix_line(r, f.hosted, ok))]
    return [*checks.table([header, *rows]), *fixes, "", *checks.hosts_lines(f.hosts), "",
            *checks.credential_lines(f.credentials), *checks.limit_lines(f.limits), "",
            *checks.environment_lines(f.seats), *checks.endpoint_lines(f.endpoints, f.notes),
            checks.policy_of(f.options), "",
            *checks.search_lines(f.seats)]


def as_json(f: Findings) -> dict[str, Any]:
    """The findings as data with stable keys (JSON_KEYS, CLI_JSON_KEYS; a host is
    HostSetup's fields): `ok` is whether any agent can run here (a CLI only self-hosted seats
    use is ready when one of their servers answered). Names only, never a secret's value."""
    clis = [dict(zip(CLI_JSON_KEYS, (
        r.cli, r.path, r.version, None if r.version is None else r.is_tested,
        r.tested, r.credentials, ok, None if r.cli in f.hosted and r.path else r.problem,
        None if f.answers is None else f.answers.get(r.cli)), strict=True))
        for r, ok in zip(f.found, f.ready, strict=True)]
    return {"ok": any(f.ready), "clis": clis, "hosts": [asdict(h) for h in f.hosts],
            "environment": checks.environment(f.seats),
            "endpoints": f.endpoints,
            "search": {s.name: search_path(s) for s in f.seats},
            "credentials": f.credentials,
            "limits": [asdict(limit) for limit in f.limits]}
