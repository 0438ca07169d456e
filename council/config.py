"""A run's options as a user gives them: read from the config files (with their trust) and the
command line, and put together with the rules between them (the synthesiser is an agent of
the council, compliance research debates).

The types they become, `Seat` and `RunOptions`, are declared in runoptions.py, below the
store that parses them from a run's state: import them from there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from council import domains, graph, options, paths, trust
from council.errors import ConfigError, UsageError
from council.options import Overrides as Overrides
from council.runoptions import CLIS as CLIS
from council.runoptions import EFFORTS as EFFORTS
from council.runoptions import NO_SEARCH, RunOptions, Seat, can_search, reject_unknown
from council.runoptions import PROFILES as PROFILES
from council.store import agentfs

SEAT_NAME = paths.SEAT_NAME
SEATS_KEY = "agents"  # the config file's table of seats, beside the options of options.py
# A config file is a page of settings: anything longer is refused, not read on (a project's
# council.yaml may be a link to /dev/zero).
MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True)
class ConfigFile:
    """A config file as read: the bytes judged for trust are the bytes parsed."""

    path: Path  # as named or found: a link keeps its own name
    real: Path  # the file it is
    origin: str  # "explicit" (--config), "project" (./council.yaml) or "user"
    sha256: str
    data: Mapping[str, Any]


def load_options(overrides: Overrides) -> RunOptions:
    """Build the run's options: built-in profile < config file < command line. A project's
    ./council.yaml is obeyed only once the user has trusted it (trust.py): judged after it is
    read and checked, before anything runs or is created."""
    source = _find_config(overrides.get("config"))
    built, configured = _build(source, overrides)
    if source is None:
        return built
    return replace(built, config_trust=_judge(source, configured))


@dataclass(frozen=True)
class Review:
    """A project config file as `council trust` shows it before asking: what it sets, and
    what a yes records (the bytes shown, and the files its extra_args name as they are)."""

    path: Path
    real: Path
    sha256: str
    named: dict[str, str]
    lines: list[str]


def review_file(path: Path) -> Review:
    """`council trust FILE`, before the question: the file checked as a config, and what it
    sets in words (the one-line summary, then every seat's extra_args and env in full and each
    file they name), for the person to judge."""
    source = read_config(path, "project")
    _, configured = _build(source, Overrides())
    named = _named(source, configured)
    lines = [f"{trust.shown(path)} (sha256 {source.sha256[:12]}) sets "
             f"{summary(source.data, configured)}", *_seat_lines(configured)]
    for name, state in named.items():
        what = {trust.MISSING: "missing now (if it appears, the config must be trusted again)",
                trust.FOLDER: "a folder (what is in it is not checked)"}.get(
            state, state.replace(":", " ", 1)[:19])
        lines.append(f"  it names {json.dumps(name)}: {what}")
    return Review(path, source.real, source.sha256, named, lines)


def trust_reviewed(review: Review) -> str:
    """Record a reviewed file as trusted, with the bytes and named files that were shown."""
    trust.record(review.real, review.sha256, review.named)
    return (f"trusted {trust.shown(review.path)} (sha256 {review.sha256[:12]}); a change to "
            "it, or to a file it names, must be trusted again")


def trust_file(path: Path) -> str:
    """Trust a file without asking: for code and tests standing in for a person who has
    reviewed it (`council trust` asks)."""
    return trust_reviewed(review_file(path))


def trusted_files() -> list[str]:
    """`council trust --list`: each trusted file and whether it still holds what was
    trusted."""
    lines = []
    for real, entry in sorted(trust.load().items()):
        if os.path.realpath(real) != real:
            lines.append(f"{real}  trusted {entry.get('trusted_at', '?')}  now a link: "
                         "refused")
            continue
        try:
            now = review_file(Path(real))
            verdict = trust.verdict({real: entry}, real, now.sha256, now.named)
        except UsageError:
            verdict = "unreadable, invalid or gone"
        state = {trust.TRUSTED: "unchanged", trust.CHANGED: "changed since: refused"}.get(
            verdict, verdict)
        lines.append(f"{real}  trusted {entry.get('trusted_at', '?')}  {state}")
    return lines


def revoke_file(path: Path) -> str:
    """`council trust --revoke FILE`."""
    if not trust.revoke(Path(os.path.realpath(path))):
        raise UsageError(f"{trust.shown(path)} is not trusted")
    return f"{trust.shown(path)} is no longer trusted"


def misplaced(data: Mapping[str, Any], known: set[str], where: str) -> None:
    """A ConfigError for a seat's own setting written at the top of a config file (a
    top-level `max_iterations: 3`): it is not a typo of another setting, so say where it
    goes (under each agent, or the flag the command line has for it) instead of guessing a
    close name."""
    seat_keys = {f.name for f in fields(Seat)} - {"name"}
    key = next((str(k) for k in data if k not in known and k in seat_keys), None)
    if key is None:
        return
    flag = options.OPTION.get(key)
    on_cli = (f", or give {flag.flag} to `council run` for every agent"
              if flag is not None and options.CLI in flag.given else "")
    raise ConfigError(f"{where}: {key} is a setting of each agent, not of the file: put it "
                      f"under {SEATS_KEY}.<name>.{key}{on_cli}")


def _judge(source: ConfigFile, configured: tuple[Seat, ...]) -> str:
    """Why this config file may be obeyed, for the plan and the run's state; or
    UntrustedConfig, saying what it would change."""
    if source.origin == "explicit":
        return trust.EXPLICIT
    own = Path(os.path.realpath(paths.user_config_file()))
    if source.origin == "user" or source.real == own:
        return trust.OWN
    if not source.data:
        return "empty: it changes nothing"
    named = _named(source, configured)
    record = trust.load()
    verdict = trust.verdict(record, str(source.real), source.sha256, named)
    if verdict != trust.TRUSTED:
        entry = record.get(str(source.real), {})
        files = (trust.changed_files(entry, named)
                 if entry.get("sha256") == source.sha256 else ())
        raise trust.UntrustedConfig(source.path, summary(source.data, configured),
                                    verdict == trust.CHANGED,
                                    outline(source.data, configured), files)
    when = str(record[str(source.real)].get("trusted_at", "?"))[:10]
    return f"trusted with `council trust` on {when}, sha256 {source.sha256[:12]}"


def _named(source: ConfigFile, seats: tuple[Seat, ...]) -> dict[str, str]:
    """The files a project config's extra_args name by full path, each as trust.pin finds
    it, so that trust covers them too. A relative name is the CLI's to resolve in the agent's
    own folder, which the file cannot reach, unless it climbs out with `..`, or names a file
    beside the config (which the CLI would not find there): those are refused, asking for the
    full path."""
    folder = Path(os.path.abspath(source.path)).parent
    named: dict[str, str] = {}
    for seat in seats:
        where = f"{source.path}: {SEATS_KEY}.{seat.name}.extra_args"
        # An MCP server's command and arguments name files the same way (a script's path).
        values = [(v, where) for v in trust.candidates(seat.extra_args)] + [
            (v, f"{source.path}: {SEATS_KEY}.{seat.name}.mcp_servers.{s.name}")
            for s in seat.mcp_servers if s.command
            for v in (s.command, *trust.candidates(s.args))]
        for value, where in values:
            full = trust.full_path(value)
            if full is None:
                beside = os.path.normpath(value or ".") != "." and os.path.lexists(
                    folder / value)  # "." is the agent's own folder
                if trust.climbs(value) or beside:
                    raise ConfigError(
                        f"{where}: {json.dumps(value)} names a file by a relative path, which "
                        "the CLI resolves in the agent's own folder: give its full path")
                continue
            if full not in named:
                named[full] = trust.pin(full, where)
    return dict(sorted(named.items()))


def _build(source: ConfigFile | None, overrides: Overrides
           ) -> tuple[RunOptions, tuple[Seat, ...]]:
    """The options, checked, and the seats the config file itself defines."""
    config_path = source.path if source else None
    data: Mapping[str, Any] = source.data if source else {}
    where = str(config_path) if config_path else "config"
    machine = set(_machine_settings(source)) if source else set()  # the user's file only
    settings = {o.name for o in options.given_on(options.CONFIG)} | {SEATS_KEY} | machine
    if isinstance(data, Mapping):
        misplaced(data, settings, where)
    reject_unknown(data, settings, where)
    value = options.resolve(overrides, data, where)
    profile = value["profile"]

    agents = data.get(SEATS_KEY)
    configured: tuple[Seat, ...] = ()
    if agents is None:
        seats = PROFILES[profile]
    else:
        if not isinstance(agents, Mapping) or not agents:
            raise ConfigError(f"{where}: '{SEATS_KEY}' must map agent names to settings")
        seats = tuple(
            Seat.from_dict(str(name), spec or {}, f"{where}: {SEATS_KEY}.{name}")
            for name, spec in agents.items()
        )
        configured = seats
        if overrides.get("test"):
            seats = tuple(_cheapen(seat) for seat in seats)

    chosen = value["agents"]
    if chosen:
        known = {s.name: s for s in seats}
        unknown = [a for a in chosen if a not in known]
        if unknown:
            raise UsageError(
                f"unknown agent {unknown[0]!r}: this council has {', '.join(known)}"
            )
        seats = tuple(known[a] for a in dict.fromkeys(chosen))

    if value["max_iterations"] is not None:
        seats = tuple(replace(s, max_iterations=value["max_iterations"]) for s in seats)
        for seat in seats:
            seat.validate("--max-iterations")
    else:  # the depth caps the turns a cap nobody gave (graph.DEPTH_TURNS)
        given = {str(name) for name, spec in (agents or {}).items()
                 if isinstance(spec, Mapping) and "max_iterations" in spec}
        seats = tuple(s if s.name in given else replace(
            s, max_iterations=graph.depth_turns(value["depth"], s.max_iterations))
            for s in seats)

    names = [s.name for s in seats]
    synthesizer = value["synthesizer"]
    if "synthesizer" not in overrides and chosen and synthesizer not in names:
        synthesizer = names[0]  # --agents left the default synthesiser out: the first one writes
    if synthesizer not in names:
        raise UsageError(
            f"synthesizer {synthesizer!r} is not an agent of this council ({', '.join(names)})"
        )
    if value["mode"] == "compliance" and value["debate"] == "off":
        raise UsageError("compliance research is always challenged by the antagonist: "
                         "drop --debate off (or debate: off in the config), or use another "
                         "--mode")
    if value["dissent"] not in ("auto", "off", *names):
        raise UsageError(f"{_label('dissent', overrides, where)} must be auto, off or an "
                         f"agent of this council ({', '.join(names)})")

    fields_ = {option.name: value[option.name] for option in options.FIELDS}
    fields_["sources"] = domains.merge(value["sources"], value["allow_domain"] or (),
                                       value["deny_domain"] or ())
    return RunOptions(**{
        **fields_, "seats": seats, "synthesizer": synthesizer,
        "config_file": str(config_path) if config_path else None,
    }), configured


def _machine_settings(source: ConfigFile) -> dict[str, Any]:
    """The machine's settings (options.MACHINE) a config file sets, checked: only the
    user's own file may set them (a project's council.yaml is refused, trusted or not)."""
    found = {o.name: o for o in options.MACHINE if o.name in source.data}
    own = source.origin == "user" or \
        source.real == Path(os.path.realpath(paths.user_config_file()))
    if found and not own:
        name = next(iter(found))
        raise ConfigError(f"{source.path}: {name} is a setting of this machine: set it in "
                          f"your own config file, {paths.user_config_file()}, or "
                          f"${options.MAX_RUNS_ENV}")
    return {name: o.check(source.data[name], f"{source.path}: {name}")
            for name, o in found.items()}


def max_runs() -> tuple[int, str]:
    """How many council runs may be active at once on this machine, and where that number
    comes from: $COUNCIL_MAX_RUNS, else `max_runs` in the user's own config file, else the
    default. Never a project's config (see options.MACHINE)."""
    option = options.MACHINE[0]
    word = os.environ.get(options.MAX_RUNS_ENV)
    if word is not None:
        try:
            value = option.kind.read(word)
        except options.Invalid as exc:
            raise ConfigError(f"${options.MAX_RUNS_ENV} {exc}") from None
        return int(value), f"${options.MAX_RUNS_ENV}"
    path = paths.user_config_file()
    if os.path.lexists(path):
        given = _machine_settings(read_config(path, "user"))
        if option.name in given:
            return int(given[option.name]), f"{option.name} in {path}"
    return int(option.default), (f"the default; {option.name} in {path} or "
                                 f"${options.MAX_RUNS_ENV} changes it")


