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

The plan gives each figure as a range: what the run is expected to take, and the most it
can. Expected: every loop to its cap, a web turn reading EXPECTED_READS searches and pages
besides its two requests (a judgement: the scripted runs read none, and no live run is
counted by the suite). The most: requests and tokens with MOST_READS a web turn; the cost
bounded by the spend limit (--max-cost) when it is lower; the time by each phase's time
limit (--timeout), the one thing that stops a slow turn.

Time is the roughest figure. SECONDS_PER_TURN is a judgement, not a measurement (the
scripted runs answer in milliseconds, and no live run is timed by the suite): a research turn
searches and reads pages for minutes. The live view (`council run` on a terminal, `council
watch`) then corrects the plan's expected time with the run's own pace: the share of the
planned time done so far (`share_done`) and the time that took, weighed by how much of the
planned time has gone (`time_left`), so that a phase skipped in the first seconds does not
make a one-hour run look like a seven-minute one.

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
# Requests a turn of a web phase (graph.WEB: it may search and read pages) makes besides its
# REQUESTS_PER_TURN, one per search or page read: expected, and at most as the plan counts it
# (a CLI's own turn cap is 50 requests, agents/base.py; the spend limit bounds the cost).
EXPECTED_READS = 4
MOST_READS = 12


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


def estimate(options: RunOptions, reads: int = 0) -> Estimate:
    """The run's requests, bytes, tokens and cost if every loop runs to its cap, each turn
    of a web phase making `reads` requests more than the scripted runs' (0: what those
    send)."""
    total = Estimate()
    for seat, phase, n in turns(options):
        requests = n * (REQUESTS_PER_TURN + (reads if phase.tools == graph.WEB else 0))
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


def longest(options: RunOptions) -> float | None:
    """The most a run's stages can take, one after another: each seat stopped at its
    phase's time limit (a short phase's is a quarter), seats queued by --max-parallel taking
    their turn. None without a time limit (--timeout none)."""
    if options.timeout is None:
        return None
    total = 0.0
    for stage in stages(options):
        limits = [options.timeout / (4 if u[1].length == graph.SHORT else 1) for u in stage]
        queued = -(-len(stage) // options.max_parallel) if options.max_parallel else 1
        total += max(limits, default=0.0) * queued
    return total


def rough(seconds: float) -> str:
    """A duration as an estimate is said: to the minute, never to the second."""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"~{minutes} min"
    minutes = 5 * round(minutes / 5)  # past an hour, to five minutes
    return f"~{minutes // 60} h {minutes % 60:02d} min"


def _cost(expected: float | None, most: float | None, limit: float | None) -> str:
    if expected is None or most is None:
        return "cost: not known (a model without a list price)" + (
            f", at most ${limit:g} (the spend limit)" if limit is not None else "")
    if limit is not None and limit < expected:
        return (f"cost: at most ${limit:g}, the spend limit, which stops the run short of "
                f"the ~${expected:.2f} expected at list prices")
    if limit is not None and limit < most:
        return f"cost: ~${expected:.2f} expected, at most ${limit:g} (the spend limit)"
    return f"cost: ~${expected:.2f} expected, at most ~${most:.2f} at list prices"


def plan_lines(options: RunOptions) -> list[str]:
    """The plan's lines on requests, cost and time, each what is expected and the most."""
    e, most = estimate(options, EXPECTED_READS), estimate(options, MOST_READS)
    research = SECONDS_PER_TURN[graph.FULL] / 60
    bound = longest(options)
    slowest = (f"at most {rough(bound)} (each phase's time limit)" if bound is not None
               else "no time limit (--timeout)")
    return [f"estimate: ~{e.requests} model requests expected, at most ~{most.requests} "
            f"(each search or page read is one; every loop to its cap); "
            f"~{e.tokens_in / 1000:.0f}k input and ~{e.tokens_out / 1000:.0f}k output tokens "
            f"expected; {_cost(e.cost_usd, most.cost_usd, options.max_cost)}",
            f"time: {rough(duration(options))} expected (~{research:.0f} min a research "
            f"turn, rough), {slowest}"]


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
    the time gone (never below zero). After, the plan's time for the share left and the
    run's own pace (the time gone, over the share it did, times the share left), the pace
    weighing as much as the share of the planned time gone: a phase skipped or a loop ended
    in the first seconds moves the share a lot and the pace wildly, and the plan is the
    better guide until the run has been going a while; a real run's turns are alike, so its
    pace is the better one after."""
    if share >= 1:
        return 0.0
    if share <= 0 or elapsed_s <= 0:
        return max(planned_s - max(elapsed_s, 0.0), 0.0)
    pace = elapsed_s * (1 - share) / share
    weight = min(elapsed_s / planned_s, 1.0) if planned_s > 0 else 1.0
    return (1 - weight) * planned_s * (1 - share) + weight * pace
