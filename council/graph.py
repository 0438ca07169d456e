"""The run's phases as data: every fact about a phase is declared here, once, and every
other module reads it from here: what the phase waits for, who takes part, what a seat of it
writes and where, whether it loops and how far, how often a JSON answer is asked for, how a
reader sees it (label, colour), whether its reports feed the phases after it, whether its
output is a research report or a snapshot, and when it is skipped.

This declaration is the source of truth for the order of a run (docs/phases.md draws it):
the engine (pipeline.py) starts a phase as soon as the phases it depends on have finished or
been skipped, so independent phases run at the same time, and runs the module of
council/phases/ that bears the phase's name, handing it its Phase; `council resume` works out
what is left from the same declaration and the state; the plan, the budget, `council
status`/`watch`, report.html, the snapshots' checks and the plugin's time budget read it too.
Adding a phase is one entry in GRAPH and one module in phases/ (docs/phases.md shows one).

A phase's name is written here and nowhere else in the package (tests/test_phase_names.py):
another module that means one particular phase names it by its constant (SYNTHESIS, GAPFILL),
and a phase module gets its own Phase as an argument.

Seed 004's graph, with council's scope and refinement around it:

    scope → research ∥ dissent → refinement → claims → gapfill → recheck → verification ∥ antagonist
          → synthesis

claims lists the load-bearing claims and judges coverage against the scope; gapfill researches
what it found missing; recheck judges coverage again with the gap reports and lists the claims
anew, so verification checks the gap fill's findings too and the report states coverage before
and after.

Every decision here is a pure function of the options and a few facts of the run, so it is
tested without processes. The module imports only what a run's options are (options.py,
runoptions.py: its facts read RunOptions itself, restating none of its fields), which import
no phase: state.py reads the phase names from it, and everything imports state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

# The depths are the --depth option's words (options.py); each phase says which run it.
from council.options import DEEP as DEEP
from council.options import DEPTHS as DEPTHS
from council.options import QUICK as QUICK
from council.options import STANDARD as STANDARD
from council.runoptions import RunOptions, checkers

FULL = "full"  # runs for every seat (research, refinement) and gets the whole per-phase time
SHORT = "short"  # a one- or two-turn answer: a quarter of the per-phase time
# Who takes part: every seat still in the run, one seat, or one seat per gap found.
EVERY, ONE, PER_GAP = "every", "one", "per gap"
DONE = "done"  # what state.yaml's `steps` says of a phase that ran to its end
# The tools a seat of a phase is offered (docs/cost.md): every tool definition is sent with
# every request, so a step whose inputs are given reads and writes files only.
WEB = "web"  # files, plus web search and fetch: research, and checking sources
FILES = "files"  # read, write and edit files in its own folder, search them
# A --since run's synthesis (issue 35): read and edit files, never write one whole, so the
# earlier final report is patched and a paragraph nothing touched stays byte-identical.
EDIT = "edit"


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
    gap_reports: int | None = None  # gap reports the gap fill published (recheck reads them)


Skip = Callable[[Facts], "str | None"]


@dataclass(frozen=True)
class Phase:
    """One phase, and everything council needs to know about it."""

    name: str  # its key in state.yaml and progress.log, and its module's name in phases/
    after: tuple[str, ...]  # phases that must have finished or been skipped first
    who: str  # EVERY, ONE or PER_GAP: who takes part (`council watch`'s bars)
    length: str  # FULL or SHORT: its share of the per-phase timeout
    skip: Skip  # why the phase does not run, or None: it runs
    output: str  # the file a seat of it writes ("{seat}": the seat's name), then published
    colour: str  # its bars on report.html
    cap: int | None = 1  # turns a seat gets at most (None: the seat's own max_iterations)
    attempts: int = 1  # runs of an agent at worst (a JSON answer gets one retry)
    label: str = ""  # how a reader sees it (the report's header); its name if not given
    step: str = ""  # the plan's words for it; its label if not given
    prompt: str = ""  # its prompt template, council/prompts/<prompt>.md.j2; its name if not given
    feeds: bool = False  # its reports are what the phases after it build on (`feeding`)
    report: bool = False  # writes a markdown research report: the ledger's sources
    own_folder: bool = False  # works in agents/<seat>.<name>/, beside the seat's own folder
    snapshot: bool = True  # its published output is checked against its sha256 (snapshots.py)
    tools: str = WEB  # WEB or FILES: the tools its seats are offered (agents/toolsets.py)
    depths: tuple[str, ...] = DEPTHS  # the depths that run it (`--depth`)
    # An option a user gave that runs it at a depth that leaves it out (--debate force runs
    # the antagonist at standard): the user's explicit word beats the depth's default.
    forced: Callable[[RunOptions], bool] | None = None

    def __post_init__(self) -> None:
        for key, default in (("label", self.name), ("step", self.label or self.name),
                             ("prompt", self.name)):
            if not getattr(self, key):
                object.__setattr__(self, key, default)

    @property
    def loops(self) -> bool:
        """Whether a seat may take more than one turn: the budget stops such loops."""
        return self.cap != 1

    @property
    def draft(self) -> bool:
        """Whether its output is a JSON answer council validates and rewrites (scope.json,
        claims.json): a draft, published among the run's working files (paths.RUN_WORK)."""
        return self.output.endswith(".json")

    @property
    def per_seat(self) -> bool:
        """Whether each seat writes its own output, rather than one file for the run."""
        return "{seat}" in self.output

    def file(self, seat: str) -> str:
        """The name of the output `seat` writes in this phase."""
        return self.output.format(seat=seat)

    def turns(self, own: int) -> int:
        """The turns a seat gets, `own` being its own cap (its max_iterations, or an option
        that stands for it)."""
        return own if self.cap is None else min(own, self.cap)