def _label(name: str, overrides: Overrides, where: str) -> str:
    """Where an option's value came from, to start an error with: its flag or the file."""
    return options.OPTION[name].flag if name in overrides else f"{where}: {name}"


def _cheapen(seat: Seat) -> Seat:
    """--test on a configured council: the test profile's model for the seat's CLI (a CLI
    the profile has no seat of keeps the seat's own)."""
    cheap = {s.cli: s for s in PROFILES["test"]}.get(seat.cli, seat)
    # A self-hosted seat keeps its model: the server serves that one, not a vendor's.
    model = seat.model if seat.self_hosted else cheap.model
    return replace(seat, model=model, effort=cheap.effort, max_iterations=2)


def _find_config(explicit: Path | None) -> ConfigFile | None:
    """The file named with --config, else ./council.yaml, else the user's own; whatever
    stands at the name counts (a FIFO, a dangling link: refused, not skipped)."""
    if explicit is not None:
        return read_config(explicit, "explicit")
    for path, origin in ((paths.project_config_file(), "project"),
                         (paths.user_config_file(), "user")):
        if os.path.lexists(path):
            return read_config(path, origin)
    return None


def read_config(path: Path, origin: str) -> ConfigFile:
    """Read and parse a config file, at most MAX_CONFIG_BYTES of it, never blocking: a
    project's file is as untrusted as what an agent leaves (a FIFO, a link to /dev/zero). A
    link is read through, as the file it points to (agentfs refuses a link at the last
    step, so the target is opened by its own path)."""
    real = Path(os.path.realpath(path))
    try:
        raw = agentfs.read(real, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except OSError as exc:  # agentfs.UnsafeFile: its message says what stands there
        if isinstance(exc.__cause__, PermissionError):
            raise ConfigError(f"cannot read config file {path}: permission denied") from exc
        what = exc.strerror or str(exc)
        link = "" if str(real) == os.path.abspath(path) else f" {path} is a link:"
        raise ConfigError(f"config file{link} {what}") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read config file {path}: not UTF-8 text") from exc
    return ConfigFile(path, real, origin, trust.digest(raw), _parse(path, text))


def _parse(path: Path, text: str) -> Mapping[str, Any]:
    import yaml  # only with a config file: a run without one starts ~30 ms sooner

    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}{pos}: invalid YAML: {exc.problem or exc.context}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return data


