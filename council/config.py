"""A run's options as a user gives them: read from the config files (with their trust) and the
command line, and put together with the rules between them (the synthesiser is an agent of
the council, compliance research debates).

The types they become, `Seat` and `RunOptions`, are declared in runoptions.py, below the
store that parses them from a run's state: import them from there.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from council import clis, domains, options, paths, runoptions, trust
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
    layer = _over_own(source)
    built, configured = _build(source, overrides, layer)
    if source is None:
        return built
    why = _judge(source, configured)
    notes = [*(layer.notes if layer else []), *_private_note(source)]
    return replace(built, config_trust="; ".join([why, *notes]))


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
    sets in words (the one-line summary, then every seat's settings that send the question
    or a secret somewhere, in full (`_seat_lines`), and each file they name), for the person
    to judge."""
    source = read_config(path, "project")
    try:
        layer = _over_own(source)
    except ConfigError as exc:  # shown, not in the way: the run refuses with the same line
        layer = Layer(source.data, [f"it cannot run on top of your own config file: {exc}"])
    _, configured = _build(source, Overrides(), layer)
    named = _named(source, configured)
    lines = [f"{trust.shown(path)} (sha256 {source.sha256[:12]}) sets "
             f"{summary(source.data, configured)}", *_seat_lines(configured, review=True),
             *(f"  {note}" for note in (layer.notes if layer else []))]
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
    if _is_own(source):
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


def _configured(agents: Any, where: str) -> tuple[Seat, ...]:
    """The seats a config file's `agents:` defines, checked; none when it has no such key."""
    if agents is None:
        return ()
    if not isinstance(agents, Mapping) or not agents:
        raise ConfigError(f"{where}: '{SEATS_KEY}' must map agent names to settings")
    return tuple(Seat.from_dict(str(name), spec or {}, f"{where}: {SEATS_KEY}.{name}")
                 for name, spec in agents.items())


def _capped(seats: tuple[Seat, ...], value: Mapping[str, Any], agents: Any
            ) -> tuple[Seat, ...]:
    """The seats with their turns capped: by --max-iterations, else by the depth where the
    config file gave the seat no cap of its own (options.DEPTH_TURNS)."""
    if value["max_iterations"] is not None:
        seats = tuple(replace(s, max_iterations=value["max_iterations"]) for s in seats)
        for seat in seats:
            seat.validate("--max-iterations")
        return seats
    given = {str(name) for name, spec in (agents or {}).items()
             if isinstance(spec, Mapping) and "max_iterations" in spec}
    return tuple(s if s.name in given else replace(
        s, max_iterations=options.depth_turns(value["depth"], s.max_iterations))
        for s in seats)


def _build(source: ConfigFile | None, overrides: Overrides, layer: Layer | None = None
           ) -> tuple[RunOptions, tuple[Seat, ...]]:
    """The options, checked, and the seats the config file itself defines. `layer`: the
    file is a project's on top of the user's own (_over_own), whose settings it holds."""
    config_path = source.path if source else None
    data: Mapping[str, Any] = layer.data if layer else source.data if source else {}
    if source is not None and layer is None and _private_note(source):
        data = _without_private(data)
    where = str(config_path) if config_path else "config"
    machine = set(_machine_settings(source)) if source else set()  # the user's file only
    settings = {o.name for o in options.given_on(options.CONFIG)} | {SEATS_KEY} | machine
    if isinstance(data, Mapping):
        misplaced(data, settings, where)
    reject_unknown(data, settings, where)
    value = options.resolve(overrides, data, where)
    profile = value["profile"]

    agents = data.get(SEATS_KEY)
    defined = _configured(agents, where)
    seats = PROFILES[profile] if agents is None else tuple(
        _cheapen(seat) for seat in defined) if overrides.get("test") else defined
    # The seats the file itself defines (not the user's own, under a project's file): what
    # its trust covers.
    configured = defined if source is None or SEATS_KEY in source.data else ()
    chosen = value["agents"]
    if chosen:
        known = {s.name: s for s in seats}
        unknown = [a for a in chosen if a not in known]
        if unknown:
            raise UsageError(
                f"unknown agent {unknown[0]!r}: this council has {', '.join(known)}"
            )
        seats = tuple(known[a] for a in dict.fromkeys(chosen))

    seats = _capped(seats, value, agents)
    names = [s.name for s in seats]
    synthesizer = _synthesizer(value["synthesizer"], names, overrides,
                               "synthesizer" in data and not chosen, where)
    if value["mode"] == "compliance" and value["debate"] == "off":
        raise UsageError("compliance research is always challenged by the antagonist: "
                         "drop --debate off (or debate: off in the config), or use another "
                         "--mode")
    if value["dissent"] not in ("auto", "off", *names):
        raise UsageError(f"{_label('dissent', overrides, where)} must be auto, off or an "
                         f"agent of this council ({', '.join(names)})")

    fields_ = {option.name: value[option.name] for option in runoptions.FIELDS}
    fields_["sources"] = domains.merge(value["sources"], value["allow_domain"] or (),
                                       value["deny_domain"] or ())
    return RunOptions(**{
        **fields_, "seats": seats, "synthesizer": synthesizer,
        "config_file": str(config_path) if config_path else None,
    }), configured


