"""`council doctor`: can each CLI run here? On PATH, its version, whether council is tested
with that version, where its login comes from (preflight.py's checks, the same a run makes
before it starts), and whether council is set up in each host it can be started from
(setup.py). No secret is ever printed. `--live` also sends each ready CLI one tiny prompt
and times its answer."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from council import clis
from council.agents import adapter_for, selfhosted
from council.agents.base import private_root
from council.agents.environment import agent_env
from council.config import CLIS, Overrides, load_options
from council.domains import Policy
from council.errors import CouncilError
from council.readiness import endpoint
from council.readiness.preflight import (
    KEYS,
    Readiness,
    can_start,
    check,
    credentials,
    login_name,
    needs_login,
)
from council.readiness.setup import HostSetup
from council.runoptions import NO_SEARCH, RunOptions, Seat, search_path
from council.store import limits, logins

LIVE_PROMPT = "Reply with the single word OK."
LIVE_TIMEOUT = 120.0
HEADER = ("cli", "found", "version", "tested", "credentials")
HOSTS_HEADER = ("host", "council command")


def cells(found: Readiness, hosted: AbstractSet[str] = frozenset()) -> tuple[str, ...]:
    tested = ("-" if found.version is None else "yes" if found.is_tested
              else f"no ({found.tested})")
    login = "not needed (self-hosted)" if found.cli in hosted else "none"
    return (found.cli, found.path or "no", found.version or "-", tested,
            found.credentials or login)


def table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def hosts_lines(hosts: Sequence[HostSetup]) -> list[str]:
    """A table of the hosts council can be started from, then one fix line per host that is
    not set up: `council doctor` is where a user learns codex skipped an untrusted hook."""
    rows = [(h.host, h.state) for h in hosts]
    return [*table([HOSTS_HEADER, *rows]), *(f"{h.host}: {h.fix}" for h in hosts if h.fix)]


def configured() -> RunOptions | None:
    """The options your config gives every run, or None when it cannot be read."""
    try:
        return load_options(Overrides())
    except CouncilError:
        return None


def seats_of(options: RunOptions | None) -> tuple[Seat, ...]:
    """The configured seats, or one per CLI when the config cannot be read."""
    if options is None:
        return tuple(Seat(cli, cli) for cli in CLIS)
    return options.seats


def policy_line() -> str:
    """The source policy your config gives every run (domains.py; `council run
    --allow-domain/--deny-domain` add to it for one run)."""
    return policy_of(configured())


def policy_of(options: RunOptions | None) -> str:
    """policy_line's line for these options (None: the config cannot be read)."""
    if options is None:
        return "source policy: not known (the config file cannot be read: see council run)"
    return f"source policy: {Policy.of(options.sources).describe()}"


def environment_lines(seats: tuple[Seat, ...]) -> list[str]:
    """Which of this shell's variables each configured agent's CLI will be given: names,
    never values (agents/environment.py decides)."""
    lines = ["agents see (variable names; everything else in this shell stays out):",
             *(f"  {seat.name}: {', '.join(sorted(_seen(seat)))}"
               + (" (HOME: a private one in the run folder)"
                  if adapter_for(seat.cli).private_home else "")
               for seat in seats)]
    for cli in dict.fromkeys(seat.cli for seat in seats):
        lines += adapter_for(cli).doctor_notes()
    return lines


def environment(seats: tuple[Seat, ...]) -> dict[str, list[str]]:
    """Each seat's variable names (`council doctor --json`'s environment)."""
    return {s.name: sorted(_seen(s)) for s in seats}


def _seen(seat: Seat) -> dict[str, str]:
    return agent_env(seat.cli, extra=seat.env, vendor_vars=not seat.self_hosted)