def counted(n: int, noun: str) -> str:
    """"1 agent", "3 agents": every line that counts seats or turns (the plan, progress.log,
    the report's header) says it in English, a council of one included."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _several(facts: Facts) -> bool:
    return len(facts.options.seats) >= 2


def _spent(facts: Facts) -> str | None:
    return facts.budget_exhausted


def _checked(facts: Facts) -> str | None:
    """The checking phases need a council (two seats) with verification on; a --since run
    has it on in any profile (`_since`)."""
    if not _several(facts):
        return "one agent: nobody to check it"
    if not facts.options.verify and not _since(facts.options):
        return verification_off(facts.options)
    return None


def verification_off(options: RunOptions) -> str:
    """Why a run's verification is off, and how a user turns it on: the test profile turns it
    off by default (the suite relies on that), and a user reading "claims not checked" at
    depth standard must learn it was the profile, not the depth. No parentheses: the reason
    is shown inside them (the completeness line)."""
    if options.profile == "test":
        return "the test profile turns verification off; --verify turns it on"
    return "verification is off; --verify turns it on"


def claims_unchecked(options: RunOptions) -> str | None:
    """Why a run with these options does not check its claims, or None when it plans to: the
    plan's depth line and the final report's header say it (evidence/finalreport.py)."""
    why = skipped(VERIFICATION, Facts(options))
    if why is not None and by_depth(VERIFICATION, options) is not None:
        verify = "" if options.verify else " --verify"  # the test profile's default is off
        return f"depth {options.depth} runs no check; --depth {STANDARD}{verify} checks them"
    return why


def unchecked(options: RunOptions) -> str | None:
    """Why a run with these options has no checking phases (scope, claims, verification), or
    None when it has them: such a run cannot measure what the completeness score weighs most,
    so it is not scored (evidence/score.py). The depth counts: quick runs none of them."""
    facts = Facts(options)
    return next((why for phase in (SCOPE, CLAIMS, VERIFICATION)
                 if (why := skipped(phase, facts)) is not None), None)


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
    """Judged again only when the gap fill left something new to judge: with no gap report
    published, the recheck would read exactly the reports the first judgement read."""
    if facts.gap_filled is False:
        return "no gap fill to judge"
    why = skip_gapfill(facts)
    if why:
        return f"no gap fill to judge ({why})"
    if facts.gap_reports == 0:
        return "the gap fill published no report: coverage stands as first judged"
    return None


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


def _debates(options: RunOptions) -> bool:
    """The antagonist runs at any depth when the user forces the debate, or the research is
    for compliance (which is always challenged)."""
    return options.debate == "force" or options.mode == "compliance"


def _dissenter_named(options: RunOptions) -> bool:
    """A dissent seat named with --dissent AGENT runs at any depth."""
    return options.dissent not in ("auto", "off")


def _since(options: RunOptions) -> bool:
    """A --since run lists and verifies claims at any depth and in any profile: what changed
    is judged on the claims, and without them every earlier claim would read as retracted
    (`council run` refuses --since with an explicit --no-verify)."""
    return options.since is not None


def by_depth(phase: Phase, options: RunOptions) -> str | None:
    """Why the run's depth leaves `phase` out, or None: the depth runs it, or an option the
    user gave forces it (Phase.forced)."""
    if options.depth in phase.depths or (phase.forced is not None and phase.forced(options)):
        return None
    return f"depth {options.depth}"


def skipped(phase: Phase, facts: Facts) -> str | None:
    """Why `phase` does not run, or None: the depth first (a phase the depth leaves out says
    "depth quick"), then the phase's own rule (Phase.skip). The engine and the plan ask this,
    never a phase's skip alone."""
    return by_depth(phase, facts.options) or phase.skip(facts)