# ---------------------------------------------------------------- a project's file over the user's

# Limits a project's council.yaml may lower, never lift, when the user's own file sets them.
LIMITS = ("max_cost", "max_tokens", "timeout", "idle_timeout", "max_parallel")
# Settings that name seats: the user's apply under a project's seats only if they name one.
NAMES_A_SEAT = ("synthesizer", "dissent")


@dataclass(frozen=True)
class Layer:
    """A project's config file on top of the user's own: the settings to build from, and
    what the project's file changes, in words, for the plan and `council trust`."""

    data: Mapping[str, Any]
    notes: list[str]


def _is_own(source: ConfigFile) -> bool:
    return source.origin == "user" or \
        source.real == Path(os.path.realpath(paths.user_config_file()))


def _over_own(source: ConfigFile | None) -> Layer | None:
    """A project's ./council.yaml adds to the user's own config file, never takes from it:
    the user's settings hold where the project's file sets nothing; its other settings
    replace the user's (its agents replace the user's agents whole); the source policy is
    both files' (every deny rule of either, an allow list only narrowed: domains.both); a
    limit the user set (LIMITS) is only ever lowered. None when there is nothing to layer:
    no file, a file the user named or their own, or no file of their own."""
    if source is None or source.origin != "project" or _is_own(source):
        return None
    path = paths.user_config_file()
    if not os.path.lexists(path):
        return None
    own = read_config(path, "user")
    _build(own, Overrides())  # checked on its own, so its errors name it
    machine = {o.name for o in options.MACHINE}
    mine = {k: v for k, v in own.data.items() if k not in machine}
    theirs = source.data
    data = {**mine, **theirs}
    sets = [str(k) for k in theirs if k not in (*LIMITS, "sources")]
    notes = [f"on top of your own config file, {trust.shown(path, True)}"
             + (f": it sets {_few(sets)}" if sets else "")]
    if SEATS_KEY in theirs:  # not checked yet (_build does): a mapping or nothing
        agents = theirs[SEATS_KEY]
        seats = {str(name) for name in agents} if isinstance(agents, Mapping) else set()
        for key in NAMES_A_SEAT:
            if key not in theirs and key in mine and mine[key] not in (*seats, "auto", "off"):
                data.pop(key)
    for key in LIMITS:
        if key in mine and key in theirs:
            option = options.OPTION[key]
            yours = option.check(mine[key], f"{path}: {key}")
            asked = option.check(theirs[key], f"{source.path}: {key}")
            if asked is None or (yours is not None and asked > yours):
                data[key] = yours
                notes.append(f"your {key} {_value(yours)} holds (it sets {_value(asked)})")
            else:
                notes.append(f"it lowers your {key} {_value(yours)} to {_value(asked)}")
        elif key in theirs:
            notes.append(f"it sets {key} {_value(theirs[key])}")
    if "sources" in theirs:
        data["sources"], said = _sources(mine.get("sources"), theirs["sources"], path,
                                         source.path)
        notes.append(said)
    return Layer(data, notes)


