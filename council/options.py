"""Every run option, declared once: its name, type, default, check, help, and where a user may
give it (`council run`'s command line, a config file, a host's /council:deep-research command).

The rest is made from this table, the way nox declares its options and pre-commit its config
schema (cfgv): click's options for `council run` (cli.py), the config file's keys and checks
(config.load_options), the hosts' command grammar (hosts/flow.py), the MCP server's
start_research arguments with their JSON Schemas and checks (hosts/mcptools.py, MCP_CLIENT),
and the check of the options a run stored in its state (runoptions.RunOptions.from_dict). A
default that differs by profile says so once (PerProfile). Adding an option is one entry here
and, if the run keeps it, its field of RunOptions; tests/test_options.py proves that every
surface matches this table.

Imported by the hosts' prompt hook once a prompt is the command: stdlib only, cheap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Protocol

from council import domains
from council.errors import ConfigError, UsageError

# Where an option may be given. Each option that is a RunOptions field is also stored in the
# run's state.yaml and read back from it.
CLI = "council run"
CONFIG = "config file"
HOST = "host command"

# Gemini CLI ends an AfterAgent loop after ~100 continuations on its own; stay well below.
MAX_ITERATIONS_LIMIT = 50
PROFILES = ("production", "test")  # config.PROFILES holds each one's seats
# Seed 003's research modes: what the question is for changes what counts as done.
MODES = ("exploratory", "compliance", "decision")
DEFAULT_TIMEOUT = 3600.0  # seconds per agent per research or refinement phase
DEFAULT_MAX_COST = 10.0  # US dollars a run may spend (`--max-cost`), every entry point's
# The word that lifts a limit on a command line (`--max-cost none`, `--timeout none`), as
# `null` does in a config file.
NO_LIMIT = "none"

# How much of the graph a run pays for (`--depth`): each phase declares the depths that run it
# (graph.Phase.depths), and the graph's skip rules read that (graph.skipped). docs/phases.md gives
# the reasons, measured on the scripted model.
QUICK, STANDARD, DEEP = "quick", "standard", "deep"
DEPTHS = (QUICK, STANDARD, DEEP)
# The turns a seat gets at most per phase at a depth, unless its cap was given (--max-iterations,
# or an agent's max_iterations in a config file: the user's word wins). Only research and
# refinement loop that long (the other phases' own caps are lower), so on the production profile
# (10 turns a seat) this is what makes standard cost at most 65% of deep's requests and quick at
# most twice one agent's (tests/evidence/test_estimate.py). deep keeps the profile's cap, so a
# bare `council` compares with older eval results; the test profile's 2 turns are below them all.
DEPTH_TURNS: Mapping[str, int | None] = {QUICK: 5, STANDARD: 7, DEEP: None}


def depth_turns(depth: str, own: int) -> int:
    """A seat's cap at `depth` when its own cap (`own`) is the profile's, not the user's."""
    cap = DEPTH_TURNS[depth]
    return own if cap is None else min(own, cap)


class Invalid(ValueError):
    """A value a kind refused; the message is what follows the option's name, the same words
    on every surface: `./council.yaml: max_cost must be …` (check), `--max-cost must be …`
    on `council run` (cli.py's click types read with the kind), in a host's command (read)
    and from an MCP client (take)."""


class _TakesWhatItChecks:
    """A kind whose `take` (a tool call's JSON value) is its `check`: JSON gives the value
    typed, as a config file does."""

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def take(self, value: Any) -> Any:
        return self.check(value)


# ---------------------------------------------------------------- kinds: type and check


