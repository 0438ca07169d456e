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

Time is the roughest figure. SECONDS_PER_TURN is a judgement, not a measurement (the
scripted runs answer in milliseconds, and no live run is timed by the suite): a research turn
searches and reads pages for minutes. The plan shows it once, as the run's time if every
loop runs to its cap; the live view (`council run` on a terminal, `council watch`) then
corrects it with the run's own pace: the share of the planned time done so far (`share_done`)
and the time that took (`time_left`).

Pure: the plan's options (or a run's state) in, figures out; prices from ledger.price."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from council import clis, graph
from council.evidence import ledger
from council.runoptions import RunOptions, Seat
from council.store.state import RunEnd, RunState, SeatStatus

# Mean request body per CLI, bytes (the default pipeline's scripted run, 58 requests): each
# CLI's `request_bytes` (clis.py).
REQUESTS_PER_TURN = 2  # the write, then the closing answer: the least a turn makes
BYTES_PER_TOKEN = 4  # English and JSON, as the providers' tokenizers count them, roughly
OUTPUT_PER_TURN = 1_500  # tokens a turn writes (a report section, a JSON answer)
# Wall seconds of one turn, by the phase's length: a research, refinement or synthesis turn
# (several searches and page reads, then a report section), and a short answer (a JSON
# judgement, a check). A rough figure, declared once: see the module's docstring.
SECONDS_PER_TURN = {graph.FULL: 240.0, graph.SHORT: 60.0}


@dataclass(frozen=True)
class Estimate:
    requests: int = 0
    sent_bytes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0


def turns(options: RunOptions) -> list[tuple[Seat, graph.Phase, int]]:
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


def request_bytes(cli: str) -> int:
    """The mean request `cli` sends; for a CLI council does not know, the largest."""
    known = clis.REGISTRY.get(cli)
    return known.request_bytes if known else max(c.request_bytes for c in clis.REGISTRY.values())


def estimate(options: RunOptions) -> Estimate:
    """The run's requests, bytes, tokens and cost if every loop runs to its cap."""
    total = Estimate()
    for seat, _phase, n in turns(options):
        requests = n * REQUESTS_PER_TURN
        sent = requests * request_bytes(seat.cli)
        tokens_in, tokens_out = sent // BYTES_PER_TOKEN, n * OUTPUT_PER_TURN
        cost = 0.0 if seat.base_url else ledger.price(seat.cli, seat.model, tokens_in, tokens_out)
        total = Estimate(total.requests + requests, total.sent_bytes + sent,
                         total.tokens_in + tokens_in, total.tokens_out + tokens_out,
                         None if cost is None or total.cost_usd is None
                         else total.cost_usd + cost)
    return total


Unit = tuple[Seat, graph.Phase, int]


def stages(options: RunOptions) -> list[list[Unit]]:
    """`turns`, grouped by the stages the run goes through in order (phases that run at the
    same time, as graph.groups says, share one)."""
    units = turns(options)
    names = {phase.name for _seat, phase, _n in units}
    return [[u for u in units if u[1].name in group] for group in graph.groups(names)]


def _seconds(unit: Unit) -> float:
    return unit[2] * SECONDS_PER_TURN[unit[1].length]


def stage_seconds(stage: Sequence[Unit], max_parallel: int | None) -> float:
    """A stage's wall time: its seats work at the same time, so its slowest seat's turns,
    unless --max-parallel queues them (then all its turns over that many processes)."""
    longest = max((_seconds(u) for u in stage), default=0.0)
    if not max_parallel:
        return longest
    return max(longest, sum(_seconds(u) for u in stage) / max_parallel)


def duration(options: RunOptions) -> float:
    """The run's wall seconds if every loop runs to its cap, its stages one after another."""
    return sum(stage_seconds(s, options.max_parallel) for s in stages(options))


def rough(seconds: float) -> str:
    """A duration as an estimate is said: to the minute, never to the second."""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"~{minutes} min"
    minutes = 5 * round(minutes / 5)  # past an hour, to five minutes
    return f"~{minutes // 60} h {minutes % 60:02d} min"


def plan_lines(options: RunOptions) -> list[str]:
    """The plan's line on cost and time."""
    e = estimate(options)
    cost = "" if e.cost_usd is None else f", ~${e.cost_usd:.2f} at list prices"
    research = SECONDS_PER_TURN[graph.FULL] / 60
    return [f"estimate: at least {e.requests} model requests, ~{e.tokens_in / 1000:.0f}k "
            f"input and ~{e.tokens_out / 1000:.0f}k output tokens{cost}, "
            f"{rough(duration(options))} at the caps (each search or page read adds a "
            f"request; --max-cost caps it; time: ~{research:.0f} min a research turn, rough)"]


# A seat's phase that has ended, one way or another: all its turns are behind it.
_FINISHED = {SeatStatus.COMPLETE, SeatStatus.CAPPED, SeatStatus.STOPPED, SeatStatus.FAILED,
             SeatStatus.SKIPPED}


def _turns_done(state: RunState, unit: Unit) -> int:
    """How many of a planned unit's turns are behind the run: all of them once its phase
    ended (state.yaml's `steps`: done or skipped) or its seat finished there; else the turns
    its seat completed (a running seat's `iteration` is the turn it is in). A phase of ONE
    seat counts whichever seat took it."""
    seat, phase, n = unit
    if phase.name in (state.steps or {}):
        return n
    if phase.who == graph.ONE:
        record = next((rec.phases[phase.name] for rec in state.agents.values()
                       if phase.name in rec.phases), None)
    else:
        own = state.agents.get(seat.name)
        record = own.phases.get(phase.name) if own is not None else None
    if record is None or record.status in (SeatStatus.PENDING, SeatStatus.QUEUED):
        return 0
    if record.status in _FINISHED:
        return n
    return min(max(record.iteration - 1, 0), n)  # running, or cancelled mid-turn


def share_done(state: RunState) -> float:
    """The share of the run's planned time (`duration`) that is behind it, 0 to 1: each
    stage weighs its planned seconds, and within it each turn done weighs its seconds. A
    phase skipped or a loop that ended early counts as done, so the share jumps then."""
    if state.phase == RunEnd.DONE:
        return 1.0
    planned = stages(state.options)
    total = done = 0.0
    for stage in planned:
        weight = stage_seconds(stage, state.options.max_parallel)
        work = sum(_seconds(u) for u in stage)
        if not work:
            continue
        behind = sum(_turns_done(state, u) * SECONDS_PER_TURN[u[1].length] for u in stage)
        total += weight
        done += weight * behind / work
    return done / total if total else 0.0


def time_left(planned_s: float, share: float, elapsed_s: float) -> float:
    """Seconds the run still needs, roughly. Before any turn is done, the plan's time less
    the time gone (never below zero); after, the run's own pace: the time gone, over the
    share it did, times the share left. A real run's turns are alike, so its pace is a better
    guide than SECONDS_PER_TURN once it has one."""
    if share >= 1:
        return 0.0
    if share <= 0 or elapsed_s <= 0:
        return max(planned_s - max(elapsed_s, 0.0), 0.0)
    return elapsed_s * (1 - share) / share