# ---------------------------------------------------------------- what a config sets, in words

SUMMARY_CHARS = 600  # the refusal is one line: a config that sets more is cut, with a note
LIST_ITEMS = 6
ITEM_CHARS = 60
_PLAIN = re.compile(r"^[\w.:/@+-]{1,60}$")


def summary(data: Mapping[str, Any], seats: tuple[Seat, ...]) -> str:
    """What a (checked) config file would change, in one line, for the refusal and for
    `council trust`: its agents and their CLIs, each extra_args, env and fallback, then its
    other settings. Values are quoted as JSON, so no newline or escape code gets through."""
    parts = []
    if seats:
        parts.append("agents " + _few([f"{s.name} ({s.cli})" for s in seats]))
    parts += [f"extra_args {_args(s.extra_args, ITEM_CHARS)} for {s.name}"
              for s in seats if s.extra_args]
    parts += [f"env [{_few(list(s.env))}] for {s.name}" for s in seats if s.env]
    parts += [f"fallback {s.fallback} for {s.name}" for s in seats if s.fallback]
    parts += [f"base_url {json.dumps(s.base_url)} for {s.name}" for s in seats if s.base_url]
    parts += [f"api_key_env {s.api_key_env} for {s.name}" for s in seats if s.api_key_env]
    parts += [f"mcp_servers {_mcp(s, ITEM_CHARS)} for {s.name}" for s in seats if s.mcp_servers]
    others = [f"{key} {_policy(value) if key == 'sources' else _value(value)}"
              for key, value in data.items() if key != SEATS_KEY]
    if others:
        parts.append(_few(others))
    text = "; ".join(parts) or "nothing"
    if len(text) > SUMMARY_CHARS:
        text = text[:text.rfind("; ", 0, SUMMARY_CHARS)] + "; … more in the file"
    return text


