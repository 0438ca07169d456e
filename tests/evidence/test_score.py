"""The completeness score's arithmetic (score.py), checked by hand against seed 003's model."""

from __future__ import annotations

from typing import Any

import pytest

from council import graph
from council.config import Overrides, load_options
from council.evidence import score
from council.evidence.score import closure, compute, confidence_cap, source_type

OFFICIAL = "https://docs.python.org/3/library/asyncio.html"
CODE = "https://github.com/agronholm/anyio"
COMMUNITY = "https://stackoverflow.com/questions/1"


@pytest.mark.parametrize(("url", "kind"), [
    (OFFICIAL, "official"),
    ("https://www.rfc-editor.org/rfc/rfc9110", "official"),
    ("https://www.nist.gov/publications/x", "official"),
    ("https://example.com/docs/install", "official"),
    ("https://arxiv.org/abs/2401.00001", "official"),
    (CODE, "code"),
    ("https://pypi.org/project/anyio/", "code"),
    ("https://gist.github.com/someone/abc", "code"),
    (COMMUNITY, "community"),
    ("https://old.reddit.com/r/python/comments/x", "community"),
    ("https://someone.medium.com/post", "community"),
    ("https://blog.example.com/why-we-moved", "community"),
    ("https://forum.example.org/t/42", "community"),
    ("https://www.nytimes.com/2026/01/01/tech.html", None),
    ("https://notgithub.com/x", None),  # a suffix match must be a whole domain label
    ("https://www.gov.uk/guidance/vat-rates", "official"),
    ("https://www.service-public.gouv.fr/particuliers", "official"),
    ("https://eur-lex.europa.eu/legal-content/EN/TXT/", "official"),
    # path *segments*, not substrings: a report or a guide-to piece is not documentation
    ("https://www.nytimes.com/2026/01/special-report", None),
    ("https://example.com/2026/guide-to-tides", None),
    ("https://example.com/manually-edited", None),
    ("https://example.com/guide/tides", "official"),
])
def test_source_types(url: str, kind: str | None) -> None:
    assert source_type(url) == kind


def claims_data(verdicts: list[str], questions: list[tuple[str, list[str]]] | None = None,
                covered: list[bool] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "status": "ok",
        "claims": [{"id": f"c{i}", "verdict": v} for i, v in enumerate(verdicts, 1)]}
    if questions is not None:
        data["questions"] = [{"id": f"q{i}", "question": f"Q{i}?", "status": st, "claims": cs}
                             for i, (st, cs) in enumerate(questions, 1)]
    if covered is not None:
        data["dimensions"] = [{"id": f"d{i}", "dimension": f"dimension {i}", "covered": c}
                              for i, c in enumerate(covered, 1)]
    return data


def test_a_full_run_by_hand() -> None:
    # diversity 2/3; verification 3/4; gaps 1 - 1/4; closure (1 + 0.5 + 0 + 0.5) / 4
    data = claims_data(
        ["SUPPORTED", "SUPPORTED", "SUPPORTED", "CONTRADICTED"],
        questions=[("answered", ["c1"]), ("partial", ["c2"]), ("answered", ["c4"]),
                   ("answered", [])],
        covered=[True, True, True, False])
    result = compute("exploratory", [OFFICIAL, CODE, "https://example.net/x"], data, 3, 3)
    values = [s.value for s in result.signals]
    assert values == pytest.approx([2 / 3, 0.75, 0.75, 0.5])
    raw = 100 * (0.30 * 2 / 3 + 0.30 * 0.75 + 0.25 * 0.75 + 0.15 * 0.5)
    assert result.raw == pytest.approx(raw)
    assert (result.cap, result.score, result.ceiling) == (1.0, round(raw), None)
    assert "gaps: dimension 4" in result.signals[2].detail
    assert result.signals[3].detail.startswith("1 of 4 sub-questions closed")


@pytest.mark.parametrize(("mode", "weights"), [("exploratory", (30, 30, 25, 15)),
                                               ("compliance", (20, 35, 25, 20)),
                                               ("decision", (25, 35, 20, 20))])
def test_mode_weights_sum_to_one_and_each_signal_counts(mode: str,
                                                        weights: tuple[int, ...]) -> None:
    assert [round(w * 100) for w in score.WEIGHTS[mode]] == list(weights)
    perfect = claims_data(["SUPPORTED"], questions=[("answered", ["c1"])], covered=[True])
    assert compute(mode, [OFFICIAL, CODE, COMMUNITY], perfect, 3, 3).score == 100
    # Only verification failing: the score loses exactly that signal's weight.
    refuted = claims_data(["UNSUPPORTED"], questions=[("answered", [])], covered=[True])
    result = compute(mode, [OFFICIAL, CODE, COMMUNITY], refuted, 3, 3)
    assert result.raw == pytest.approx(100 - weights[1] - weights[3] / 2)


@pytest.mark.parametrize(("contributors", "total", "urls", "cap"), [
    (3, 3, 5, 1.0), (2, 3, 5, 0.9), (1, 3, 5, 0.75), (3, 3, 0, 0.75), (2, 4, 5, 0.75),
    (1, 1, 5, 1.0),
])
def test_confidence_cap(contributors: int, total: int, urls: int, cap: float) -> None:
    assert confidence_cap(contributors, total, urls)[0] == cap