@dataclass(frozen=True)
class Number:
    """A number in a range; `what` is the refusal's phrase ("a positive number of seconds")."""

    what: str
    minimum: float
    above: bool = True  # strictly above the minimum (False: the minimum itself is allowed)
    whole: bool = False
    maximum: float | None = None  # allowed itself

    def check(self, value: Any) -> Any:
        kinds = (int,) if self.whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise self.not_a_number(value)
        if not self.within(value):
            raise Invalid(f"must be {self.what}")
        return value if self.whole else float(value)

    def not_a_number(self, value: Any) -> Invalid:
        """What a word or value that is no number of this kind is told, on every surface."""
        return Invalid(f"takes {'a whole number' if self.whole else 'a number'}, "
                       f"not {value!r}")

    def within(self, value: float) -> bool:
        low = self.minimum < value if self.above else self.minimum <= value
        return (math.isfinite(value) and low
                and (self.maximum is None or value <= self.maximum))

    def take(self, value: Any) -> Any:
        if self.whole and isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one kind of number: 3.0 is 3
        return self.check(value)

    def schema(self) -> dict[str, Any]:
        bounds: dict[str, Any] = {"exclusiveMinimum" if self.above else "minimum":
                                  int(self.minimum) if self.whole else self.minimum}
        if self.maximum is not None:
            bounds["maximum"] = self.maximum
        return {"type": "integer" if self.whole else "number", **bounds}

    def read(self, word: str) -> Any:
        try:
            value = int(word) if self.whole else float(word)
        except ValueError:
            raise self.not_a_number(word) from None
        return self.check(value)


@dataclass(frozen=True)
class Choice(_TakesWhatItChecks):
    """One of a few words. `what` is the refusal's phrase; without one the refusal names the
    value it refused."""

    values: tuple[str, ...]
    what: str | None = None

    def check(self, value: Any) -> Any:
        if isinstance(value, str) and value in self.values:
            return value
        if self.what is None:
            raise Invalid(f"{value!r} is not one of {', '.join(self.values)}{self.hint(value)}")
        raise Invalid(f"must be {self.what}{self.hint(value)}")

    def hint(self, value: Any) -> str:
        """" (did you mean quick?)" for a word close to one of the values (`quik`), as click
        says for a mistyped option; else nothing."""
        import difflib

        close = difflib.get_close_matches(value.lower(), self.values, n=1) \
            if isinstance(value, str) else []
        return f" (did you mean {close[0]}?)" if close else ""

    def read(self, word: str) -> Any:
        return self.check(word)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.values)}


@dataclass(frozen=True)
class Flag(_TakesWhatItChecks):
    """True or false: on a command line, the flag (and its --no- form, if it has one)."""

    negative: bool = False

    def check(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise Invalid("must be true or false")
        return value

    def read(self, word: str) -> Any:
        raise Invalid("takes no value")

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Text(_TakesWhatItChecks):
    """A non-empty string (an agent's name, say: which ones exist is a rule of config.py)."""

    longest: int | None = None  # characters

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise Invalid("must be a non-empty string")
        if self.longest is not None and len(value) > self.longest:
            raise Invalid(f"must be at most {self.longest} characters")
        return value

    def read(self, word: str) -> Any:
        return self.check(word)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", **({} if self.longest is None else
                                     {"maxLength": self.longest})}


@dataclass(frozen=True)
class Names:
    """Agent names: a comma-separated word on a command line, a list elsewhere."""

    def check(self, value: Any) -> Any:
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise Invalid("must be a list of agent names")
        if not all(isinstance(v, str) and v for v in value):
            raise Invalid("must be a list of agent names")
        if not value:
            raise Invalid("needs at least one agent name")
        return tuple(value)

    def read(self, word: str) -> Any:
        return self.check(self.split(word))

    def take(self, value: Any) -> Any:
        """A list, or the command line's word "claude,codex"; empty is the reader's to
        refuse (Overrides: "--agents needs at least one agent name")."""
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Invalid("must be a list of agent names")
        return [name for v in value if (name := v.strip())]

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}

    @staticmethod
    def split(word: str) -> tuple[str, ...]:
        return tuple(name for part in word.split(",") if (name := part.strip()))


@dataclass(frozen=True)
class File(_TakesWhatItChecks):
    """A file's path."""

    def check(self, value: Any) -> Any:
        if not isinstance(value, str | PathLike) or not str(value):
            raise Invalid("must be a file's path")
        return Path(value)

    def read(self, word: str) -> Any:
        return self.check(word)

    def schema(self) -> dict[str, Any]:
        return {"type": "string"}