def plan_lines(run: RunOptions) -> list[str]:
    """The plan's lines on where the options came from: the config file and why it was
    obeyed, then every seat's extra_args and env in full (they reach the CLIs' command lines
    and environments, so the user sees them before anything is spent)."""
    if run.config_file is None:
        lines = [f"config: no config file, {run.profile} profile"]
    else:
        lines = [f"config: {trust.shown(Path(run.config_file))} "
                 f"({run.config_trust or 'not judged'})"]
    policy = ([f"sources: {domains.Policy.of(run.sources).describe()}"] if run.sources
              else [])
    return lines + (_seat_lines(run.seats) or ["  no agent has extra_args or env"]) + policy


def _seat_lines(seats: Sequence[Seat]) -> list[str]:
    """Each seat's extra_args, env and MCP servers in full, and "no web search" for a seat
    that has neither its vendor's search nor a search server: one line per seat with any."""
    lines = []
    for seat in seats:
        bits = ([f"extra_args {_args(seat.extra_args)}"] if seat.extra_args else []) + (
            [f"env [{', '.join(seat.env)}]"] if seat.env else []) + (
            [f"mcp_servers {_mcp(seat)}"] if seat.mcp_servers else []) + (
            [] if can_search(seat) else [NO_SEARCH])
        if bits:
            lines.append(f"  {seat.name}: {'; '.join(bits)}")
    return lines


