"""The usage ledger: what each agent spent in tokens and cost, per phase and iteration, the
run's total, and its budget. Everything about usage is here:

- `Usage`: tokens in and out and a cost. Each CLI reports usage its own way (the adapters
  parse it into `Usage`); claude prices its own runs, the others report tokens only, which
  council prices from `prices.json` (`estimate`) and labels an estimate. A self-hosted seat
  (one with a `base_url`) is the exception: its tokens are counted, but they cost nothing
  (`charge`), whatever claude says or the model's name suggests, and never count toward the
  budget.
- `Book`: one seat's usage at one phase, split by iteration as the CLI's running total grows
  (the runner reads the CLI's log; what it gains is booked here). Its `record` is the `usage`
  of the seat's phase in state.yaml.
- `spent`, `of_agent`, `total`: the run's, an agent's, or any records' sum, as the budget,
  the status, the page and the synthesis's facts show it.
- `over_budget`: whether the run must stop spending.

Not to be confused with the source ledger (sources.Ledger): the URLs the reports cite.
Standard library only: every adapter imports it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from council.store.state import AgentRecord, RunState


@dataclass(frozen=True)
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None  # None: the CLI gave no price and none is known
    estimated: bool = False  # priced by council from its table, not by the CLI
    # The part of tokens_in the CLI says it read from the provider's prompt cache (claude's
    # cache_read_input_tokens, codex's cached_input_tokens, gemini's `cached`).
    tokens_cached: int = 0
    # Spent on a server the user runs (`charge`): cost_usd is 0, and that $0 is a fact, not
    # a missing price. A sum is self-hosted only if every part with usage is.
    self_hosted: bool = False

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None and other.cost_usd is None else \
            (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        local = (self.self_hosted or self == NOTHING) and (other.self_hosted or other == NOTHING)
        return Usage(self.tokens_in + other.tokens_in, self.tokens_out + other.tokens_out,
                     cost, self.estimated or other.estimated,
                     self.tokens_cached + other.tokens_cached,
                     local and (self.self_hosted or other.self_hosted))

    def to_dict(self) -> dict[str, Any]:
        return {"tokens_in": self.tokens_in, "tokens_cached": self.tokens_cached,
                "tokens_out": self.tokens_out,
                "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
                "estimated": self.estimated,
                **({"self_hosted": True} if self.self_hosted else {})}

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        if not isinstance(data, dict):
            return cls()
        cost = data.get("cost_usd")
        return cls(int(data.get("tokens_in") or 0), int(data.get("tokens_out") or 0),
                   None if cost is None else float(cost), bool(data.get("estimated")),
                   int(data.get("tokens_cached") or 0), data.get("self_hosted") is True)


NOTHING = Usage()  # the sum's identity


def charge(usage: Usage, self_hosted: bool) -> Usage:
    """What a seat's usage costs the user. A self-hosted seat's tokens are its own server's
    work: $0, not an estimate, even when its CLI prices them (claude reports a
    total_cost_usd from Anthropic's list for any model name) or the model is named like a
    vendor's (a local `gpt-5.5` would be priced at OpenAI's list)."""
    if not self_hosted:
        return usage
    return Usage(usage.tokens_in, usage.tokens_out, 0.0, False, usage.tokens_cached, True)


@cache
def _prices() -> dict[str, Any]:
    text = resources.files("council").joinpath("prices.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


# A cached input token's price over an uncached one's where prices.json gives none for the
# model (the providers' list prices: 0.1 for OpenAI's and Anthropic's reads, 0.1-0.25 Google's).
CACHED_RATIO = 0.1


def price(cli: str, model: str | None, tokens_in: int, tokens_out: int,
          cached: int = 0) -> float | None:
    """Estimated USD for tokens of `model` (a full name or a CLI alias), or None. `cached`:
    the part of tokens_in read from the prompt cache, at its own rate ("cached" in the
    table, else CACHED_RATIO of the input rate)."""
    table = _prices()["models"]
    name = (model or _prices()["defaults"].get(cli) or "").lower()
    name = _prices()["aliases"].get(cli, {}).get(name, name)
    best = max((key for key in table if name.startswith(key)), key=len, default=None)
    if best is None:
        return None
    rate = table[best]
    cached = min(max(cached, 0), tokens_in)
    cached_rate = float(rate.get("cached", float(rate["input"]) * CACHED_RATIO))
    return ((tokens_in - cached) * float(rate["input"]) + cached * cached_rate
            + tokens_out * float(rate["output"])) / 1_000_000


def estimate(cli: str, model: str | None, tokens_in: int, tokens_out: int,
             cached: int = 0) -> Usage:
    cost = price(cli, model, tokens_in, tokens_out, cached)
    return Usage(tokens_in, tokens_out, cost, estimated=cost is not None, tokens_cached=cached)


def format_tokens(usage: Usage) -> str:
    """`in 12.3k (cached 8.0k), out 1.2k`: where the tokens went, for a reader."""
    def k(n: int) -> str:
        return f"{n / 1000:.1f}k" if n >= 1000 else str(n)

    cached = f" (cached {k(usage.tokens_cached)})" if usage.tokens_cached else ""
    return f"in {k(usage.tokens_in)}{cached}, out {k(usage.tokens_out)}"


def format_cost(cost: float | None, estimated: bool, self_hosted: bool = False,
                places: int = 2) -> str:
    """`$0.42`, `~$0.42` for an estimate, `$0 (self-hosted)`, or `-` for no known price."""
    if self_hosted:
        return "$0 (self-hosted)"
    return "-" if cost is None else f"{'~' if estimated else ''}${cost:.{places}f}"


def format_usage(usage: Usage) -> str:
    """`12.3k tok, $0.42` (`~$0.42` for an estimate, `$0 (self-hosted)`)."""
    tokens = f"{usage.tokens / 1000:.1f}k tok" if usage.tokens >= 1000 else f"{usage.tokens} tok"
    if usage.cost_usd is None:
        return tokens
    return f"{tokens}, {format_cost(usage.cost_usd, usage.estimated, usage.self_hosted)}"


def over_budget(spent: Usage, max_cost: float | None, max_tokens: int | None) -> str | None:
    """Why the run must stop spending, or None."""
    if max_cost is not None and spent.cost_usd is not None and spent.cost_usd >= max_cost:
        return f"cost ${spent.cost_usd:.2f} reached the budget of ${max_cost:.2f}"
    if max_tokens is not None and spent.tokens >= max_tokens:
        return f"{spent.tokens} tokens reached the budget of {max_tokens}"
    return None


class Book:
    """One seat's usage at one phase, split by iteration. A CLI reports a running total for
    the phase; what the total gains is booked to the iteration being counted (`at`) until
    `advance` moves on, so the iterations add up to the total."""

    def __init__(self, first_iteration: int) -> None:
        self.total = Usage()
        self.per_iteration: dict[int, Usage] = {}
        self.counted = Usage()  # the part of `total` already given to earlier iterations
        self.at = first_iteration

    def book(self, total: Usage) -> bool:
        """The CLI's running total is now `total`; True if that changed anything."""
        if total == self.total:
            return False
        self.total = total
        counted = self.counted
        self.per_iteration[self.at] = Usage(
            total.tokens_in - counted.tokens_in, total.tokens_out - counted.tokens_out,
            None if total.cost_usd is None else total.cost_usd - (counted.cost_usd or 0.0),
            total.estimated, total.tokens_cached - counted.tokens_cached, total.self_hosted)
        return True

    def advance(self, iteration: int) -> None:
        """Book what the total gains from now on to `iteration` (later ones only)."""
        if iteration > self.at:
            self.counted, self.at = self.total, iteration

    def record(self) -> dict[str, Any]:
        """The seat's phase's `usage` in state.yaml: `Usage.to_dict()`, plus "per_iteration":
        [[iteration, tokens_in, tokens_out, cost or None], ...] in iteration order."""
        return {**self.total.to_dict(), "per_iteration": [
            [it, u.tokens_in, u.tokens_out, None if u.cost_usd is None else round(u.cost_usd, 6)]
            for it, u in sorted(self.per_iteration.items())]}


