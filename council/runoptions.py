"""A council's seats and a run's options, as types: `Seat` (one agent: a CLI plus model, reasoning
effort, iteration cap and extra arguments) and `RunOptions` (the seats and every option of
options.py a run keeps), with their checks and their stored form (to_dict / from_dict).

A declaration, below every floor: config.py builds these from the config file and the command
line, and the store parses them once, when it reads a run's state.yaml, so every reader of a
run gets them typed. Pure: no file is read here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from council import clis, options
from council.errors import ConfigError, UsageError
from council.options import MAX_ITERATIONS_LIMIT
from council.paths import SEAT_NAME

CLIS = tuple(clis.REGISTRY)  # every CLI council can drive (clis.py)
EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# An MCP server's name: a TOML bare key (codex splits a `-c` key at every dot, so no dot) and
# part of a tool's name (claude's `mcp__<server>__<tool>`), so no double underscore either.
MCP_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,39}$")


# ---------------------------------------------------------------- the keys of a seat

KEY = "council.key"  # a seat's or an MCP server's field metadata: its key's kind and help


class _KeyKind:
    """The kind of a seat's key or an MCP server's (a config file's `agents:` section): its
    refusal says what was expected, as it always has, and `dump` is its value as state.yaml
    stores it. An options.Kind, so each key is an options.Option (`keys`)."""

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def read(self, word: str) -> Any:
        return self.check(word)

    def take(self, value: Any) -> Any:
        return self.check(value)

    def schema(self) -> dict[str, Any]:
        return {}

    def dump(self, value: Any) -> Any:
        return value

    def check_at(self, value: Any, where: str) -> Any:
        try:
            return self.check(value)
        except options.Invalid as exc:
            raise ConfigError(f"{where}: {exc}") from None


class _Word(_KeyKind):
    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise options.Invalid("expected a non-empty string")
        return value


class _Name(_KeyKind):
    """A seat's name: the key it is listed under (Seat.validate checks its form)."""

    def check(self, value: Any) -> Any:
        return str(value)


class _Whole(_KeyKind):
    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise options.Invalid("expected a whole number")
        return value


class _Switch(_KeyKind):
    def check(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise options.Invalid("expected true or false")
        return value


class _Words(_KeyKind):
    def check(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise options.Invalid("expected a list of strings")
        return tuple(value)

    def dump(self, value: Any) -> Any:
        return list(value)


class _Variables(_KeyKind):
    """An MCP server's variables, each named after one of council's environment: a mapping
    of the server's name to council's (`{REGION: COUNCIL_MCP_REGION}`), or a list of names
    the server gets as they are (`[BRAVE_API_KEY]`, as a seat's `env`). Never a value: the
    value is read from council's environment when the CLI starts (agents/mcp.py), so no file
    of council's holds it. Kept sorted by the server's name."""

    def check(self, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = {name: name for name in value}
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise options.Invalid("expected a mapping of the server's variable names to "
                                  "names of council's environment (REGION: COUNCIL_MCP_REGION)")
        for key, source in value.items():
            if not ENV_NAME.fullmatch(key):
                raise options.Invalid(f"{key!r} is not an environment variable name")
            if not ENV_NAME.fullmatch(source):
                # The value is not repeated: the old form held values, keys among them.
                raise options.Invalid(
                    f"{key}: name the variable of council's environment that holds its value "
                    f"({key}: COUNCIL_MCP_{key}), not the value itself")
        return tuple(sorted(value.items()))

    def dump(self, value: Any) -> Any:
        return dict(value)


class _Servers(_KeyKind):
    """A seat's MCP servers, by name: each one read with its own keys (McpServer)."""

    def check(self, value: Any) -> Any:
        return self.check_at(value, "mcp_servers")

    def check_at(self, value: Any, where: str) -> Any:
        if value is None:
            return ()
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping of server names to settings")
        return tuple(McpServer.from_dict(str(name), spec if spec is not None else {},
                                         f"{where}.{name}") for name, spec in value.items())

    def dump(self, value: Any) -> Any:
        return {server.name: server.to_dict() for server in value}


def _key(kind: _KeyKind, help: str, default: Any = MISSING, optional: bool = False) -> Any:
    """A field that is a key of a seat or an MCP server: its kind, its help and whether None
    is a value, in its metadata; `keys` makes the key's options.Option of it."""
    return field(default=default, metadata={KEY: (kind, help, optional)})


def keys(cls: type) -> tuple[options.Option, ...]:
    """The keys of a seat or an MCP server, in their fields' order, each an options.Option
    given in a config file: from_dict reads them, to_dict writes them and reject_unknown
    knows them by these."""
    out = []
    for f in fields(cls):
        kind, help, optional = f.metadata[KEY]
        default = None if f.default is MISSING else f.default
        out.append(options.Option(f.name, kind, default, help, frozenset({options.CONFIG}),
                                  optional=optional))
    return tuple(out)


def _kind(key: options.Option) -> _KeyKind:
    assert isinstance(key.kind, _KeyKind)
    return key.kind


def _read(table: Sequence[options.Option], data: Mapping[str, Any], where: str
          ) -> dict[str, Any]:
    """Each key of `table` that `data` gives, checked (its refusal names it: `{where}.model:
    expected a non-empty string`), else its default; a key with no default is required."""
    out = {}
    for key in table:
        given = key.name in data
        value = data[key.name] if given else key.default
        if given or (key.default is None and not key.optional):
            value = (None if value is None and key.optional
                     else _kind(key).check_at(value, f"{where}.{key.name}"))
        out[key.name] = value
    return out


def _dump(table: Sequence[options.Option], value: Any) -> dict[str, Any]:
    return {key.name: _kind(key).dump(getattr(value, key.name)) for key in table}


@dataclass(frozen=True)
class McpServer:
    """One MCP server a seat's CLI is given (`mcp_servers:` in a seat): a command with its
    arguments and the only environment variables it gets besides the basics (env), or the
    URL of one already running. `search: true` says its tools search the web: a seat whose
    vendor has no web search (a self-hosted one) can search through it (can_search)."""

    name: str = _key(_Name(), "The server's name: the key it is listed under.")
    command: str | None = _key(_Word(), "The command that starts it.", None, optional=True)
    args: tuple[str, ...] = _key(_Words(), "The command's arguments.", ())
    env: tuple[tuple[str, str], ...] = _key(
        _Variables(), "The only environment variables it gets besides the basics: each of "
        "the server's names with the variable of council's environment its value is read "
        "from when the CLI starts.", ())
    url: str | None = _key(_Word(), "The URL of a server already running.", None,
                           optional=True)
    search: bool = _key(_Switch(), "Its tools search the web (can_search).", False)

    def to_dict(self) -> dict[str, Any]:
        data = _dump(MCP_KEYS, self)
        del data["name"]
        for key in (("command", "args", "env") if self.url is not None else ("url",)):
            del data[key]
        return data

    @classmethod
    def from_dict(cls, name: str, data: Any, where: str) -> McpServer:
        if not MCP_NAME.fullmatch(name):
            raise ConfigError(f"{where}: MCP server name {name!r} must be letters, digits, "
                              "'-' or single '_' (at most 40)")
        reject_unknown(data, MCP_ALLOWED, where)
        if ("command" in data) == ("url" in data):
            raise ConfigError(f"{where}: give either command (with args and env) or url")
        if "url" in data and ("args" in data or "env" in data):
            raise ConfigError(f"{where}: a url server takes no args or env")
        server = cls(**_read(MCP_KEYS, {**data, "name": name}, where))
        if server.url is not None and not re.fullmatch(r"https?://[^\s\x00-\x1f]+", server.url):
            raise ConfigError(f"{where}.url: expected an http:// or https:// URL")
        return server


MCP_KEYS = keys(McpServer)
MCP_ALLOWED = {key.name for key in MCP_KEYS} - {"name"}  # its name is the key it is under


@dataclass(frozen=True)
class Seat:
    """One agent of the council. Each field is a key of the agent in a config file's
    `agents:` section and in state.yaml (SEAT_KEYS)."""

    name: str = _key(_Name(), "The agent's name: the key it is listed under.")
    cli: str = _key(_Word(), "Its CLI: claude, codex or gemini (the name's own, for those).")
    model: str | None = _key(_Word(), "Its model (the CLI's default if none).", None,
                             optional=True)
    effort: str | None = _key(_Word(), "Its reasoning effort (EFFORTS).", None, optional=True)
    max_iterations: int = _key(_Whole(), "Its turns at most per phase.", 10)
    extra_args: tuple[str, ...] = _key(_Words(), "More arguments for its CLI.", ())
    fallback: str | None = _key(
        _Word(), "The CLI this seat moves to when its own fails for good (auth, quota, rate "
        "limits).", None, optional=True)
    env: tuple[str, ...] = _key(
        _Words(), "More of council's environment variables this seat's CLI may see, by name "
        "(a corporate proxy's, say): each CLI otherwise gets only an allow-list "
        "(agents/environment.py).", ())
    base_url: str | None = _key(
        _Word(), "A server the user runs (Ollama, LM Studio, llama.cpp's server, a LiteLLM "
        "gateway): the seat's CLI talks to it instead of its vendor, with no vendor login "
        "(agents/selfhosted.py).", None, optional=True)
    context_window: int | None = _key(
        _Whole(), "The window that server gives the seat's model.", None, optional=True)
    api_key_env: str | None = _key(
        _Word(), "The variable holding that server's key, if it wants one.", None,
        optional=True)
    mcp_servers: tuple[McpServer, ...] = _key(
        _Servers(), "The MCP servers this seat's CLI starts (or reaches), and no other "
        "(docs/containment.md).", ())

    @property
    def self_hosted(self) -> bool:
        return self.base_url is not None

    @property
    def vendor(self) -> str:
        """Whose model answers for the seat, as a claim's checker is chosen (another than its
        author's) and the plan and the report say who checked: its CLI's vendor, or for a
        self-hosted seat its model's family ("qwen" for qwen3-coder:30b), whichever CLI
        drives it: three CLIs on one server running one model family are one vendor."""
        if self.model is None or not self.self_hosted:
            return self.cli
        return f"{family(self.model)} (self-hosted)"

    def to_dict(self) -> dict[str, Any]:
        return _dump(SEAT_KEYS, self)

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any], where: str) -> Seat:
        reject_unknown(data, {key.name for key in SEAT_KEYS}, where)
        named = {"cli": name} if name in CLIS else {}  # a seat named claude runs claude
        seat = cls(**_read(SEAT_KEYS, {**named, **data, "name": name}, where))
        seat.validate(where)
        return seat

    def __deepcopy__(self, memo: dict[int, Any]) -> Seat:
        return self  # frozen, and every field is a value (load_state copies whole states)

    def validate(self, where: str) -> None:
        if not SEAT_NAME.fullmatch(self.name):
            raise ConfigError(
                f"{where}: agent name {self.name!r} must be lower-case letters, digits, '-' or '_'"
            )
        if self.cli not in CLIS:
            raise ConfigError(f"{where}: cli {self.cli!r} is not one of {', '.join(CLIS)}")
        if self.fallback is not None and (self.fallback not in CLIS or
                                          self.fallback == self.cli):
            raise ConfigError(f"{where}: fallback must be another CLI than {self.cli} "
                              f"({', '.join(c for c in CLIS if c != self.cli)})")
        if self.effort is not None and self.effort not in EFFORTS:
            raise ConfigError(f"{where}: effort {self.effort!r} is not one of {', '.join(EFFORTS)}")
        for name in self.env:
            if not ENV_NAME.fullmatch(name):
                raise ConfigError(f"{where}.env: {name!r} is not an environment variable name")
        self._validate_server(where)
        if not 1 <= self.max_iterations <= MAX_ITERATIONS_LIMIT:
            raise ConfigError(
                f"{where}: max_iterations must be between 1 and {MAX_ITERATIONS_LIMIT}"
            )


    def _validate_server(self, where: str) -> None:
        """A self-hosted seat's keys: an http(s) URL with a host and no password in it (a key
        belongs in the variable api_key_env names, never in a file), a model the server
        serves (council never picks or pulls one), and no fallback (that would send the
        question to a vendor the user chose not to use)."""
        if self.base_url is None:
            for key in ("context_window", "api_key_env"):
                if getattr(self, key) is not None:
                    raise ConfigError(f"{where}: {key} is a setting of a seat with a base_url")
            return
        problem = url_problem(self.base_url)
        if problem:
            raise ConfigError(f"{where}.base_url: {problem}")
        if self.model is None:
            raise ConfigError(f"{where}: a seat with a base_url needs a model: the name the "
                              "server serves it under (council never pulls one)")
        if self.fallback is not None:
            raise ConfigError(f"{where}: a seat with a base_url has no fallback (it would "
                              "send the question to a vendor)")
        if self.context_window is not None and self.context_window < 1:
            raise ConfigError(f"{where}.context_window: expected a number of tokens")
        if self.api_key_env is not None and not ENV_NAME.fullmatch(self.api_key_env):
            raise ConfigError(f"{where}.api_key_env: {self.api_key_env!r} is not an "
                              "environment variable name")


SEAT_KEYS = keys(Seat)


def family(model: str) -> str:
    """A model's family: the letters its name starts with, after any organisation or path
    ("Qwen/Qwen3-32B", "qwen3-coder:30b" and "hf.co/x/qwen2.5" are all "qwen")."""
    name = model.rsplit("/", 1)[-1].lower()
    found = re.match(r"[a-z]+", name)
    return found.group(0) if found else name


OTHER_VENDORS = "agents of other vendors"


def checkers(seats: Sequence[Seat]) -> str:
    """Who checks the claims of a council of these seats (claimcheck.assign gives each claim
    to a seat of another vendor, else another seat): the plan's, the report's and the score's
    words for it."""
    vendors = {seat.vendor for seat in seats}
    if len(vendors) > 1:
        return OTHER_VENDORS
    (only,) = vendors or {""}
    if seats and all(seat.self_hosted for seat in seats):
        return f"another seat of the same model family ({only.split()[0]})"
    return "another seat of the same vendor" + (f" ({only})" if only else "")


def url_problem(url: str) -> str | None:
    """What is wrong with a seat's base_url, or None: http or https, a host, no user or
    password, no query or fragment (each CLI appends its own path)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return f"{url!r} is not a URL"
    if parts.scheme not in ("http", "https"):
        return f"{url!r} must start with http:// or https://"
    if not parts.hostname:
        return f"{url!r} names no host"
    if parts.username is not None or parts.password is not None:
        return "no user or password in the URL: name the variable holding the key in api_key_env"
    if parts.query or parts.fragment or any(c.isspace() for c in url):
        return f"{url!r} must be the server's address only (no query, fragment or spaces)"
    return None


def has_vendor_search(seat: Seat) -> bool:
    """Whether the seat's CLI has its vendor's web search: every seat but a self-hosted one
    (`base_url`), whose server has no such server-side tool (docs/containment.md)."""
    return not getattr(seat, "base_url", None)


def can_search(seat: Seat) -> bool:
    """Whether the seat can search the web: its vendor's search, or an MCP server of its
    own declared `search: true`. A seat that cannot is marked "no web search" wherever the
    council is shown, and the synthesis is told."""
    return has_vendor_search(seat) or any(s.search for s in seat.mcp_servers)


def no_search(seats: Sequence[Seat]) -> list[str]:
    """The names of the seats that cannot search the web (can_search)."""
    return [s.name for s in seats if not can_search(s)]


NO_SEARCH = "no web search"


def search_path(seat: Seat) -> str:
    """How the seat searches the web, in the words doctor, status and the plan use: its
    vendor's search, the MCP servers declared `search: true`, or NO_SEARCH."""
    if has_vendor_search(seat):
        return "vendor search"
    servers = [s.name for s in seat.mcp_servers if s.search]
    if servers:
        return f"MCP server{'s' if len(servers) > 1 else ''} {', '.join(servers)}"
    return NO_SEARCH


# A built-in seat's turns at most per phase, by profile (options.PROFILES).
PROFILE_ITERATIONS = {"production": 10, "test": 2}


def built_in(registry: Mapping[str, clis.Cli]) -> dict[str, tuple[Seat, ...]]:
    """The built-in council of each profile: a seat named after each CLI that has a model and
    effort for that profile in its facts (clis.Cli.profiles), in the registry's order."""
    seats: dict[str, list[Seat]] = {profile: [] for profile in options.PROFILES}
    for name, cli in registry.items():
        for profile, (model, effort) in cli.profiles.items():
            seats[profile].append(Seat(name, name, model=model, effort=effort,
                                       max_iterations=PROFILE_ITERATIONS[profile]))
    return {profile: tuple(each) for profile, each in seats.items()}


# Seed 001's two profiles, with model names the CLIs accept today (see README).
PROFILES: dict[str, tuple[Seat, ...]] = built_in(clis.REGISTRY)
OPTION = "council.option"  # a RunOptions field's metadata: its options.Option


def _option(name: str) -> Any:
    """A RunOptions field that is the option `name` of options.py: its default (the
    production profile's) and, in its metadata, the Option itself."""
    option = options.OPTION[name]
    return field(default=option.default_for("production"), metadata={OPTION: option})


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the topic; stored in state.yaml so resume sees it. Each
    field but the seats carries its option of options.py (FIELDS), which gives its type,
    check, help and default (here the production profile's: load_options and from_dict give
    a test run its own)."""

    seats: tuple[Seat, ...]
    synthesizer: str = _option("synthesizer")
    profile: str = _option("profile")
    timeout: float | None = _option("timeout")
    grace_period: float = _option("grace_period")
    idle_timeout: float | None = _option("idle_timeout")
    max_cost: float | None = _option("max_cost")  # USD for the whole run
    max_tokens: int | None = _option("max_tokens")
    verify: bool = _option("verify")  # scope, claim verification and gap fill
    debate: str = _option("debate")  # the antagonist: auto | force | off
    mode: str = _option("mode")  # exploratory | compliance | decision
    synthesis_max_iterations: int = _option("synthesis_max_iterations")
    config_file: str | None = _option("config_file")
    config_trust: str | None = _option("config_trust")
    max_report_bytes: int = _option("max_report_bytes")
    dissent: str = _option("dissent")  # auto | off | a seat's name
    max_parallel: int | None = _option("max_parallel")  # CLI processes at once; None: all
    depth: str = _option("depth")  # quick | standard | deep (options.DEPTHS); older runs: deep
    since: str | None = _option("since")  # the earlier run's id (`council run --since`)
    # The source policy (domains.py): {allow: [...], deny: [...]}, normalised, and
    # allow_private: true when the user's own config says so; None: none.
    sources: dict[str, Any] | None = _option("sources")  # noqa: RUF009 - a field()
    offline: bool = _option("offline")  # council fetches no source itself (issue 44)

    def seat(self, name: str) -> Seat:
        for seat in self.seats:
            if seat.name == name:
                return seat
        raise UsageError(f"no agent named {name!r} in this council")

    def to_dict(self) -> dict[str, Any]:
        return {"seats": [s.to_dict() for s in self.seats],
                **{option.name: getattr(self, option.name) for option in FIELDS}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunOptions:
        """The options stored in a run's state, each checked as a config file's would be (a
        ConfigError names the key). A key an older council did not write takes its default
        for the run's profile; one it does not know (a newer council's) is ignored. Called
        where a run's state is read (store/state.py), nowhere else: every reader of the run
        gets the state's RunOptions."""
        if not isinstance(data, Mapping):
            raise ConfigError("options: expected a mapping of settings")
        raw = data.get("seats", [])
        if not isinstance(raw, list) or not all(isinstance(s, Mapping) for s in raw):
            raise ConfigError("options.seats: expected a list of agents")
        seats = tuple(Seat.from_dict(str(s.get("name")), s, f"options.seats[{i}]")
                      for i, s in enumerate(raw))
        return cls(seats=seats, **stored(data, "options"))

    def __deepcopy__(self, memo: dict[int, Any]) -> RunOptions:
        return self  # frozen, and every field is a value: a copy of a run's state shares it


# The options a run keeps, in RunOptions' order: the Option each field carries.
FIELDS: tuple[options.Option, ...] = tuple(f.metadata[OPTION] for f in fields(RunOptions)
                                           if OPTION in f.metadata)


def defaults(profile: str) -> dict[str, Any]:
    """Each RunOptions field's default for a profile."""
    return {option.name: option.default_for(profile) for option in FIELDS}


def stored(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The RunOptions fields of a run's stored options, each checked; a key an older council
    did not write takes its default for the run's profile."""
    profile_option = options.OPTION["profile"]
    profile = (profile_option.check(data["profile"], f"{where}: profile")
               if "profile" in data else profile_option.default)
    return {option.name: (option.check(data[option.name], f"{where}: {option.name}")
                          if option.name in data else option.default_for(profile)
                          if option.older is None else option.older)
            for option in FIELDS}


def reject_unknown(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """A ConfigError naming the first key of `data` that is not `allowed` (a seat's, a config
    file's): a typo is refused, not silently ignored, and named with the known setting it is
    closest to (`synthesiser` → `synthesizer`), so the fix is in the message."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping of settings")
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(allowed), n=1)
        hint = f": did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r}{hint} "
                          f"(known: {', '.join(sorted(allowed))})")
