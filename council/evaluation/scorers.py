"""The scorers of a sample: three with the judge of the evaluation (Inspect's `grader`
model role), one with the second judge when there is one, and one that no model computes:

- rubric: each criterion met or not, weighted (the sample's score, 0 to 1); where the
  question has a reference report, also RACE's relative score against it (0.5: as good as the
  reference), in the score's metadata;
- citations: up to N of the report's (claim, URL) pairs, each judged supported, unsupported
  or unverifiable, with the page text the run's agents fetched where they did;
- cost: the run's tokens, dollars and wall time, as council's ledger read them;
- second_judge (`--second-judge`, the `second_grader` role): the rubric (and RACE) scored
  again by a judge of another vendor, on the same report;
- integrity: the run's own integrity check (integrity.json: quotes found in their cited
  sources, numbers traced to them, claim sentences cited inline, cited sources gone or
  retracted), as shares and counts. What the run did not check (offline, or a run from
  before the check) is NaN, Inspect's "unscored", so it is left out of the means: not
  checked is not 0.

An answer the judge gets wrong gets one retry with the error; then the sample fails, and the
next run of the same command scores it again (its council run is reused, not redone)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai.model import Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from council.evaluation import citations, judging
from council.evaluation.judges import ROLE, SECOND_ROLE
from council.evaluation.questions import Criterion

SECOND = "second_judge"  # the second judge's scorer
INTEGRITY_KEYS = ("quotes_found", "numbers_traced", "claims_cited", "sources_gone",
                  "sources_retracted")
NOT_CHECKED = math.nan  # Inspect's unscored: left out of a key's metrics
T = TypeVar("T")


def judge(role: str = ROLE) -> Model:
    return get_model(role=role, required=True)


async def ask(prompt: str, parse: Callable[[str], T], role: str = ROLE) -> tuple[T, str]:
    """The judge's parsed answer (and its text), with one retry naming what was wrong."""
    model = judge(role)
    answer = (await model.generate(prompt)).completion
    try:
        return parse(answer), answer
    except judging.JudgeAnswerError as exc:
        retry = (f"{prompt}\n\nYour previous answer could not be used ({exc}). Answer again "
                 "with the JSON object only.")
        answer = (await model.generate(retry)).completion
        return parse(answer), answer


def _criteria(state: TaskState) -> tuple[tuple[Criterion, ...], bool]:
    raw = state.metadata.get("criteria") or []
    own = tuple(Criterion.from_dict(c) for c in raw)
    return judging.criteria_or_default(own), not own


def _report(state: TaskState) -> str:
    return citations.for_judging(state.output.completion)


async def _rubric(state: TaskState, role: str) -> Score:
    """The rubric (and RACE, where the question has a reference) as `role`'s judge scores
    the report."""
    criteria, generic = _criteria(state)
    weights = state.metadata.get("dimension_weights") or {}
    report = _report(state)
    met, _ = await ask(judging.rubric_prompt(state.input_text, report, criteria),
                       lambda a: judging.parse_rubric(a, len(criteria)), role)
    value = judging.rubric_score(criteria, met, weights)
    meta: dict[str, Any] = {
        "generic_rubric": generic,
        "criteria": [{"criterion": c.text, "weight": c.weight, "dimension": c.dimension,
                      "met": met[f"c{i}"].met, "reason": met[f"c{i}"].reason}
                     for i, c in enumerate(criteria, 1)]}
    reference = state.metadata.get("reference")
    if reference:
        scores, _ = await ask(
            judging.race_prompt(state.input_text, report, reference, criteria),
            lambda a: judging.parse_race(a, len(criteria)), role)
        meta["race"] = judging.race_score(criteria, scores, weights)
    met_count = sum(1 for m in met.values() if m.met)
    return Score(value=value, answer=f"{met_count} of {len(criteria)} criteria met",
                 explanation="; ".join(f"c{i} {'met' if met[f'c{i}'].met else 'unmet'}: "
                                       f"{met[f'c{i}'].reason}"
                                       for i in range(1, len(criteria) + 1)),
                 metadata=meta)


@scorer(metrics=[mean(), stderr()])
def rubric() -> Scorer:
    """The share of the rubric the report meets, weighted; RACE against a reference too."""

    async def score(state: TaskState, target: Target) -> Score:
        return await _rubric(state, ROLE)

    return score


@scorer(metrics=[mean(), stderr()], name=SECOND)
def second_rubric() -> Scorer:
    """The rubric (and RACE) again, by the second judge (`--second-judge`)."""

    async def score(state: TaskState, target: Target) -> Score:
        return await _rubric(state, SECOND_ROLE)

    return score


@scorer(metrics={"accuracy": [mean()], "supported": [mean()], "checked": [mean()]},
        name="citations")
