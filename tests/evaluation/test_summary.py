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