@dataclass(frozen=True)
class Domains(_TakesWhatItChecks):
    """Web domains (domains.normalise): a command line's flag given once per domain
    (`--deny-domain a.com --deny-domain b.org`, click's `multiple`), a list elsewhere."""

    def check(self, value: Any) -> Any:
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise Invalid("must be a list of domains")
        try:
            return tuple(domains.normalise_all(value))
        except ValueError as exc:
            raise Invalid(f"has {exc}") from None

    def read(self, word: str) -> Any:
        return self.check([word])

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class SourceRules(_TakesWhatItChecks):
    """A source policy, `{allow: [domains], deny: [domains]}` (domains.py), stored so: each
    list normalised, both keys present."""

    def check(self, value: Any) -> Any:
        if not isinstance(value, Mapping) or set(map(str, value)) - {
                domains.ALLOW, domains.DENY, domains.PRIVATE}:
            raise Invalid("must be a mapping with allow and/or deny, each a list of domains "
                          "(and allow_private: true or false)")
        private = value.get(domains.PRIVATE, False)
        if not isinstance(private, bool):
            raise Invalid(f"{domains.PRIVATE} must be true or false")
        out: dict[str, Any] = {domains.PRIVATE: True} if private else {}
        for key in (domains.ALLOW, domains.DENY):
            listed = value.get(key) or []
            if isinstance(listed, str) or not isinstance(listed, list | tuple):
                raise Invalid(f"{key} must be a list of domains")
            try:
                out[key] = domains.normalise_all(listed)
            except ValueError as exc:
                raise Invalid(f"{key} has {exc}") from None
        return out

    def read(self, word: str) -> Any:
        raise Invalid("is given in a config file, or with --allow-domain / --deny-domain")

    def schema(self) -> dict[str, Any]:
        domains_ = {"type": "array", "items": {"type": "string"}}
        return {"type": "object", "properties": {domains.ALLOW: domains_,
                                                 domains.DENY: domains_,
                                                 domains.PRIVATE: {"type": "boolean"}},
                "additionalProperties": False}


class Kind(Protocol):
    """A type of option's values and its check, as each surface needs it: a config file's
    value (check), a command line's or a host command's word (read), an MCP client's JSON
    (take), and its JSON Schema. The kinds above are the run options'; a seat's keys have
    their own (runoptions.py)."""

    def check(self, value: Any) -> Any: ...
    def read(self, word: str) -> Any: ...
    def take(self, value: Any) -> Any: ...
    def schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PerProfile:
    """A default that differs by profile (`council run --test`, `profile: test`)."""

    production: Any
    test: Any

    def get(self, profile: str) -> Any:
        return self.test if profile == "test" else self.production


# ---------------------------------------------------------------- the option