def runs_at(depth: str) -> list[str]:
    """The phases a depth runs at most, in graph order, before any other option or fact
    (the README's table and the plan's depth line)."""
    return [p.name for p in GRAPH if depth in p.depths]


# The declaration, dependencies first. The constants are for the few modules that mean one
# particular phase (the synthesis stamps the final report, the report's header says whether
# the gap fill ran); a phase nobody names needs only its entry in GRAPH.
# "you do not research it yourself"
SCOPE = Phase("scope", (), ONE, SHORT, skip_scope, output="scope-draft.json",
              colour="#8c6d31", attempts=2, tools=FILES, depths=(STANDARD, DEEP))
RESEARCH = Phase("research", ("scope",), EVERY, FULL, skip_research,
                 output="{seat}-report.md", colour="#3366cc", cap=None, feeds=True,
                 report=True)
DISSENT = Phase("dissent", ("scope",), ONE, FULL, skip_dissent, output="dissent.md",
                colour="#990099", cap=4, report=True,  # a memo, not a second report
                own_folder=True,  # beside the same seat's research, which cannot reach it
                depths=(DEEP,), forced=_dissenter_named)
REFINEMENT = Phase("refinement", ("research", "dissent"), EVERY, FULL, skip_refinement,
                   output="{seat}-refined.md", colour="#109618", cap=None, feeds=True,
                   report=True, depths=(STANDARD, DEEP))
CLAIMS = Phase("claims", ("refinement",), ONE, SHORT, skip_claims,
               output="claims-draft.json", colour="#ff9900", attempts=2,
               step="claims and coverage", tools=FILES,  # judges the reports it is given
               depths=(STANDARD, DEEP), forced=_since)
GAPFILL = Phase("gapfill", ("claims",), PER_GAP, SHORT, skip_gapfill,
                output="{seat}-gaps.md", colour="#dd4477", cap=2, report=True,
                label="gap fill", step="gap fill (when gaps are found)", depths=(DEEP,))
RECHECK = Phase("recheck", ("gapfill",), ONE, SHORT, skip_recheck,
                output="recheck-draft.json", colour="#b77322", attempts=2,
                step="coverage judged again", prompt="claims", tools=FILES, depths=(DEEP,))
VERIFICATION = Phase("verification", ("recheck",), EVERY, SHORT, skip_verification,
                     output="{seat}-verdicts.json", colour="#0099c6",
                     step="claim verification", prompt="verify",  # opens the cited sources
                     depths=(STANDARD, DEEP), forced=_since)
ANTAGONIST = Phase("antagonist", ("recheck",), ONE, SHORT, skip_antagonist,
                   output="counterpoints.md", colour="#dc3912", cap=2, depths=(DEEP,),
                   forced=_debates)
