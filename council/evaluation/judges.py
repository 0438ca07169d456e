"""Who judges: `--judge` and `--second-judge` as the user names them, resolved to the model
Inspect calls and the vendor behind it.

    cli:claude, cli:claude/opus, cli:claude:opus   the CLI through the user's login (judge.py)
    opus                                           a seat of the council config in effect:
                                                   its CLI and model, asked as cli:… is
    anthropic/claude-sonnet-4-5                    an Inspect model (the user's API key)

A benchmark's official judge changes when its model is retired (DeepResearch Bench's was),
so the judge is always the user's choice, named in the plan and the summary. The second
judge must be of another vendor than the first: two judges of one family share their taste,
and their agreement would say little."""

from __future__ import annotations

from dataclasses import dataclass

from council.config import CLIS, Overrides, load_options
from council.errors import UsageError
from council.evaluation.configurations import SEAT, judge_vendor
from council.readiness.preflight import check

CLI_PROVIDER = "cli"  # cli/<claude|codex|gemini>[/<model>]: an agent CLI as the judge (judge.py)


# Inspect's model roles the scorers ask: the judge, and the second judge when there is one.
ROLE = "grader"
SECOND_ROLE = "second_grader"


class JudgeRefused(UsageError):
    """A judge named in a form council cannot use, or a second judge of the first's vendor."""


@dataclass(frozen=True)
class Judge:
    given: str  # as the user wrote it
    model: str  # as Inspect names it: cli/claude/opus, anthropic/claude-sonnet-4-5
    vendor: str  # claude, codex, gemini; else the model's provider (mockllm, ollama)
    seat: str | None = None  # the seat it was named by

    @property
    def label(self) -> str:
        """How the plan and the summary name it: as given, and what a seat stands for."""
        if self.seat is None:
            return self.given
        return f"{self.given} ({self.model.replace('/', ':', 1)})"

    @property
    def is_cli(self) -> bool:
        return self.model.startswith("cli/")


def split_name(model_name: str) -> tuple[str, str | None]:
    """`gemini` → (gemini, None); `claude/opus` → (claude, opus)."""
    cli, _, model = model_name.partition("/")
    if cli not in CLIS:
        raise ValueError(f"the cli judge is one of {', '.join(f'cli:{c}' for c in CLIS)} "
                         f"(optionally /MODEL), not cli:{model_name}")
    return cli, model or None


def cli_problem(model_name: str) -> str | None:
    """Why `cli/<model_name>` cannot judge here (an unknown CLI, not installed, no login), in
    one line; None when it can. Asked without Inspect, so `council eval` refuses a CLI judge
    before loading it."""
    try:
        cli, _ = split_name(model_name)
    except ValueError as exc:
        return f"judge cli:{model_name}: {exc}"
    problem = check([cli])[cli].problem
    return f"judge cli:{model_name}: {problem}" if problem else None


def inspect_name(judge: str) -> str:
    """`cli:gemini` → `cli/gemini`, `cli:claude:opus` → `cli/claude/opus` (Inspect's
    provider/model form); other names as given."""
    if judge.startswith("cli:"):
        return "cli/" + judge[4:].replace(":", "/", 1)
    return judge


def resolve(spec: str, test: bool = False) -> Judge:
    """The judge `spec` names. A bare name (no `:` or `/`) is a seat of the council config in
    effect (`--test`: its test profile's), asked through its CLI with its model."""
    text = spec.strip()
    if SEAT.fullmatch(text):
        try:
            options = load_options(Overrides(test=test))
        except UsageError as exc:
            raise JudgeRefused(f"judge {text}: {exc}") from exc
        seats = {seat.name: seat for seat in options.seats}
        seat = seats.get(text)
        if seat is None:
            raise JudgeRefused(
                f"judge {text}: no agent of that name in the council config (agents: "
                f"{', '.join(seats) or 'none'}); or name cli:claude, cli:codex, cli:gemini "
                "(optionally :MODEL) or an Inspect model (anthropic/…, openai/…, google/…)")
        if seat.self_hosted:
            raise JudgeRefused(f"judge {text}: the agent talks to a server of yours "
                               "(base_url), which a judge call does not reach; name cli:… "
                               "or an Inspect model for that server")
        model = f"cli/{seat.cli}" + (f"/{seat.model}" if seat.model else "")
        return Judge(text, model, seat.cli, seat=text)
    model = inspect_name(text)
    return Judge(text, model, judge_vendor(model) or model.split("/")[0])


def second(first: Judge, spec: str, test: bool = False) -> Judge:
    """The second judge, of another vendor than `first`, or one line saying why not."""
    other = resolve(spec, test)
    if other.vendor == first.vendor:
        raise JudgeRefused(f"--second-judge {other.given} is of the same vendor ({other.vendor}) "
                           f"as --judge {first.given}: name another vendor's judge")
    return other