def outline(data: Mapping[str, Any], seats: tuple[Seat, ...]) -> str:
    """What a (checked) config file sets, in names only, for a model to relay: the agents and
    their CLIs, which have extra_args, env or a fallback, the other settings' keys. Each word
    is a checked name (SEAT_NAME, CLIS, the known settings), never a value from the file:
    a value could be an instruction."""
    parts = []
    if seats:
        parts.append("agents " + _few([f"{s.name} ({s.cli})" for s in seats]))
    for key in ("extra_args", "env", "fallback", "base_url", "api_key_env", "mcp_servers"):
        having = [s.name for s in seats if getattr(s, key)]
        if having:
            parts.append(f"{key} for {_few(having)}")
    others = [str(key) for key in data if key != SEATS_KEY]
    if others:
        parts.append("settings " + _few(others))
    return "; ".join(parts) or "nothing"


def _few(items: list[str]) -> str:
    more = len(items) - LIST_ITEMS
    return ", ".join(items[:LIST_ITEMS] + ([f"… {more} more"] if more > 0 else []))


def _args(args: Sequence[str], cut: int | None = None) -> str:
    """A seat's extra_args as a JSON list (`cut`: each cut to that many characters and at
    most LIST_ITEMS of them, for the one-line refusal)."""
    if cut is None:
        return json.dumps(list(args))
    shown = [json.dumps(a[:cut]) + ("…" if len(a) > cut else "") for a in args]
    return f"[{_few(shown)}]"


def _mcp(seat: Seat, cut: int | None = None) -> str:
    """A seat's MCP servers as the user must see them before trusting: each name with its
    command line or URL, and the names (not the values) of the variables it is given."""
    shown = []
    for server in seat.mcp_servers:
        what = (json.dumps(server.url) if server.url is not None
                else _args((server.command or "", *server.args), cut))
        env = f" env [{', '.join(k for k, _ in server.env)}]" if server.env else ""
        shown.append(f"{server.name}={what}{env}{' (search)' if server.search else ''}")
    return f"[{_few(shown) if cut else ', '.join(shown)}]"


def _policy(value: Any) -> str:
    """A config's `sources` as the user must judge it: its allow and deny lists, bounded
    (LIST_ITEMS domains each, cut at ITEM_CHARS). The value was checked (_build runs first),
    so its rules are domain names; one that is not is said to be a mapping, not shown."""
    try:
        policy = domains.Policy.of(domains.merge(value))
    except (ValueError, TypeError, AttributeError):
        return _value(value)

    def rules(kind: str, names: tuple[str, ...]) -> list[str]:
        cut = [n[:ITEM_CHARS] + ("…" if len(n) > ITEM_CHARS else "") for n in names]
        return [f"{kind} [{_few(cut)}]"] if names else []

    return " ".join(rules("allow", policy.allow) + rules("deny", policy.deny)) or "(none)"


def _value(value: Any) -> str:
    """A top-level setting's value, short. Only scalars are rendered: a value the command
    line overrode was never checked, and YAML aliases can nest a list a billion items deep."""
    if isinstance(value, str) and _PLAIN.fullmatch(value):
        return value
    if not isinstance(value, str | int | float | bool) and value is not None:
        return f"(a {type(value).__name__})"
    text = json.dumps(value)
    return text if len(text) <= ITEM_CHARS else text[:ITEM_CHARS] + "…"
