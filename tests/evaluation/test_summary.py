"""The summary from made-up rows: the table, the paired differences, the plot, the page."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from council.evaluation import summary
from council.evaluation.summary import Row


def rows() -> list[Row]:
    single = [Row("single:claude", f"q{i}", s, None, 3, 5, 1000, 0.10, False, 60.0)
              for i, s in enumerate([0.4, 0.5, 0.3, 0.6])]
    council = [Row("council", f"q{i}", s, 0.55, 4, 5, 6000, 0.60, True, 300.0)
               for i, s in enumerate([0.8, 0.9, 0.7, 0.9])]
    council.append(Row("council", "q4", None, error="run failed"))
    return single + council


def test_the_table_names_each_configuration_with_its_figures() -> None:
    result = summary.summarise(rows(), ["single:claude", "council"], "cli:gemini", "sample")
    single, council = result.configurations
    assert single.score.n == 4
    assert single.score.mean == pytest.approx(0.45)
    assert council.failed == 1
    assert council.race.mean == pytest.approx(0.55)
    assert (council.supported, council.checked) == (16, 20)
    assert council.cost_usd == pytest.approx(0.60)
    assert council.estimated
    assert council.usd_per_supported == pytest.approx(2.4 / 16)
    table = summary.markdown(result)
    assert "Judge: **cli:gemini**" in table
    assert "| single:claude | 4 | 45.0 [" in table
    assert "| council | 4 | 82.5 [" in table
    assert "~$0.60" in table
    assert "| 1 |" in table  # the failed sample


def test_the_paired_difference_and_the_winner() -> None:
    result = summary.summarise(rows(), ["single:claude", "council"], "cli:gemini", "sample")
    (diff,) = result.differences
    assert (diff.a, diff.b, diff.estimate.n) == ("single:claude", "council", 4)
    assert diff.estimate.mean == pytest.approx(-0.375)
    assert diff.estimate.excludes_zero()
    assert result.winner() == "council"
    text = summary.markdown(result)
    assert "single:claude − council: -37.5 [" in text
    assert "points on 4 questions: council scores higher" in text
    assert "**council** scores higher than every other configuration" in text


def test_no_winner_when_the_interval_includes_zero() -> None:
    mixed = [Row("a", "q1", 0.5), Row("a", "q2", 0.9), Row("b", "q1", 0.6), Row("b", "q2", 0.7)]
    result = summary.summarise(mixed, ["a", "b"], "j", "q")
    assert result.winner() is None
    assert "the interval includes 0 (no difference shown)" in summary.markdown(result)


def test_a_judge_of_a_configurations_vendor_is_flagged() -> None:
    flag = "the judge cli:claude is of the same vendor (claude) as single:claude's only agent"
    result = summary.summarise(rows(), ["single:claude", "council"], "cli:claude", "sample",
                               [flag])
    assert f"> ⚠ {flag}" in summary.markdown(result)
    assert "⚠ the judge cli:claude" in summary.page(result)


def test_the_page_is_self_contained_and_escapes_every_name(tmp_path: Path) -> None:
    evil = [Row("<script>alert(1)</script>", "q1", 0.5, cost_usd=0.2)]
    result = summary.summarise(evil, ["<script>alert(1)</script>"], "<img src=x>", "q")
    page = summary.page(result)
    assert "<script>" not in page
    assert "<img src=x>" not in page
    assert "&lt;script&gt;" in page
    assert "default-src 'none'" in page
    assert "<svg" in page
    written = summary.write(tmp_path, result)
    assert written == tmp_path / "summary.md"
    assert (tmp_path / "summary.svg").read_text().startswith("<svg")
    assert "](summary.svg)" in written.read_text()


def test_the_plot_puts_each_configuration_at_its_cost_and_score() -> None:
    result = summary.summarise(rows(), ["single:claude", "council"], "j", "q")
    svg = summary.svg(result)
    assert svg.count("<circle") == 2
    assert "cost per run (US$)" in svg
    assert ">single:claude</text>" in svg
    no_cost = summary.summarise([Row("a", "q", 0.5, tokens=100)], ["a"], "j", "q")
    assert "tokens per run" in summary.svg(no_cost)


def test_a_row_from_an_inspect_sample() -> None:
    score = SimpleNamespace
    sample = SimpleNamespace(id="q1", error=None, scores={
        "council/rubric": score(value=0.75, metadata={"race": 0.6}),
        "citations": score(value={"accuracy": 0.5, "supported": 2, "checked": 4}, metadata={}),
        "cost": score(value={"tokens": 1234, "cost_usd": 0.3, "wall_s": 12.0},
                      metadata={"cost_known": True, "estimated": True})})
    assert summary.row_of("council", sample) == Row("council", "q1", 0.75, 0.6, 2, 4, 1234,
                                                    0.3, True, 12.0)
    failed = SimpleNamespace(id="q2", error=SimpleNamespace(message="boom"), scores=None)
    assert summary.row_of("council", failed) == Row("council", "q2", None, error="boom")
    wrapped = SimpleNamespace(id="q3", scores=None, error=SimpleNamespace(
        message="RunFailed('council run 2026 ended failed: synthesis failed')"))
    assert summary.row_of("council", wrapped).error == \
        "council run 2026 ended failed: synthesis failed"


def test_cost_by_phase_per_configuration() -> None:
    """Each configuration's mean cost per run at each phase, in the graph's order; a run that
    skipped a phase counts nothing there, a configuration that never ran it shows –."""
    quick = [Row("council:quick", f"q{i}", 0.5, cost_usd=0.3,
                 phase_costs={"synthesis": 0.1, "research": 0.2}) for i in range(2)]
    deep = [Row("council:deep", "q0", 0.7, cost_usd=1.0,
                phase_costs={"research": 0.2, "antagonist": 0.4, "synthesis": 0.4}),
            Row("council:deep", "q1", 0.8, cost_usd=0.6,
                phase_costs={"research": 0.4, "synthesis": 0.2})]
    result = summary.summarise([*quick, *deep], ["council:quick", "council:deep"], "j", "q")
    assert result.configurations[1].phase_costs == pytest.approx(
        {"research": 0.3, "antagonist": 0.2, "synthesis": 0.3})
    assert list(result.configurations[1].phase_costs) == ["research", "antagonist", "synthesis"]
    text = summary.markdown(result)
    assert "## Cost by phase" in text
    assert "| configuration | research | antagonist | synthesis |" in text
    assert "| council:quick | $0.20 | – | $0.10 |" in text
    assert "| council:deep | $0.30 | $0.20 | $0.30 |" in text
    page = summary.page(result)
    assert "<h2>Cost by phase</h2>" in page
    assert "<tr><td>council:deep</td><td>$0.30</td><td>$0.20</td><td>$0.30</td></tr>" in page
    # A summary with no phase costs (older logs) has no such table.
    assert "Cost by phase" not in summary.markdown(summary.summarise(rows(), ["council"], "j", "q"))


def test_a_rows_phase_costs_come_from_the_cost_score() -> None:
    score = SimpleNamespace
    sample = SimpleNamespace(id="q1", error=None, scores={
        "rubric": score(value=0.5, metadata={}),
        "cost": score(value={"tokens": 10, "cost_usd": 0.3, "wall_s": 1.0},
                      metadata={"cost_known": True, "per_phase": {
                          "research": {"cost_usd": 0.25, "tokens_in": 9},
                          "synthesis": {"cost_usd": None}}})})
    assert summary.row_of("council", sample).phase_costs == {"research": 0.25}


def test_integrity_is_summed_per_configuration_and_not_checked_is_not_zero() -> None:
    checked = summary.Checked(quotes=(3, 4), numbers=(9, 10), cited=(4, 5), gone=1, retracted=0)
    offline = summary.Checked(cited=(2, 2))
    result = summary.summarise(
        [Row("council", "q1", 0.8, integrity=checked), Row("council", "q2", 0.9,
                                                           integrity=offline),
         Row("council", "q3", None, error="failed", integrity=checked),  # a failed sample
         Row("single:claude", "q1", 0.5), Row("single:claude", "q2", 0.4)],
        ["council", "single:claude"], "cli:gemini", "sample")
    council, single = result.configurations
    assert council.integrity == summary.Pooled((3, 4), (9, 10), (6, 7), 1, 0, 1)
    assert single.integrity == summary.Pooled(None, None, None, None, None, 2)
    text = summary.markdown(result)
    assert "## Integrity (computed by council)" in text
    assert "| council | 3 of 4 (75%) | 9 of 10 (90%) | 6 of 7 (86%) | 1 | 0 | 1 |" in text
    assert "| single:claude | not checked | not checked | not checked | not checked | " \
        "not checked | 2 |" in text
    assert "never as 0" in text
    page = summary.page(result)
    assert "<h2>Integrity (computed by council)</h2>" in page
    assert '<td data-label="quotes found">3 of 4 (75%)</td>' in page


def test_a_report_with_nothing_to_check_says_so() -> None:
    result = summary.summarise([Row("a", "q", 0.5, integrity=summary.Checked(
        quotes=(0, 0), numbers=(2, 2), cited=(0, 0), gone=0, retracted=0))], ["a"], "j", "q")
    assert "| a | none in the reports | 2 of 2 (100%) | none in the reports | 0 | 0 | 0 |" in \
        summary.markdown(result)


def two_judges() -> list[Row]:
    return [Row("single:claude", "q1", 0.4, race=0.3, second=0.5, second_race=0.4),
            Row("single:claude", "q2", 0.6, race=0.5, second=0.7, second_race=0.35),
            Row("council", "q1", 0.8, race=0.6, second=0.9, second_race=0.6),
            Row("council", "q2", 1.0, race=0.7, second=0.6, second_race=0.7),
            Row("council", "q3", None, error="failed")]


def test_the_second_judges_scores_and_the_rank_agreement() -> None:
    result = summary.summarise(two_judges(), ["single:claude", "council"], "cli:gemini",
                               "sample", second_judge="cli:codex")
    single, council = result.configurations
    assert single.second.mean == pytest.approx(0.6)
    assert council.second.mean == pytest.approx(0.75)
    assert council.second_race.mean == pytest.approx(0.65)
    # First 0.4 0.6 0.8 1.0, second 0.5 0.7 0.9 0.6: 4 of 6 pairs agree, 2 do not.
    assert result.agreement is not None
    assert result.agreement.n == 4
    assert result.agreement.tau == pytest.approx(2 / 6)
    assert result.race_agreement is not None
    text = summary.markdown(result)
    assert "## Second judge" in text
    assert "The same reports scored by **cli:codex** as well as by **cli:gemini**" in text
    assert "| council | 2 | 90.0 [" in text
    assert "- Rubric scores: Kendall's tau-b +0.33 over 4 reports." in text
    assert "- RACE scores: Kendall's tau-b " in text
    assert "Both judges rank the configurations in the same order: council > single:claude." \
        in text
    page = summary.page(result)
    assert "<h2>Second judge</h2>" in page
    assert "Kendall&#x27;s tau-b +0.33 over 4 reports" in page


def test_judges_that_rank_the_configurations_differently_say_so() -> None:
    rows_ = [Row("a", "q1", 0.9, second=0.1), Row("b", "q1", 0.2, second=0.8)]
    text = summary.markdown(summary.summarise(rows_, ["a", "b"], "j1", "q", second_judge="j2"))
    assert "The judges rank the configurations differently: the first a > b, the second " \
        "b > a." in text
    assert "Kendall's tau-b -1.00 over 2 reports" in text


def test_one_report_is_not_enough_for_an_agreement() -> None:
    text = summary.markdown(summary.summarise([Row("a", "q1", 0.9, second=0.1)], ["a"], "j1",
                                              "q", second_judge="j2"))
    assert "- Rubric scores: not enough reports (1 report scored by both): no rank " \
        "agreement." in text


def test_no_second_judge_no_section() -> None:
    result = summary.summarise(rows(), ["single:claude", "council"], "j", "q")
    assert result.agreement is None
    assert "Second judge" not in summary.markdown(result)
    assert "Second judge" not in summary.page(result)


def test_a_rows_integrity_and_second_judge_from_the_sample() -> None:
    from council.evaluation import scorers

    score = SimpleNamespace
    value, meta = scorers.integrity_value({
        "offline": False, "quotes": {"found": 1, "checked": 2},
        "numbers": {"traced": 3, "checked": 3}, "citations": {"stated": 4, "cited": 4},
        "sources": {"problems": [{"why": "gone (HTTP 410)"}]}})
    sample = SimpleNamespace(id="q1", error=None, scores={
        "rubric": score(value=0.5, metadata={}),
        "integrity": score(value=value, metadata=meta),
        "second_judge": score(value=0.75, metadata={"race": 0.4})})
    row = summary.row_of("council", sample)
    assert row.integrity == summary.Checked((1, 2), (3, 3), (4, 4), 1, 0)
    assert (row.second, row.second_race) == (0.75, 0.4)
    offline_value, offline_meta = scorers.integrity_value({"offline": True, "citations": {
        "stated": 2, "cited": 1}})
    older = SimpleNamespace(id="q2", error=None, scores={
        "rubric": score(value=0.5, metadata={}),
        "integrity": score(value=offline_value, metadata=offline_meta)})
    assert summary.row_of("council", older).integrity == summary.Checked(cited=(1, 2))
    assert summary.row_of("council", older).second is None
    before = SimpleNamespace(id="q3", error=None, scores={"rubric": score(value=0.5,
                                                                           metadata={})})
    assert summary.row_of("council", before).integrity == summary.Checked()