# Its seat's own cap is synthesis_max_iterations. council stamps its report after
# publication, so the published file is no snapshot.
SYNTHESIS = Phase("synthesis", ("verification", "antagonist"), ONE, FULL, skip_synthesis,
                  output="final-report.md", colour="#316395", cap=None, snapshot=False)

GRAPH: tuple[Phase, ...] = (SCOPE, RESEARCH, DISSENT, REFINEMENT, CLAIMS, GAPFILL, RECHECK,
                            VERIFICATION, ANTAGONIST, SYNTHESIS)


def skip_ask(facts: Facts) -> str | None:
    return "not a phase of a run: `council ask` runs it on a finished run"


# A follow-up question on a finished run (`council ask`, run/ask.py): one seat, declared like
# a phase so the runner, the toolsets, the caps, the prompts and the usage ledger treat it as
# they treat any phase, but outside GRAPH: no run's pipeline, plan or resume ever starts it.
# It answers from copies of the run's evidence in its own folder (agents/<seat>.ask/), with
# file tools only (`--research`: a first turn with the web tools), in at most two turns.
ASK = Phase("ask", (), ONE, SHORT, skip_ask, output="ask-answer.md", colour="#6b6ecf", cap=2,
            label="follow-up", step="a follow-up question", tools=FILES, depths=(),
            own_folder=True, snapshot=False)


def skip_repair(facts: Facts) -> str | None:
    return "not a phase of a run: the synthesis asks for it when its integrity check fails"


# The synthesiser's one repair turn (issue 44, phases/evidence.py): after council's integrity
# check of the final report finds a quote, a number or a citation that does not hold, the same
# seat edits its report once, told what failed. Declared like a phase (its own record, log,
# usage and folder, agents/<seat>.repair/), outside GRAPH: only the synthesis starts it.
REPAIR = Phase("repair", (), ONE, SHORT, skip_repair, output="repaired.md",
               colour="#7f7f7f", cap=1, label="integrity repair",
               step="one repair turn of the synthesis", tools=EDIT, depths=(),
               own_folder=True, snapshot=False)
TASKS: tuple[Phase, ...] = (ASK, REPAIR)  # declared like phases, run outside the graph
BY_NAME: Mapping[str, Phase] = {p.name: p for p in (*GRAPH, *TASKS)}
NAMES = tuple(p.name for p in GRAPH)
RECORDED = (*NAMES, *(p.name for p in TASKS))  # what a seat's record in state.yaml may name
FEEDS = tuple(p for p in GRAPH if p.feeds)  # in graph order: the later builds on the earlier


def feeding(steps: Mapping[str, str] | None, has_reports: Callable[[Phase], bool]) -> Phase:
    """The one rule for which reports the phases after the research build on: those of the
    last feeding phase (FEEDS: research, then refinement) that ran to its end (`steps`). A
    phase skipped or cut short leaves its reports unused, even those a few seats finished
    before it was (a resume whose budget skipped an interrupted refinement builds on the
    research). A run that recorded no steps (made before the graph was recorded) counts a
    phase as ended when it has reports (`has_reports`)."""
    for phase in reversed(FEEDS):
        if (steps.get(phase.name) == DONE) if steps else has_reports(phase):
            return phase
    return FEEDS[0]


def downstream(phase: Phase) -> list[Phase]:
    """The phases that build, directly or through others, on what `phase` produced, in graph
    order: what must run again when a seat's work in `phase` is recovered after the run went
    on without it (`council resume`, run/recovery.py). research's are refinement to synthesis;
    dissent, which runs beside it, is not among them."""
    found: set[str] = {phase.name}
    out = []
    for later in GRAPH[GRAPH.index(phase) + 1:]:
        if found & set(later.after):
            found.add(later.name)
            out.append(later)
    return out


def before(phase: Phase) -> Phase:
    """The feeding phase declared before `phase`: the reports a refinement of them reads."""
    return [p for p in GRAPH[:GRAPH.index(phase)] if p.feeds][-1]


