"""The run's phases as data: what each phase waits for, who runs it and when it is skipped.

This declaration is the source of truth for the order of a run (docs/phases.md draws it):
the engine (pipeline.py) starts a phase as soon as the phases it depends on have finished or
been skipped, so independent phases run at the same time; `council resume` works out what is
left from the same declaration and the state; the plan, `council watch` and the plugin's time
budget read it too. Adding a phase is one entry here and one module in phases/.

Seed 004's graph, with council's scope and refinement around it:

    scope → research ∥ dissent → refinement → claims → gapfill → recheck → verification ∥ antagonist
          → synthesis

claims lists the load-bearing claims and judges coverage against the scope; gapfill researches
what it found missing; recheck judges coverage again with the gap reports and lists the claims
anew, so verification checks the gap fill's findings too and the report states coverage before
and after.

Every decision here is a pure function of the options and a few facts of the run, so it is
tested without processes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from council.config import RunOptions

FULL = "full"  # runs for every seat (research, refinement) and gets the whole per-phase time
SHORT = "short"  # a one- or two-turn answer: a quarter of the per-phase time


@dataclass(frozen=True)
class Facts:
    """What a skip decision may look at. None means "not known yet": at planning time a
    phase whose skip depends on it is planned (it may run)."""

    options: RunOptions
    survivors: int | None = None  # seats whose latest report can be built on
    budget_exhausted: str | None = None  # why the budget stopped the run's loops
    gaps: int | None = None  # gaps the first coverage judgement found (gapfill, recheck)
    judged: bool | None = None  # whether the first coverage judgement produced claims
    gap_filled: bool | None = None  # whether the gap fill ran


Skip = Callable[[Facts], "str | None"]


@dataclass(frozen=True)
class Phase:
    name: str
    after: tuple[str, ...]  # phases that must have finished or been skipped first
    who: str  # who runs it, in words (the plan, docs)
    length: str  # FULL or SHORT: its share of the per-phase timeout
    skip: Skip  # why the phase does not run, or None: it runs
    attempts: int = 1  # runs of an agent at worst (a JSON answer gets one retry)


def _several(facts: Facts) -> bool:
    return len(facts.options.seats) >= 2


def _spent(facts: Facts) -> str | None:
    return facts.budget_exhausted


def _checked(facts: Facts) -> str | None:
    """The checking phases need a council (two seats) with verification on."""
    if not _several(facts):
        return "one agent: nobody to check it"
    if not facts.options.verify:
        return "verification is off (--no-verify or the test profile)"
    return None


def _survivors(facts: Facts, at_least: int, what: str) -> str | None:
    if facts.survivors is not None and facts.survivors < at_least:
        return f"fewer than {at_least} agents have a report to {what}"
    return None


def skip_scope(facts: Facts) -> str | None:
    return _checked(facts)


def skip_research(facts: Facts) -> str | None:
    return None


def skip_dissent(facts: Facts) -> str | None:
    """`auto` dissents with the full council (two seats, verification on), like the other
    checks; a named seat dissents in any council, even a council of one."""
    options = facts.options
    if options.dissent == "off":
        return "off (--dissent off)"
    if options.dissent == "auto":
        if not _several(facts):
            return "one agent (--dissent AGENT runs it)"
        if not options.verify:
            return "auto runs it with the full council; verification is off " \
                   "(--dissent AGENT runs it)"
    return _spent(facts)


def skip_refinement(facts: Facts) -> str | None:
    if not _several(facts):
        return "one agent: nobody to cross with"
    return _spent(facts) or _survivors(facts, 2, "cross")


def skip_claims(facts: Facts) -> str | None:
    return _checked(facts) or _spent(facts) or _survivors(facts, 2, "check each other on")


def skip_gapfill(facts: Facts) -> str | None:
    why = skip_claims(facts)
    if why:
        return why
    if facts.judged is False:
        return "no coverage judgement to find gaps in"
    if facts.gaps == 0:
        return "no open sub-question or uncovered dimension"
    return None


def skip_recheck(facts: Facts) -> str | None:
    if facts.gap_filled is False:
        return "no gap fill to judge"
    why = skip_gapfill(facts)
    return f"no gap fill to judge ({why})" if why else None


def skip_verification(facts: Facts) -> str | None:
    why = skip_claims(facts)
    if why:
        return why
    return "no claims to check" if facts.judged is False else None


def skip_antagonist(facts: Facts) -> str | None:
    options = facts.options
    if options.debate == "off":
        return "off (--debate off)"
    if not _several(facts) and options.debate != "force":
        return "one agent: no consensus to attack"
    if options.debate == "auto" and not options.verify and options.mode != "compliance":
        return "auto runs it beside verification, which is off (--debate force runs it)"
    return _spent(facts) or _survivors(facts, 1 if options.debate == "force" else 2,
                                        "attack")


def skip_synthesis(facts: Facts) -> str | None:
    return None


GRAPH: tuple[Phase, ...] = (
    Phase("scope", (), "one agent splits the question", SHORT, skip_scope, attempts=2),
    Phase("research", ("scope",), "every agent, in parallel", FULL, skip_research),
    Phase("dissent", ("scope",), "one agent builds the opposing case", FULL, skip_dissent),
    Phase("refinement", ("research", "dissent"), "every agent reads the others'", FULL,
          skip_refinement),
    Phase("claims", ("refinement",), "one agent lists claims and judges coverage", SHORT,
          skip_claims, attempts=2),
    Phase("gapfill", ("claims",), "one agent per gap", SHORT, skip_gapfill),
    Phase("recheck", ("gapfill",), "one agent judges coverage again", SHORT, skip_recheck,
          attempts=2),
    Phase("verification", ("recheck",), "agents of other vendors check the claims", SHORT,
          skip_verification),
    Phase("antagonist", ("recheck",), "one agent attacks the consensus", SHORT,
          skip_antagonist),
    Phase("synthesis", ("verification", "antagonist"), "one agent writes the final report",
          FULL, skip_synthesis),
)
BY_NAME: Mapping[str, Phase] = {p.name: p for p in GRAPH}
NAMES = tuple(p.name for p in GRAPH)


def planned(options: RunOptions) -> list[str]:
    """The phases a run with these options can have, in graph order (some may still be
    skipped on the way: too few survivors, a spent budget, no gaps)."""
    facts = Facts(options)
    return [p.name for p in GRAPH if p.skip(facts) is None]


STEP_NAMES = {"verification": "claim verification", "gapfill": "gap fill (when gaps are found)",
              "recheck": "coverage judged again", "claims": "claims and coverage"}


def plan(options: RunOptions) -> list[str]:
    """What a run will do before it spends anything: agents, models, loops, the phase graph
    (`a ∥ b`: at the same time), limits."""
    names = set(planned(options))

    def step(phase: str) -> str:
        if phase == "synthesis":
            return (f"synthesis by {options.synthesizer} (up to "
                    f"{options.synthesis_max_iterations} iterations)")
        if phase == "dissent" and options.dissent not in ("auto", "off"):
            return f"dissent by {options.dissent}"
        return STEP_NAMES.get(phase, phase)

    stages = " → ".join(" ∥ ".join(step(name) for name in group) for group in groups(names))
    lines = [f"{len(options.seats)} agents × up to "
             f"{max(s.max_iterations for s in options.seats)} iterations per phase: "
             + stages]
    for seat in options.seats:
        effort = f", effort {seat.effort}" if seat.effort else ""
        lines.append(f"  {seat.name}: {seat.cli}, model {seat.model or 'default'}{effort}, "
                     f"up to {seat.max_iterations} iterations per phase")
    limits = []
    if options.max_cost is not None:
        limits.append(f"budget ${options.max_cost:.2f}")
    if options.max_tokens is not None:
        limits.append(f"budget {options.max_tokens} tokens")
    if options.timeout is not None:
        limits.append(f"{options.timeout:g} s per agent per phase")
    if options.max_parallel is not None:
        limits.append(f"at most {options.max_parallel} CLI processes at once")
    lines.append("limits: " + (", ".join(limits) if limits else "no budget set (--max-cost)"))
    return lines


def groups(names: set[str]) -> list[list[str]]:
    """`names` (phases that run) in graph order, those that start together grouped: research
    and dissent, verification and the antagonist."""
    out: list[list[str]] = []
    last: set[str] | None = None
    for phase in GRAPH:
        if phase.name not in names:
            continue
        after = _starts_after(phase, names)
        if out and after == last and not set(out[-1]) & after:
            out[-1].append(phase.name)
        else:
            out.append([phase.name])
        last = after
    return out


def _starts_after(phase: Phase, names: set[str]) -> set[str]:
    """The planned phases `phase` waits for, looking through skipped ones."""
    out: set[str] = set()
    for dep in phase.after:
        out |= {dep} if dep in names else _starts_after(BY_NAME[dep], names)
    return out


def critical_path(seconds: Callable[[Phase], float], upto: str = "synthesis") -> float:
    """The longest chain of phase durations ending before `upto` (a phase's own time not
    counted): how long a run can take at worst before that phase starts."""
    finish: dict[str, float] = {}
    for phase in GRAPH:  # declared in an order where dependencies come first
        start = max((finish[d] for d in phase.after), default=0.0)
        if phase.name == upto:
            return start
        finish[phase.name] = start + seconds(phase)
    raise KeyError(upto)


def ready(finished: set[str], started: set[str]) -> list[str]:
    """Phases whose dependencies have all finished and that have not started (pure)."""
    return [p.name for p in GRAPH if p.name not in started
            and all(d in finished for d in p.after)]


def check() -> None:
    """The declaration is a DAG listed in dependency order, with known names: a test runs
    this, so a bad edit fails at once rather than hanging a run."""
    seen: set[str] = set()
    for phase in GRAPH:
        for dep in phase.after:
            if dep not in seen:
                raise ValueError(f"{phase.name} depends on {dep}, which is not declared "
                                 "before it")
        seen.add(phase.name)