def total(records: Iterable[Mapping[str, Any] | None]) -> Usage:
    """The sum of usage records (`Book.record()`s, or None for a phase that has none)."""
    return sum((Usage.from_dict(r) for r in records), Usage())


def of_agent(agent: AgentRecord) -> Usage:
    """What one agent spent, over every phase it took part in."""
    return total(ap.usage for ap in agent.phases.values())


def by_phase(state: RunState) -> list[dict[str, Any]]:
    """Each agent's usage at each phase it took part in, in the order it ran them: where the
    money went (`council status --json`'s "usage", report.html's table)."""
    return [{"agent": name, "cli": rec.cli, "phase": phase,
             **{k: v for k, v in Usage.from_dict(ap.usage).to_dict().items()}}
            for name, rec in state.agents.items() for phase, ap in rec.phases.items()
            if ap.usage]


def per_phase(state: RunState) -> dict[str, Usage]:
    """What every agent spent at each phase, summed: `council eval`'s cost by phase."""
    out: dict[str, Usage] = {}
    for rec in state.agents.values():
        for phase, ap in rec.phases.items():
            out[phase] = out.get(phase, Usage()) + Usage.from_dict(ap.usage)
    return out


def spent(state: RunState) -> Usage:
    """What the run has spent so far, every agent over every phase: what the budget counts."""
    return total(ap.usage for rec in state.agents.values() for ap in rec.phases.values())