def endpoint_rows(seats: tuple[Seat, ...]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each self-hosted seat's endpoint, model and window, and what its server says now
    (endpoint.py's checks, one per seat: about a second), and the notes of the seats whose
    window was not verified (an assumed one shows in the row)."""
    found = endpoint.checks(seats)
    return ([{"agent": c.seat.name, "cli": c.seat.cli, "endpoint": c.seat.base_url,
              "model": c.seat.model, "window": selfhosted.window(c.seat),
              "window_set": c.seat.context_window is not None, "problems": c.problems,
              "faults": list(c.faults)} for c in found],
            [note for c in found for note in c.unverified])


def endpoint_lines(rows: list[dict[str, Any]], notes: Sequence[str] = ()) -> list[str]:
    """`council doctor`'s lines on the seats that run on a server the user runs."""
    if not rows:
        return []
    lines = ["", "self-hosted agents (no vendor login; their server is checked instead):"]
    for row in rows:
        window = f"{row['window']} tokens" + ("" if row["window_set"] else " (not set)")
        state = "; ".join(row["faults"]) or "answers"
        lines.append(f"  {row['agent']}: {row['cli']} at {row['endpoint']}, model "
                     f"{row['model']}, window {window}: {state}")
    return [*lines, *(f"  {note}" for note in notes)]


def hosted_only(seats: tuple[Seat, ...]) -> set[str]:
    """The CLIs every configured seat of which runs on a server the user runs: they need
    no vendor login (preflight.needs_login), so doctor does not ask for one."""
    return ({s.cli for s in seats if not needs_login(s)}
            - {s.cli for s in seats if needs_login(s)})


def can_run(found: Readiness, seats: Sequence[Seat], rows: list[dict[str, Any]]) -> bool:
    """Whether an agent of this CLI can run here, as a run's preflight decides it
    (preflight.can_start: logged in, or for a self-hosted seat its CLI installed), and a
    self-hosted seat's server answered with no problem. A CLI no seat uses: its login."""
    answered = {row["agent"] for row in rows if not row["problems"]}
    mine = [s for s in seats if s.cli == found.cli] or [Seat(found.cli, found.cli)]
    return any(can_start(s, found) and (needs_login(s) or s.name in answered)
               for s in mine)


def fix_line(found: Readiness, hosted: AbstractSet[str], ready: bool) -> str | None:
    """The line naming what to do about this CLI, or None. A CLI only self-hosted seats use
    is never told to log in."""
    if found.cli not in hosted or found.path is None:
        return found.problem
    return (f"{found.cli} needs no login: its seats use a self-hosted server"
            + ("" if ready else ", which has a problem (below)"))


def credential_rows(seats: tuple[Seat, ...], env: Mapping[str, str] | None = None,
                    home: Path | None = None) -> dict[str, dict[str, str | None]]:
    """Which credential each configured seat will really use (preflight.credentials: the
    first of its CLI's keys set in the environment, else its login file, else what its
    adapter finds), and the login it overrides: a key in the environment wins over a
    subscription's login file, silently, and bills per token. Names only, never a value.
    A self-hosted seat needs none."""
    env = dict(os.environ if env is None else env)
    home = Path.home() if home is None else home
    out: dict[str, dict[str, str | None]] = {}
    for seat in seats:
        if seat.self_hosted:
            continue
        source = credentials(seat.cli, env, home)
        login = logins.login_file(seat.cli, env, str(home))
        overrides = login if source in KEYS[seat.cli] and Path(login).is_file() else None
        out[seat.name] = {"cli": seat.cli, "source": login_name(source),
                          "overrides": overrides}
    return out


def credential_lines(rows: Mapping[str, Mapping[str, str | None]],
                     home: Path | None = None) -> list[str]:
    """`council doctor`'s lines on them: `claude: ANTHROPIC_API_KEY (overrides your claude.ai
    login in ~/.claude/.credentials.json: billed per token)`."""
    home_text = str(Path.home() if home is None else home)
    lines = ["credentials (what each agent will use):"]
    for name, row in rows.items():
        shown = row["source"] or "none"
        if row["overrides"]:
            where = str(row["overrides"])
            where = "~" + where[len(home_text):] if where.startswith(home_text + "/") else where
            what = clis.facts(str(row["cli"])).subscription or "subscription"
            shown += f" (overrides your {what} login in {where}: billed per token)"
        lines.append(f"  {name}: {shown}")
    return lines


def limit_rows(now: datetime | None = None) -> list[limits.Limit]:
    """The vendors' limits recorded on this machine that still hold (store/limits.py)."""
    return limits.active(now)


def limit_lines(found: Sequence[limits.Limit]) -> list[str]:
    """Each limit recorded, until when; `council run` leaves its seat out until then."""
    if not found:
        return ["vendor limits recorded on this machine: none"]
    return ["vendor limits recorded on this machine (runs leave the seat out, or move it to "
            "its fallback, until then):", *(f"  {limit.describe()}" for limit in found)]


def search_lines(seats: tuple[Seat, ...] | None = None) -> list[str]:
    """How each configured agent searches the web: its vendor's search, an MCP server of its
    own declared `search: true` (`mcp_servers:`), or none, which a run marks NO_SEARCH."""
    seats = seats_of(configured()) if seats is None else seats
    return ["web search (each agent):",
            *(f"  {s.name}: {path}" + (" (give it an MCP server with `search: true`)"
                                       if path == NO_SEARCH else "")
              for s in seats for path in [search_path(s)])]


def live(cli: str) -> str:
    """One tiny real prompt through the CLI, as council drives it: `ok in 2.1 s` or why not."""
    # In a folder of council's, not $TMPDIR (agents.base.private_root), starting none of the
    # user's MCP servers, as an agent of a run would.
    try:
        root = private_root("doctor")
    except CouncilError as exc:
        return f"cannot start: {exc}"
    adapter = adapter_for(cli)
    with tempfile.TemporaryDirectory(prefix="live-", dir=root) as tmp:
        folder = Path(tmp)
        prompt, log = folder / "prompt.md", folder / "out.jsonl"
        prompt.write_text(LIVE_PROMPT, encoding="utf-8")
        try:  # the adapter's one-shot call, as the eval's judge makes it
            call = adapter.one_shot(folder, prompt)
        except CouncilError as exc:  # a codex config council cannot read safely
            return f"cannot start: {exc}"
        began = time.monotonic()
        try:
            with log.open("wb") as out, prompt.open("rb") as stdin:
                code: int | None = subprocess.run(
                    call.argv, cwd=call.cwd, env={**agent_env(cli), **call.env}, stdin=stdin,
                    stdout=out, stderr=subprocess.DEVNULL, timeout=LIVE_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            return f"no answer in {LIVE_TIMEOUT:g} s"
        except OSError as exc:
            return f"cannot start: {exc.strerror or exc}"
        took = time.monotonic() - began
        error = adapter.outcome(log, code).error
    return f"failed after {took:.1f} s: {error}" if error else f"ok in {took:.1f} s"


def checked(live_check: bool) -> tuple[list[Readiness], dict[str, str] | None]:
    """Each CLI as found, and (with `live_check`) each ready one's answer to the tiny prompt."""
    found = list(check(list(CLIS), version_timeout=15, every_version=True).values())
    if not live_check:
        return found, None
    ready = [r.cli for r in found if r.ready]
    with ThreadPoolExecutor(max_workers=len(CLIS)) as pool:
        return found, dict(zip(ready, pool.map(live, ready), strict=True))