def _sources(yours: Any, asked: Any, own: Path, project: Path
             ) -> tuple[dict[str, list[str]] | None, str]:
    """Both files' source policies as one (domains.both), and what the project's changes."""
    option = options.OPTION["sources"]
    mine = domains.Policy.of(option.check(yours, f"{own}: sources") if yours else None)
    theirs = domains.Policy.of(option.check(asked, f"{project}: sources"))
    joined = domains.both(mine, theirs)
    if joined is not None:  # allow_private is your own file's word only
        joined = replace(joined, allow_private=mine.allow_private)
    if joined is None:
        raise ConfigError(f"{project}: sources.allow shares no domain with the allow list of "
                          f"your own config file, {own}: a project's file may narrow your "
                          "allow list, never widen it")
    added = [d for d in joined.deny if d not in mine.deny]
    bits = [f"adds deny [{_few(added)}]"] if added else []
    if joined.allow != mine.allow:
        bits.append(f"{'narrows your allow list to' if mine.allow else 'allows only'} "
                    f"[{_few(list(joined.allow))}]")
    held = ([f"your deny [{_few(list(mine.deny))}]"] if mine.deny else []) + (
        [f"your allow [{_few(list(mine.allow))}]"]
        if mine.allow and joined.allow == mine.allow else [])
    said = "sources: it " + (", ".join(bits) or "changes nothing")
    if held:
        said += f"; {' and '.join(held)} {'hold' if len(held) > 1 else 'holds'}"
    return domains.as_stored(joined), said


def _private_note(source: ConfigFile) -> list[str]:
    """`sources: {allow_private: true}` lets council's own fetches reach private addresses:
    only the user's own config file may say so. A project's council.yaml (or a file named
    with --config) that says it is ignored, and the plan's config line says so."""
    sources = source.data.get("sources") if isinstance(source.data, Mapping) else None
    if _is_own(source) or not isinstance(sources, Mapping) or not sources.get(domains.PRIVATE):
        return []
    return [f"its sources.{domains.PRIVATE} is ignored: only your own config file, "
            f"{paths.user_config_file()}, may let council fetch private addresses"]


def _without_private(data: Mapping[str, Any]) -> Mapping[str, Any]:
    sources = data.get("sources")
    if not isinstance(sources, Mapping):
        return data
    return {**data, "sources": {k: v for k, v in sources.items() if k != domains.PRIVATE}}


def _machine_settings(source: ConfigFile) -> dict[str, Any]:
    """The machine's settings (options.MACHINE) a config file sets, checked: only the
    user's own file may set them (a project's council.yaml is refused, trusted or not)."""
    found = {o.name: o for o in options.MACHINE if o.name in source.data}
    if found and not _is_own(source):
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


def _synthesizer(given: str, names: list[str], overrides: Overrides, in_file: bool,
                 where: str) -> str:
    """Who writes the final report: the synthesiser the command line or the config file
    names, else the default one (claude) if it is an agent of this council, else the first
    agent (--agents left it out, or the config's agents replace the default ones). One that
    was named (`in_file`: by the config, and no --agents chose others) and is not an agent
    is a UsageError naming the fix."""
    named = "synthesizer" in overrides or in_file
    if given in names:
        return given
    if not named:
        return names[0]
    label = _label("synthesizer", overrides, where)
    fix = ("--synthesizer NAME" if "synthesizer" in overrides
           else f"synthesizer: NAME in {where}")
    raise UsageError(f"{label} {given!r} is not an agent of this council "
                     f"({', '.join(names)}): give one of them ({fix}), or leave it out and "
                     f"the first, {names[0]}, writes the final report")