def test_one_lost_agent_caps_the_score() -> None:
    perfect = claims_data(["SUPPORTED"], questions=[("answered", ["c1"])], covered=[True])
    result = compute("exploratory", [OFFICIAL, CODE, COMMUNITY], perfect, 2, 3)
    assert (result.raw, result.cap, result.score) == (100, 0.9, 90)
    assert result.cap_reason == "1 of 3 agents failed"


def test_fewer_than_two_source_types_never_score_above_60() -> None:
    perfect = claims_data(["SUPPORTED"], questions=[("answered", ["c1"])], covered=[True])
    result = compute("exploratory", [OFFICIAL, "https://docs.example.com/b"], perfect, 3, 3)
    assert result.raw == pytest.approx(80)
    assert (result.score, result.ceiling) == (60, "fewer than two source types")


def test_unmeasured_signals_count_as_zero_and_say_so() -> None:
    result = compute("exploratory", [OFFICIAL, CODE, COMMUNITY], None, 3, 3)
    assert result.score == 30  # source diversity alone
    assert [s.value for s in result.signals[1:]] == [None, None, None]
    assert score.headline(result) == ("completeness 30/100 (cross-verification, gap coverage, "
                                      "question closure not measured)")
    degraded = compute("exploratory", [OFFICIAL], {"status": "degraded", "claims": []}, 3, 3)
    assert "verification degraded" in degraded.signals[1].detail


def test_a_run_whose_plan_checks_nothing_is_not_scored_and_says_why() -> None:
    why = graph.unchecked(load_options(Overrides(test=True)))
    assert why == "the test profile turns verification off; --verify turns it on"
    no_verify = graph.unchecked(load_options(Overrides(verify=False)))
    assert no_verify == "verification is off; --verify turns it on"
    assert graph.unchecked(load_options(Overrides())) is None
    assert graph.unchecked(load_options(Overrides(depth="quick"))) == "depth quick"
    assert graph.unchecked(load_options(Overrides(depth="quick", verify=True))) == "depth quick"
    result = compute("exploratory", [OFFICIAL, "https://example.org/x"], None, 3, 3, why)
    assert result.score is None
    assert result.signals[0].value == pytest.approx(1 / 3)  # what was measured, as measured
    assert score.headline(result) == (
        "completeness not scored (cross-verification, gap coverage, question closure not "
        "measured: the test profile turns verification off; --verify turns it on)")
    assert "0/100" not in score.section(result)
    assert "**Not scored**: the test profile turns verification off" in score.section(result)
    assert "| Source diversity | 30% | 33% |" in score.section(result)
    record = result.to_dict()
    assert (record["score"], record["unscored"]) == (None, why)
    # council status says it in the header's words, with one pair of parentheses
    assert "completeness " + score.summary(record) == score.headline(result)
    assert score.summary(record).count("(") == 1
    # A run that planned its checks and lost them still scores, low: it checked less.
    degraded = compute("exploratory", [OFFICIAL], {"status": "degraded", "claims": []}, 3, 3)
    assert degraded.score == 10
    assert score.summary(degraded.to_dict()) == "10/100 (cap 1.0: all 3 agents contributed)"


@pytest.mark.parametrize(("status", "verdicts", "value"), [
    ("answered", ["SUPPORTED", "CONTRADICTED"], 1.0),
    ("partial", ["SUPPORTED"], 0.5),
    ("answered", ["OVERSTATED"], 0.5),
    ("answered", ["UNVERIFIED"], 0.5),
    ("answered", [], 0.5),
    ("answered", ["CONTRADICTED", "UNSUPPORTED"], 0.0),
    ("open", ["SUPPORTED"], 0.0),
])
def test_a_sub_question_closes_only_on_supported_evidence(status: str, verdicts: list[str],
                                                          value: float) -> None:
    assert closure(status, verdicts) == value


def test_the_section_shows_every_signal_and_escapes_model_text() -> None:
    data = claims_data(["SUPPORTED"], questions=[("open", [])], covered=[False])
    data["dimensions"][0]["dimension"] = "costs | risks"
    text = score.section(compute("decision", [CODE], data, 3, 3))
    assert text.startswith("## Completeness\n")
    assert "| Source diversity | 25% | 33% |" in text
    assert "| Cross-verification | 35% | 100% |" in text
    assert "costs \\| risks" in text
    assert score.HEADING.search(text)


def test_why_a_coverage_signal_was_not_measured() -> None:
    def detail(claims: dict[str, Any] | None) -> str:
        return compute("exploratory", [OFFICIAL], claims, 3, 3).signals[2].detail

    assert detail(None) == "not measured: verification did not run"
    assert "claim extraction failed" in detail({"status": "degraded", "claims": []})
    assert detail({"status": "ok", "claims": [], "coverage_error": "x"}) == (
        "not measured: the coverage judgement was malformed")
    assert "the scope step degraded" in detail({"status": "ok", "claims": []})