@dataclass(frozen=True)
class Option:
    """One run option: everything every surface needs to know of it, said here only."""

    name: str  # the config file's key, the command line's --name, the RunOptions field
    kind: Kind
    default: Any  # a value, or PerProfile; None: not set (optional)
    help: str  # "{default}" in it is the default, as a user reads it
    given: frozenset[str] = frozenset()  # where a user may give it: CLI, CONFIG, HOST
    optional: bool = False  # None is a value ("no limit", "none given")
    metavar: str | None = None
    # What a run stored before this option existed did, if not its default (a run without a
    # depth ran the whole graph: deep). None: the default.
    older: Any = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """How it is written on a command line: the flag, and a flag's --no- form."""
        negative = isinstance(self.kind, Flag) and self.kind.negative
        return (self.flag, f"--no-{self.flag[2:]}") if negative else (self.flag,)

    def default_for(self, profile: str) -> Any:
        return self.default.get(profile) if isinstance(self.default, PerProfile) else self.default

    def help_text(self) -> str:
        return self.help.format(default=_shown(self.default))

    def check(self, value: Any, label: str) -> Any:
        """The value, typed, or a ConfigError: "{label} must be …" (label: where it came from,
        e.g. "./council.yaml: timeout" or "--timeout")."""
        if value is None and self.optional:
            return None
        try:
            return self.kind.check(value)
        except Invalid as exc:
            raise ConfigError(f"{label} {exc}") from None

    def read(self, value: Any) -> Any:
        """A value given on a command line or in a host's command: a word is read as the
        kind's type (a host's "--max-parallel 2" is the number 2), anything else checked."""
        try:
            if isinstance(value, str) and self.lifts(value):
                return None
            if isinstance(value, str):
                return self.kind.read(value)
            return self.kind.check(value)
        except Invalid as exc:
            raise ConfigError(f"{self.flag} {exc}") from None

    def lifts(self, word: str) -> bool:
        """Whether `word` on a command line lifts this limit (NO_LIMIT): a number with no
        limit is a value (`optional`)."""
        return self.optional and isinstance(self.kind, Number) and word.lower() == NO_LIMIT

    def take(self, value: Any, label: str | None = None) -> Any:
        """A value as JSON gives it (an MCP client's argument), typed, or a UsageError in the
        words `council run` refuses it with: "--max-cost must be a positive number of US
        dollars" (label: how the value is named, the flag by default)."""
        try:
            return self.kind.take(value)
        except Invalid as exc:
            raise UsageError(f"{label or self.flag} {exc}") from None

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of its values, with its bounds and its help."""
        return {**self.kind.schema(), "description": self.help_text()}


def _shown(value: Any) -> str:
    if isinstance(value, PerProfile):
        return f"{_shown(value.production)}, {_shown(value.test)} with --test"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------- the declaration

COMMANDS = frozenset({CLI, HOST})  # `council run` and a host's command
EVERYWHERE = frozenset({CLI, CONFIG, HOST})
RUN_AND_CONFIG = frozenset({CLI, CONFIG})

# In `council run --help`'s order.
OPTIONS: tuple[Option, ...] = (
    Option("test", Flag(), False,
           "Cheapest models and 2 iterations per agent: for trying council out.",
           COMMANDS),
    Option("agents", Names(), None, "The agents to run, by name: comma-separated on a command "
           "line (default: each one installed and logged in).",
           COMMANDS, optional=True),
    Option("synthesizer", Text(), "claude",
           "Agent that writes the final report (default {default}).", RUN_AND_CONFIG),
    # A wall-clock limit by default (finding 7 of issue 31): an agent that never ends its
    # loop is stopped. An hour covers a deep research phase of the real CLIs (the Claude Code
    # plugin gives 1700 s); `timeout: null` in a config file sets none.
    Option("timeout", Number("a positive number of seconds", 0), DEFAULT_TIMEOUT,
           "Seconds each agent may spend on research or refinement before it is stopped "
           "(default {default}; `timeout: null` in a config file sets none); the short phases "
           "(scope, claims, verification, gap fill, antagonist) get a quarter of it.",
           RUN_AND_CONFIG, optional=True),
    # 420 s: above codex's own 300 s stream idle timeout (a stream gone silent after its
    # headers is codex's to retry), claude's 120 s (agents/claude.py) and gemini's ~60 s; a
    # request with no bytes at all, which codex never gives up on, costs 7 minutes, not 15.
    Option("idle_timeout", Number("a positive number of seconds", 0), 420.0,
           "Stop an agent that shows no output or report change for this many seconds, and "
           "try it again within its phase's time limit (default {default}).",
           RUN_AND_CONFIG, optional=True),
    Option("max_iterations", Number("a whole number, at least 1", 1, above=False, whole=True),
           None, "Override every agent's iteration cap.", frozenset({CLI}),
           optional=True),  # in a config file, each agent's own (runoptions.Seat)
    # Every run has a spend limit unless the user lifts it (issue 43): a run that loops longer
    # than planned, or a model that reads page after page, stops spending at it. The default
    # council's plan expects a few dollars at list prices; $10 lets it end as planned.
    Option("max_cost", Number("a positive number of US dollars", 0), DEFAULT_MAX_COST,
           "Spend limit in USD (default {default}; none lifts it): once spent, agents stop "
           "after their current turn and the run goes on to synthesis.", RUN_AND_CONFIG,
           optional=True),
    Option("max_tokens", Number("a positive whole number", 1, above=False, whole=True), None,
           "Budget in tokens, as --max-cost.", RUN_AND_CONFIG, optional=True),
    # issue 34: what a question pays for. graph.py declares which phases each depth runs.
    Option("depth", Choice(DEPTHS, f"one of {', '.join(DEPTHS)}"), STANDARD,
           "How much of the council a question gets: quick (every agent researches, one "
           "synthesis; claims not checked), {default} (the default: scope, research, "
           "refinement, claims checked by another agent, of another vendor where the council "
           "has one, synthesis) or deep (also "
           "dissent, gap fill, recheck and the antagonist). quick and standard give each agent "
           f"at most {DEPTH_TURNS[QUICK]} and {DEPTH_TURNS[STANDARD]} turns of research and "
           "refinement unless --max-iterations or the agent's max_iterations says otherwise. "
           "--no-verify and --debate/--dissent apply on top (docs/phases.md).", EVERYWHERE,
           older=DEEP),
    Option("mode", Choice(MODES, f"one of {', '.join(MODES)}"), "exploratory",
           "What the research is for: mapping a field ({default}, the default), meeting rules "
           "(compliance), or choosing (decision).", EVERYWHERE),
    Option("debate", Choice(("auto", "force", "off"), "auto, force or off"), "auto",
           "An antagonist agent attacks the consensus beside the claim verification: always "
           "(force), never (off), or with the full council, i.e. when verification is on "
           "(auto; compliance research always debates).", EVERYWHERE),
    # Seed 004's dissent: "auto" (a seat of another vendor than the synthesiser, with the full
    # council), "off", or the name of the seat that builds the opposing case.
    Option("dissent", Text(), "auto",
           "The agent that builds the strongest opposing case while the others research "
           "(auto: one of another vendor than the synthesiser, with the full council; off: "
           "none).", EVERYWHERE, metavar="AGENT|auto|off"),
    Option("max_parallel",
           Number("a whole number of CLI processes, at least 1", 1, above=False, whole=True),
           None, "Run at most N CLI processes at once; the others queue (default: every agent "
           "at once).", EVERYWHERE, optional=True),
    Option("verify", Flag(negative=True), PerProfile(production=True, test=False),
           "Scope the question into sub-questions before the research, then have other agents "
           "(of other vendors where the council has them) check the reports' claims and "
           "coverage (and, at depth deep, research "
           "the gaps found) before the synthesis; --no-verify drops these phases from any "
           "depth (default: {default}).", EVERYWHERE),
    # issue 35: a run seeded with what an earlier one established, which says what changed.
    # Stored as the earlier run's id (prepare resolves "latest"), so a resumed run knows it.
    Option("since", Text(longest=64), None,
           "Research the question of an earlier run again (its id, or latest), seeded with its "
           "claims, verdicts and sources; the topic is that run's unless one is given. Writes "
           "changes.json and changes.md, and the final report opens with what changed.",
           frozenset({CLI}), optional=True, metavar="ID|latest"),
    # issue 36: where sources may come from (domains.py). The user's word only: no host
    # command or MCP client gives it (a model must not widen or narrow what a run may
    # cite). The command line's rules join the config file's (config._build).
    Option("allow_domain", Domains(), None,
           "Sources may come only from this domain and its subdomains (repeatable; joins "
           "`sources: allow` in the config file): claude's WebFetch is held to them, and "
           "sources.json and report.html flag any other cited source.",
           frozenset({CLI}), optional=True, metavar="DOMAIN"),
    Option("deny_domain", Domains(), None,
           "Sources must not come from this domain or its subdomains (repeatable; joins "
           "`sources: deny`; deny wins over allow).",
           frozenset({CLI}), optional=True, metavar="DOMAIN"),
    # issue 44: council's own fetches of the cited sources (evidence/fetch.py), which the
    # integrity check reads. COUNCIL_OFFLINE=1 in the environment turns them off as well.
    Option("offline", Flag(), False,
           "council fetches nothing itself (as COUNCIL_OFFLINE=1): the cited sources are not "
           "stored, and the final report says its quotes and numbers were not checked.",
           RUN_AND_CONFIG),
    Option("config", File(), None,
           "Council config file (default ./council.yaml once trusted with `council trust`, "
           "then ~/.config/council/config.yaml).", frozenset({CLI}),
           optional=True),
    # Only in a config file:
    Option("profile", Choice(PROFILES), "production",
           "The built-in seats and their models when the file names no agents; `council run "
           "--test` picks the test profile.", frozenset({CONFIG})),
    Option("grace_period", Number("a number of seconds >= 0", 0, above=False), 10.0,
           "Seconds between SIGTERM and SIGKILL when stopping an agent.", frozenset({CONFIG})),
    # ~500k tokens is more than any agent can read in one go, and council's own checks
    # (sources, regression) then cost the same whatever an agent pasted.
    Option("max_report_bytes", Number("a whole number >= 10000", 10_000, above=False,
                                      whole=True), 2_000_000,
           "A longer report goes to the next phases cut at a line, with a note (the whole "
           "report is kept beside it).", frozenset({CONFIG})),
    Option("sources", SourceRules(), None,
           "Where sources may come from: `allow:` and `deny:`, each a list of domains; a domain "
           "covers its subdomains, deny wins, and with an allow list nothing else is "
           "allowed.", frozenset({CONFIG}), optional=True),
    # Kept in the run's state only: the profile decides it, or load_options does.
    Option("synthesis_max_iterations", Number("a whole number, at least 1", 1, above=False,
                                              whole=True), PerProfile(production=3, test=2),
           "The synthesiser's iteration cap ({default})."),
    Option("config_file", Text(), None, "The config file the run obeyed.", optional=True),
    # Why council obeyed config_file: named with --config, the user's own, or trusted with
    # `council trust` (trust.py); the plan says it.
    Option("config_trust", Text(), None, "Why the run obeyed its config file.", optional=True),
)

# ---------------------------------------------------------------- settings of the machine

# A setting of the user's machine, not of a run: given in the user's own config file
# (~/.config/council/config.yaml) or the environment, never in a project's council.yaml nor
# by an MCP client. Those are not the user's own words: a cloned repository's config, once
# trusted for its seats, or a model calling start_research, must not lift the limit that
# holds them.
USER = "your own config file"
MAX_RUNS_ENV = "COUNCIL_MAX_RUNS"  # beats the config file: one shell, one MCP server's env
# Set by `council eval` for its sample runs, which its own limits hold (--max-runs in one
# evaluation, --per-vendor across all of them): they take no run slot of the machine's.
EVAL_RUN_ENV = "COUNCIL_EVAL_RUN"
MACHINE: tuple[Option, ...] = (
    Option("max_runs", Number("a whole number, at least 1", 1, above=False, whole=True), 2,
           "Council runs at once on this machine, across projects and MCP servers (default "
           "{default}); a run past it is refused, naming the runs that are active. `council "
           "eval`'s runs have their own limits.", frozenset({USER})),
)

OPTION: Mapping[str, Option] = {option.name: option for option in OPTIONS}

# The options an MCP client gives start_research (hosts/mcptools.py), in its order. A client
# is a model, not the user: it may say what a run researches and how much it may spend, never
# which config file or commands it obeys, nor the machine's limits.
MCP_CLIENT = ("agents", "depth", "mode", "verify", "max_iterations", "max_cost", "test",
              "since")


def given_on(source: str) -> tuple[Option, ...]:
    """The options a user may give on `source` (CLI, CONFIG or HOST), in declared order."""
    return tuple(option for option in OPTIONS if source in option.given)


def for_mcp() -> tuple[Option, ...]:
    """The options an MCP client may give (MCP_CLIENT), declared here."""
    return tuple(OPTION[name] for name in MCP_CLIENT)


class Overrides(dict[str, Any]):
    """What the command line or a host's command gave, by option name, read and checked (a
    host's words become numbers here); an option given as None was not given."""

    def __init__(self, **given: Any) -> None:
        super().__init__()
        for name, value in given.items():
            option = OPTION.get(name)
            if option is None or not option.given & COMMANDS:
                raise TypeError(f"{name!r} is not an option of `council run` or a host's "
                                "command")
            if value is not None:
                self[name] = option.read(value)


def resolve(overrides: Mapping[str, Any], config: Mapping[str, Any], where: str
            ) -> dict[str, Any]:
    """Every option's value: the command line's, else the config file's (checked, named as
    `{where}: key`), else its default for the run's profile. `--test` picks the test
    profile."""
    profile = "test" if overrides.get("test") else _pick(OPTION["profile"], overrides,
                                                         config, where, "production")
    return {option.name: profile if option.name == "profile"
            else _pick(option, overrides, config, where, profile) for option in OPTIONS}


def _pick(option: Option, overrides: Mapping[str, Any], config: Mapping[str, Any],
          where: str, profile: str) -> Any:
    if option.name in overrides:
        return overrides[option.name]
    if CONFIG in option.given and option.name in config:
        return option.check(config[option.name], f"{where}: {option.name}")
    return option.default_for(profile)