def citation_check(max_citations: int = 5) -> Scorer:
    """How many sampled citations their sources support."""

    async def score(state: TaskState, target: Target) -> Score:
        report = state.output.completion
        pairs = citations.cited_claims(citations.for_judging(report))
        chosen = citations.choose(pairs, max_citations, str(state.sample_id))
        run = (state.metadata.get("council") or {}).get("run_dir")
        pages = citations.fetched_pages(Path(run)) if run else {}
        blocked = citations.cites_blocked(pairs, list(state.metadata.get("blocked_urls") or []))
        verdicts: dict[str, tuple[str, str]] = {}
        if chosen:
            verdicts, _ = await ask(
                judging.citations_prompt(state.input_text, chosen, pages),
                lambda a: judging.parse_verdicts(a, len(chosen)))
        rows = [{**pair.to_dict(), "page": pair.url in pages,
                 "verdict": verdicts.get(f"p{i}", ("none", ""))[0],
                 "reason": verdicts.get(f"p{i}", ("none", ""))[1]}
                for i, pair in enumerate(chosen, 1)]
        supported = sum(1 for r in rows if r["verdict"] == "supported")
        checked = len(rows)
        return Score(
            value={"accuracy": supported / checked if checked else 0.0,
                   "supported": supported, "checked": checked},
            answer=f"{supported} of {checked} sampled citations supported "
                   f"({len(pairs)} cited claims in the report)",
            metadata={"cited_claims": len(pairs), "pairs": rows, "blocked_cited": blocked,
                      "unverifiable": sum(1 for r in rows if r["verdict"] == "unverifiable")})

    return score


@scorer(metrics={"tokens": [mean()], "cost_usd": [mean()], "wall_s": [mean()]})
def cost() -> Scorer:
    """The run's tokens, dollars (`estimated` when council priced a CLI's tokens from its
    table) and wall time."""

    async def score(state: TaskState, target: Target) -> Score:
        run = state.metadata.get("council") or {}
        usage = run.get("usage") or {}
        tokens = int(usage.get("tokens_in") or 0) + int(usage.get("tokens_out") or 0)
        dollars = usage.get("cost_usd")
        return Score(value={"tokens": tokens,
                            "cost_usd": float(dollars) if dollars is not None else 0.0,
                            "wall_s": float(run.get("wall_s") or 0.0)},
                     metadata={"cost_known": dollars is not None,
                               "estimated": bool(usage.get("estimated")),
                               "per_agent": run.get("per_agent") or {},
                               "per_phase": run.get("per_phase") or {}})

    return score


def _counts(part: Any, hit: str, of: str) -> list[int] | None:
    """[hit, of] of an integrity.json part (`quotes`: found, checked), or None."""
    if not isinstance(part, Mapping):
        return None
    got, total = part.get(hit), part.get(of)
    if isinstance(got, bool) or isinstance(total, bool) or not isinstance(got, int) or \
            not isinstance(total, int) or min(got, total) < 0:
        return None
    return [got, total]


def _share(pair: list[int] | None) -> float:
    return pair[0] / pair[1] if pair and pair[1] else NOT_CHECKED


def integrity_value(figures: Mapping[str, Any] | None
                    ) -> tuple[dict[str, float], dict[str, Any]]:
    """integrity.json's figures (reportcheck.figures) as a score's value and metadata. The
    metadata holds the counts ([found, checked], …), None for what the run did not check (no
    figures at all; offline: quotes, numbers and sources, as nothing was fetched); the value
    the shares and the lost sources, NaN where not checked or nothing to check."""
    if not figures:
        return {key: NOT_CHECKED for key in INTEGRITY_KEYS}, {
            "checked": False, "offline": None, "quotes": None, "numbers": None, "cited": None,
            "gone": None, "retracted": None, "summary": None}
    offline = bool(figures.get("offline"))
    quotes = None if offline else _counts(figures.get("quotes"), "found", "checked")
    numbers = None if offline else _counts(figures.get("numbers"), "traced", "checked")
    cited = _counts(figures.get("citations"), "cited", "stated")
    gone = retracted = None
    sources = figures.get("sources")
    problems = sources.get("problems") if isinstance(sources, Mapping) else None
    if not offline and isinstance(problems, list):
        whys = [str(p.get("why", "")) for p in problems if isinstance(p, Mapping)]
        gone = sum(why.startswith("gone") for why in whys)
        retracted = len(whys) - gone
    value = {"quotes_found": _share(quotes), "numbers_traced": _share(numbers),
             "claims_cited": _share(cited),
             "sources_gone": NOT_CHECKED if gone is None else float(gone),
             "sources_retracted": NOT_CHECKED if retracted is None else float(retracted)}
    meta = {"checked": True, "offline": offline, "quotes": quotes, "numbers": numbers,
            "cited": cited, "gone": gone, "retracted": retracted,
            "summary": figures.get("summary"), "file": figures.get("file")}
    return value, meta


@scorer(metrics={key: [mean()] for key in INTEGRITY_KEYS}, name="integrity")
def integrity() -> Scorer:
    """The run's integrity check (integrity.json), computed by council, not by a model."""

    async def score(state: TaskState, target: Target) -> Score:
        figures = (state.metadata.get("council") or {}).get("integrity")
        value, meta = integrity_value(figures if isinstance(figures, Mapping) else None)
        said = meta.get("summary") if meta.get("checked") else \
            "not checked: the run has no integrity.json"
        return Score(value=dict(value), answer=str(said), metadata=meta)

    return score