def synthesizer_lines(run: RunOptions) -> list[str]:
    """The plan's line on who writes the final report, where the default synthesiser
    (claude) is not an agent of the council and the first agent writes instead (the config's
    agents replace the default ones, or --agents left it out): which one, and how to pick
    another. Nothing when the default one writes or another was named."""
    default = options.OPTION["synthesizer"].default
    names = [s.name for s in run.seats]
    if default in names or not names or run.synthesizer != names[0]:
        return []
    return [f"final report: written by {run.synthesizer}, the first agent, as none is named "
            f"{default} (synthesizer: NAME in the config, or --synthesizer NAME, picks "
            "another)"]


def _label(name: str, overrides: Overrides, where: str) -> str:
    """Where an option's value came from, to start an error with: its flag or the file."""
    return options.OPTION[name].flag if name in overrides else f"{where}: {name}"


def _cheapen(seat: Seat) -> Seat:
    """--test on a configured council: the test profile's model and effort for the seat's
    CLI, from its facts (clis.Cli.profiles; a CLI without a test profile keeps the seat's
    own)."""
    facts = clis.REGISTRY.get(seat.cli)
    cheap_model, effort = (facts.profiles.get("test") if facts is not None else None) or (
        seat.model, seat.effort)
    # A self-hosted seat keeps its model: the server serves that one, not a vendor's.
    model = seat.model if seat.self_hosted else cheap_model
    return replace(seat, model=model, effort=effort,
                   max_iterations=runoptions.PROFILE_ITERATIONS["test"])


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
    # Where the question goes and which secret goes with it come first, before what a cut
    # may drop (`council trust` shows every seat's in full below the line).
    parts += [f"base_url {json.dumps(s.base_url)} for {s.name}" for s in seats if s.base_url]
    parts += [f"api_key_env {s.api_key_env} for {s.name}" for s in seats if s.api_key_env]
    parts += [f"extra_args {_args(s.extra_args, ITEM_CHARS)} for {s.name}"
              for s in seats if s.extra_args]
    parts += [f"env [{_few(list(s.env))}] for {s.name}" for s in seats if s.env]
    parts += [f"fallback {s.fallback} for {s.name}" for s in seats if s.fallback]
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


def _seat_lines(seats: Sequence[Seat], review: bool = False) -> list[str]:
    """Each seat's extra_args, env and MCP servers in full, and "no web search" for a seat
    that has neither its vendor's search nor a search server: one line per seat with any.
    `review` (`council trust`): also every other setting that sends the question or a
    secret somewhere, in full: the server (base_url), the variable whose value goes to it
    (api_key_env), the vendor a failure moves the seat to (fallback), and each MCP server's
    environment with the variables of council's its values are read from."""
    lines = []
    for seat in seats:
        sends = ([f"base_url {json.dumps(seat.base_url)}"] if seat.base_url else []) + (
            [f"api_key_env {seat.api_key_env}"] if seat.api_key_env else []) + (
            [f"fallback {seat.fallback}"] if seat.fallback else []) if review else []
        bits = ([f"extra_args {_args(seat.extra_args)}"] if seat.extra_args else []) + (
            [f"env [{', '.join(seat.env)}]"] if seat.env else []) + sends + (
            [f"mcp_servers {_mcp(seat, values=review)}"] if seat.mcp_servers else []) + (
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


def _mcp(seat: Seat, cut: int | None = None, values: bool = False) -> str:
    """A seat's MCP servers as the user must see them before trusting: each name with its
    command line or URL, and the names of the variables it is given (`values`: with the
    variables of council's environment they are read from, as JSON, for the review)."""
    shown = []
    for server in seat.mcp_servers:
        what = (json.dumps(server.url) if server.url is not None
                else _args((server.command or "", *server.args), cut))
        given = json.dumps(dict(server.env)) if values else \
            f"[{', '.join(k for k, _ in server.env)}]"
        env = f" env {given}" if server.env else ""
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
    if isinstance(value, float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{value:g}"
    if not isinstance(value, str | int | float | bool) and value is not None:
        return f"(a {type(value).__name__})"
    text = json.dumps(value)
    return text if len(text) <= ITEM_CHARS else text[:ITEM_CHARS] + "…"
