"""The plan's cost estimate, printed before every run: requests, input and output tokens and
cost, from per-request figures measured with the real CLIs (docs/cost.md,
`benchmarks/run.py --only volume`).

What a request carries is mostly fixed per CLI: its tool definitions and system prompt, the
prompt, and what the turn has read so far. The figures below are the mean request each
pinned CLI sent in the scripted run of the default pipeline (after council offered each seat
only its phase's tools and its own instructions), and the requests per turn that run made. A
real research turn makes one request per search or page it reads, so REQUESTS_PER_TURN is
the floor: the estimate says so, and tests/evidence/test_estimate.py keeps it within ×2 of what the
scripted runs send.

Pure: the plan's options in, figures out; prices from ledger.price."""

from __future__ import annotations

from dataclasses import dataclass

from council import graph
from council.evidence import ledger

# Mean request body per CLI, bytes (the default pipeline's scripted run, 58 requests).
REQUEST_BYTES = {"claude": 15_800, "codex": 13_900, "gemini": 15_100}
REQUESTS_PER_TURN = 2  # the write, then the closing answer: the least a turn makes
BYTES_PER_TOKEN = 4  # English and JSON, as the providers' tokenizers count them, roughly
OUTPUT_PER_TURN = 1_500  # tokens a turn writes (a report section, a JSON answer)


@dataclass(frozen=True)
class Estimate:
    requests: int = 0
    sent_bytes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0


def turns(options: graph.Options) -> list[tuple[graph.SeatView, graph.Phase, int]]:
    """Every seat's turns in every phase the run can have, at most: a phase for every seat
    (EVERY; PER_GAP as if every seat found a gap) or for one (ONE: the synthesizer for the
    synthesis, else the first seat)."""
    seats = list(options.seats)
    out = []
    for name in graph.planned(options):
        phase = graph.BY_NAME[name]
        if phase.who == graph.ONE:
            chosen = [s for s in seats if s.name == options.synthesizer] \
                if phase is graph.SYNTHESIS else []
            who = chosen or seats[:1]
        else:
            who = seats
        for seat in who:
            own = options.synthesis_max_iterations if phase is graph.SYNTHESIS \
                else seat.max_iterations
            out.append((seat, phase, phase.turns(own)))
    return out


def estimate(options: graph.Options) -> Estimate:
    """The run's requests, bytes, tokens and cost if every loop runs to its cap."""
    total = Estimate()
    for seat, _phase, n in turns(options):
        requests = n * REQUESTS_PER_TURN
        sent = requests * REQUEST_BYTES.get(seat.cli, max(REQUEST_BYTES.values()))
        tokens_in, tokens_out = sent // BYTES_PER_TOKEN, n * OUTPUT_PER_TURN
        cost = ledger.price(seat.cli, seat.model, tokens_in, tokens_out)
        total = Estimate(total.requests + requests, total.sent_bytes + sent,
                         total.tokens_in + tokens_in, total.tokens_out + tokens_out,
                         None if cost is None or total.cost_usd is None
                         else total.cost_usd + cost)
    return total


def plan_lines(options: graph.Options) -> list[str]:
    """The plan's line on cost."""
    e = estimate(options)
    cost = "" if e.cost_usd is None else f", ~${e.cost_usd:.2f} at list prices"
    return [f"estimate: at least {e.requests} model requests, ~{e.tokens_in / 1000:.0f}k "
            f"input and ~{e.tokens_out / 1000:.0f}k output tokens{cost} (each search or "
            "page read adds a request; --max-cost caps it)"]
