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
from dataclasses import dataclass, fields
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
MCP_KEYS = {"command", "args", "env", "url", "search"}


@dataclass(frozen=True)
class McpServer:
    """One MCP server a seat's CLI is given (`mcp_servers:` in a seat): a command with its
    arguments and the only environment variables it gets besides the basics (env), or the
    URL of one already running. `search: true` says its tools search the web: a seat whose
    vendor has no web search (a self-hosted one) can search through it (can_search)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    search: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = ({"url": self.url} if self.url is not None else
                                {"command": self.command, "args": list(self.args),
                                 "env": dict(self.env)})
        return {**data, "search": self.search}

    @classmethod
    def from_dict(cls, name: str, data: Any, where: str) -> McpServer:
        if not MCP_NAME.fullmatch(name):
            raise ConfigError(f"{where}: MCP server name {name!r} must be letters, digits, "
                              "'-' or single '_' (at most 40)")
        reject_unknown(data, MCP_KEYS, where)
        if ("command" in data) == ("url" in data):
            raise ConfigError(f"{where}: give either command (with args and env) or url")
        search = data.get("search", False)
        if not isinstance(search, bool):
            raise ConfigError(f"{where}.search: expected true or false")
        if "url" in data:
            if "args" in data or "env" in data:
                raise ConfigError(f"{where}: a url server takes no args or env")
            url = _str(data["url"], f"{where}.url")
            if not re.fullmatch(r"https?://[^\s\x00-\x1f]+", url):
                raise ConfigError(f"{where}.url: expected an http:// or https:// URL")
            return cls(name, url=url, search=search)
        env = data.get("env", {})
        if not isinstance(env, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ConfigError(f"{where}.env: expected a mapping of names to strings")
        for key in env:
            if not ENV_NAME.fullmatch(key):
                raise ConfigError(f"{where}.env: {key!r} is not an environment variable name")
        return cls(name, command=_str(data["command"], f"{where}.command"),
                   args=tuple(_str_list(data.get("args", []), f"{where}.args")),
                   env=tuple(sorted(env.items())), search=search)


@dataclass(frozen=True)
class Seat:
    """One agent of the council."""

    name: str
    cli: str
    model: str | None = None
    effort: str | None = None
    max_iterations: int = 10
    extra_args: tuple[str, ...] = ()
    # The CLI this seat moves to when its own fails for good (auth, quota, rate limits).
    fallback: str | None = None
    # More of council's environment variables this seat's CLI may see, by name (a corporate
    # proxy's, say): each CLI otherwise gets only an allow-list (agents/environment.py).
    env: tuple[str, ...] = ()
    # A server the user runs (Ollama, LM Studio, llama.cpp's server, a LiteLLM gateway): the
    # seat's CLI talks to it instead of its vendor, with no vendor login (agents/selfhosted.py).
    base_url: str | None = None
    context_window: int | None = None  # the window that server gives the seat's model
    api_key_env: str | None = None  # the variable holding that server's key, if it wants one

    # The MCP servers this seat's CLI starts (or reaches), and no other (docs/containment.md).
    mcp_servers: tuple[McpServer, ...] = ()

    @property
    def self_hosted(self) -> bool:
        return self.base_url is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cli": self.cli,
            "model": self.model,
            "effort": self.effort,
            "max_iterations": self.max_iterations,
            "extra_args": list(self.extra_args),
            "fallback": self.fallback,
            "env": list(self.env),
            "base_url": self.base_url,
            "context_window": self.context_window,
            "api_key_env": self.api_key_env,
            "mcp_servers": {s.name: s.to_dict() for s in self.mcp_servers},
        }

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any], where: str) -> Seat:
        allowed = {"name", "cli", "model", "effort", "max_iterations", "extra_args", "fallback",
                   "env", "base_url", "context_window", "api_key_env", "mcp_servers"}
        reject_unknown(data, allowed, where)
        cli = data.get("cli", name if name in CLIS else None)
        seat = cls(
            name=name,
            cli=_str(cli, f"{where}.cli"),
            model=_opt_str(data.get("model"), f"{where}.model"),
            effort=_opt_str(data.get("effort"), f"{where}.effort"),
            max_iterations=_int(data.get("max_iterations", 10), f"{where}.max_iterations"),
            extra_args=tuple(_str_list(data.get("extra_args", []), f"{where}.extra_args")),
            fallback=_opt_str(data.get("fallback"), f"{where}.fallback"),
            env=tuple(_str_list(data.get("env", []), f"{where}.env")),
            base_url=_opt_str(data.get("base_url"), f"{where}.base_url"),
            context_window=(None if data.get("context_window") is None else
                            _int(data.get("context_window"), f"{where}.context_window")),
            api_key_env=_opt_str(data.get("api_key_env"), f"{where}.api_key_env"),
            mcp_servers=_mcp_servers(data.get("mcp_servers", {}), f"{where}.mcp_servers"),
        )
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


def _mcp_servers(value: Any, where: str) -> tuple[McpServer, ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping of server names to settings")
    return tuple(McpServer.from_dict(str(name), spec if spec is not None else {},
                                     f"{where}.{name}") for name, spec in value.items())


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


# Seed 001's two profiles, with model names the CLIs accept today (see README).
PROFILES: dict[str, tuple[Seat, ...]] = {
    "production": (
        Seat("claude", "claude", model="opus", effort="high", max_iterations=10),
        # codex's own default model runs in "code mode", which offers no web_search tool.
        Seat("codex", "codex", model="gpt-5.5", effort="high", max_iterations=10),
        Seat("gemini", "gemini", model="pro", max_iterations=10),
    ),
    "test": (
        Seat("claude", "claude", model="haiku", effort="low", max_iterations=2),
        Seat("codex", "codex", model="gpt-5.5", effort="low", max_iterations=2),
        Seat("gemini", "gemini", model="flash-lite", max_iterations=2),
    ),
}
_DEFAULT = options.defaults("production")


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the topic; stored in state.yaml so resume sees it. Each
    field but the seats is an option of options.py, which gives its type, check, help and
    default (here the production profile's: load_options and from_dict give a test run its
    own)."""

    seats: tuple[Seat, ...]
    synthesizer: str = _DEFAULT["synthesizer"]
    profile: str = _DEFAULT["profile"]
    timeout: float | None = _DEFAULT["timeout"]
    grace_period: float = _DEFAULT["grace_period"]
    idle_timeout: float | None = _DEFAULT["idle_timeout"]
    max_cost: float | None = _DEFAULT["max_cost"]  # USD for the whole run
    max_tokens: int | None = _DEFAULT["max_tokens"]
    verify: bool = _DEFAULT["verify"]  # scope, claim verification and gap fill
    debate: str = _DEFAULT["debate"]  # the antagonist: auto | force | off
    mode: str = _DEFAULT["mode"]  # exploratory | compliance | decision
    synthesis_max_iterations: int = _DEFAULT["synthesis_max_iterations"]
    config_file: str | None = _DEFAULT["config_file"]
    config_trust: str | None = _DEFAULT["config_trust"]
    max_report_bytes: int = _DEFAULT["max_report_bytes"]
    dissent: str = _DEFAULT["dissent"]  # auto | off | a seat's name
    max_parallel: int | None = _DEFAULT["max_parallel"]  # CLI processes at once; None: all
    depth: str = _DEFAULT["depth"]  # quick | standard | deep (graph.DEPTHS); older runs: deep
    since: str | None = _DEFAULT["since"]  # the earlier run's id (`council run --since`)
    # The source policy (domains.py): {allow: [...], deny: [...]}, normalised; None: none.
    sources: dict[str, list[str]] | None = _DEFAULT["sources"]

    def seat(self, name: str) -> Seat:
        for seat in self.seats:
            if seat.name == name:
                return seat
        raise UsageError(f"no agent named {name!r} in this council")

    def to_dict(self) -> dict[str, Any]:
        return {"seats": [s.to_dict() for s in self.seats],
                **{f.name: getattr(self, f.name) for f in fields(self) if f.name != "seats"}}

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
        return cls(seats=seats, **options.stored(data, "options"))

    def __deepcopy__(self, memo: dict[int, Any]) -> RunOptions:
        return self  # frozen, and every field is a value: a copy of a run's state shares it


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


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a non-empty string")
    return value


def _opt_str(value: Any, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: expected a whole number")
    return value


def _str_list(value: Any, where: str) -> Sequence[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return value