def planned(options: RunOptions) -> list[str]:
    """The phases a run with these options can have, in graph order (some may still be
    skipped on the way: too few survivors, a spent budget, no gaps)."""
    facts = Facts(options)
    return [p.name for p in GRAPH if skipped(p, facts) is None]


def plan(options: RunOptions) -> list[str]:
    """What a run will do before it spends anything: agents, models, loops, the phase graph
    (`a ∥ b`: at the same time), limits."""
    names = set(planned(options))

    def step(name: str) -> str:
        if name == SYNTHESIS.name:
            return (f"{SYNTHESIS.label} by {options.synthesizer} (up to "
                    f"{counted(options.synthesis_max_iterations, 'iteration')})")
        if name == DISSENT.name and options.dissent not in ("auto", "off"):
            return f"{DISSENT.label} by {options.dissent}"
        return BY_NAME[name].step

    stages = " → ".join(" ∥ ".join(step(name) for name in group) for group in groups(names))
    lines = [depth_line(options, names),
             f"{counted(len(options.seats), 'agent')} × up to "
             f"{counted(max(s.max_iterations for s in options.seats), 'iteration')} per "
             "phase: " + stages]
    for seat in options.seats:
        effort = f", effort {seat.effort}" if seat.effort else ""
        # A self-hosted seat's server: the user sees where the question goes.
        server = (f" at {seat.base_url} (window "
                  f"{seat.context_window or 'not set'})" if seat.base_url else "")
        lines.append(f"  {seat.name}: {seat.cli}, model {seat.model or 'default'}{server}"
                     f"{effort}, up to {counted(seat.max_iterations, 'iteration')} per phase")
    limits = []
    if options.max_cost is not None:
        limits.append(f"spend limit ${options.max_cost:g} (--max-cost N to change, "
                      "--max-cost none to lift)")
    else:
        limits.append("no spend limit (--max-cost N sets one)")
    if options.max_tokens is not None:
        limits.append(f"budget {options.max_tokens} tokens")
    if options.timeout is not None:
        limits.append(f"{options.timeout:g} s per agent per phase ({options.timeout / 4:g} s "
                      "in the short ones)")
    else:
        limits.append("no time limit per phase (--timeout)")
    if options.max_parallel is not None:
        limits.append(f"at most {options.max_parallel} CLI processes at once")
    lines.append("limits: " + ", ".join(limits))
    return lines


def depth_line(options: RunOptions, names: set[str]) -> str:
    """The plan's words on the depth: which it is, and whether the claims get checked."""
    why = claims_unchecked(options)
    checked = (f"claims checked by {checkers(options.seats)}" if VERIFICATION.name in names
               else f"claims not checked ({why})" if why else "claims not checked")
    if _since(options) and VERIFICATION.name in names:
        checked += " (--since checks them at any depth and profile)"
    left = [BY_NAME[n].label for n in NAMES if n not in names]
    return (f"depth {options.depth} (--depth {'|'.join(DEPTHS)}): {checked}"
            + (f"; not run: {', '.join(left)}" if left else "; every phase"))


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


def critical_path(seconds: Callable[[Phase], float], upto: str = SYNTHESIS.name) -> float:
    """The longest chain of phase durations ending before `upto` (a phase's own time not
    counted): how long a run can take at worst before that phase starts."""
    finish: dict[str, float] = {}
    for phase in GRAPH:  # declared in an order where dependencies come first
        start = max((finish[d] for d in phase.after), default=0.0)
        if phase.name == upto:
            return start
        finish[phase.name] = start + seconds(phase)
    raise KeyError(upto)


def check() -> None:
    """The declaration is a DAG listed in dependency order, with known names: a test runs
    this, so a bad edit fails at once rather than hanging a run."""
    seen: set[str] = set()
    for phase in GRAPH:
        if phase.name in seen:
            raise ValueError(f"{phase.name} is declared twice")
        for dep in phase.after:
            if dep not in seen:
                raise ValueError(f"{phase.name} depends on {dep}, which is not declared "
                                 "before it")
        seen.add(phase.name)
    for task in TASKS:
        if task.name in seen or task.depths:
            raise ValueError(f"{task.name} is a task outside the graph: a name of its own, "
                             "run at no depth")
