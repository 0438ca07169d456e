"""The configurations an evaluation compares: what `council run` is asked to do for each.

    single:<seat>     one agent researches and writes the report (research → synthesis)
    council:three     research, refinement, synthesis (--no-verify --debate off)
    council:<depth>   `council run --depth <depth>` (quick, standard, deep: graph.DEPTHS), with
                      its checks whatever --test says (--verify)
    council           the whole pipeline (scope, dissent, claims, gap fill, verification,
                      antagonist), as council:deep: what it meant before depths existed
    …@FILE            any of these with the seats of a council config file (`single:opus@
                      team.yaml`); a bare FILE ending in .yaml or .yml is `council@FILE`

A seat is any agent of the council config in effect: the built-in profile, the user's own
config, a project's ./council.yaml once trusted (`council trust`), or the FILE named. Each
configuration is checked exactly as `council run` would check it, before anything starts."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from council import clis
from council.config import Overrides, load_options
from council.errors import UsageError
from council.graph import DEEP, DEPTHS
from council.runoptions import RunOptions

SINGLE = "single"
THREE = "council:three"
COUNCIL = "council"
KINDS = (f"{SINGLE}:<seat>", THREE, *(f"{COUNCIL}:{d}" for d in DEPTHS), COUNCIL)
SEAT = re.compile(r"[a-z][a-z0-9_-]{0,31}")
# The vendor behind each Inspect model provider a judge may name: each CLI's `providers`.
VENDOR_OF_PROVIDER = {provider: cli.name for cli in clis.REGISTRY.values()
                      for provider in cli.providers}


class ConfigurationError(UsageError):
    """An unknown or impossible configuration: the message names it and what is known."""


@dataclass(frozen=True)
class Configuration:
    """One way of running council on a question."""

    name: str  # as shown: "single:claude", "council:three", "council@team.yaml"
    kind: str  # SINGLE, THREE or COUNCIL
    seat: str | None = None
    config_file: Path | None = None
    depth: str = DEEP  # COUNCIL's depth: council:quick, council:standard, council (deep)

    def run_args(self, test: bool = False, max_cost: float | None = None) -> list[str]:
        """`council run`'s options for this configuration (the topic comes separately)."""
        args: list[str] = []
        if self.config_file is not None:
            args += ["--config", str(self.config_file)]
        if test:
            args.append("--test")
        if self.kind == SINGLE and self.seat:
            args += ["--agents", self.seat, "--no-verify", "--debate", "off",
                     "--dissent", "off"]
        elif self.kind == THREE:
            args += ["--no-verify", "--debate", "off", "--dissent", "off"]
        else:  # the depth's checks, also under --test
            args += ["--depth", self.depth, "--verify"]
        if max_cost is not None:
            args += ["--max-cost", f"{max_cost:g}"]
        return args

    def slug(self) -> str:
        """A folder name for this configuration's runs: readable, and distinct for distinct
        config files."""
        base = self.kind.replace(":", "-") + (f"-{self.seat}" if self.seat else "") + (
            f"-{self.depth}" if self.kind == COUNCIL and self.name.startswith(f"{COUNCIL}:")
            else "")
        if self.config_file is None:
            return base
        digest = hashlib.sha256(str(self.config_file).encode()).hexdigest()[:8]
        return f"{base}-{digest}"


def parse(spec: str) -> Configuration:
    """A configuration as written on the command line; checked for form only (`resolve`
    checks it against the council config)."""
    text = spec.strip()
    kind_part, at, file_part = text.partition("@")
    if not at and text.endswith((".yaml", ".yml")):
        kind_part, file_part = COUNCIL, text
    config_file = Path(file_part).absolute() if file_part else None
    if at and not file_part:
        raise ConfigurationError(f"configuration {spec!r}: name a council config file after "
                                 "'@'")
    if kind_part in (THREE, COUNCIL):
        return Configuration(text, kind_part, None, config_file)
    kind, colon, seat = kind_part.partition(":")
    if kind == COUNCIL and seat in DEPTHS:
        return Configuration(text, COUNCIL, None, config_file, depth=seat)
    if kind == SINGLE and colon:
        if not SEAT.fullmatch(seat):
            raise ConfigurationError(f"configuration {spec!r}: {seat!r} is not an agent name "
                                     "(lower-case letters, digits, '-' or '_')")
        return Configuration(text, SINGLE, seat, config_file)
    raise ConfigurationError(f"unknown configuration {spec!r}: use {', '.join(KINDS)}, "
                             "optionally @FILE (a council config), or a config FILE.yaml")


def overrides(conf: Configuration, test: bool = False,
              max_cost: float | None = None) -> Overrides:
    """The same overrides `council run` builds from `run_args`: resolving them here checks
    the configuration as the run will."""
    if conf.kind == SINGLE:
        return Overrides(config=conf.config_file, test=test, agents=(conf.seat or "",),
                         verify=False, debate="off", dissent="off", max_cost=max_cost)
    if conf.kind == THREE:
        return Overrides(config=conf.config_file, test=test, verify=False, debate="off",
                         dissent="off", max_cost=max_cost)
    return Overrides(config=conf.config_file, test=test, verify=True, depth=conf.depth,
                     max_cost=max_cost)


def resolve(conf: Configuration, test: bool = False,
            max_cost: float | None = None) -> RunOptions:
    """The run options this configuration gives (its seats, phases, limits), or the
    one-line error `council run` would give, naming the configuration."""
    try:
        return load_options(overrides(conf, test, max_cost))
    except UsageError as exc:
        raise ConfigurationError(f"configuration {conf.name}: {exc}") from exc


def vendors(options: RunOptions) -> Counter[str]:
    """How many CLI processes of each vendor a run of these options has at once, at most:
    one per seat, and one more for the vendor of the dissenter (who also researches, at the
    same time) or of the antagonist (beside the verifiers), when the graph plans them."""
    from council.graph import ANTAGONIST, DISSENT, planned
    from council.phases.chooser import Role, choose
    from council.phases.dissent import dissenter

    counts = Counter(seat.cli for seat in options.seats)
    seats, phases = list(options.seats), planned(options)
    beside = set()
    if DISSENT.name in phases and (opponent := dissenter(options, seats)) is not None:
        beside.add(opponent.cli)
    if ANTAGONIST.name in phases and (
            attacker := choose(Role.OPPONENT, options.synthesizer, seats, seats)) is not None:
        beside.add(attacker.cli)
    counts.update(beside)
    return counts


def sole_vendor(options: RunOptions) -> str | None:
    """The CLI of a council of one seat (whose report a judge of the same vendor may
    favour), else None."""
    clis = {seat.cli for seat in options.seats}
    return clis.pop() if len(options.seats) == 1 else None


def judge_vendor(judge: str) -> str | None:
    """The vendor behind a judge: `cli:claude` → claude, `anthropic/…` → claude,
    `openai/…` → codex, `google/…` → gemini; None when unknown (mockllm, a local model)."""
    if judge.startswith(("cli:", "cli/")):
        return judge[4:].split("/")[0].split(":")[0] or None
    return VENDOR_OF_PROVIDER.get(judge.split("/")[0])
