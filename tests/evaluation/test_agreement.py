"""The two judges' rank agreement: Kendall's tau-b, ties included, and the cases it has none."""

from __future__ import annotations

import pytest

from council.evaluation.agreement import NO_ORDER, TOO_FEW, kendall


def test_the_same_ranking_is_plus_one_and_the_reverse_minus_one() -> None:
    first = [0.2, 0.5, 0.9, 0.4]
    assert kendall(list(zip(first, [1.0, 2.0, 3.0, 1.5], strict=True))).tau == \
        pytest.approx(1.0)
    assert kendall(list(zip(first, [3.0, 2.0, 1.0, 2.5], strict=True))).tau == \
        pytest.approx(-1.0)


def test_ties_count_for_neither_side() -> None:
    # Pairs: 4 concordant, one tied by the first judge only, one by the second only:
    # tau-b = 4 / sqrt((6 - 1) * (6 - 1)) = 0.8 (tau-a would say 4 / 6).
    agreement = kendall([(1, 1), (2, 3), (2, 2), (3, 3)])
    assert agreement.tau == pytest.approx(0.8)
    assert agreement.n == 4
    assert agreement.words() == "Kendall's tau-b +0.80 over 4 reports"


def test_a_pair_tied_by_both_judges_is_left_out_of_both_counts() -> None:
    # (0.5, 0.5) twice: a pair tied by both; the rest agree fully.
    assert kendall([(0.5, 0.5), (0.5, 0.5), (0.9, 0.8)]).tau == pytest.approx(1.0)


def test_one_discordant_pair_among_three() -> None:
    # (1,1)-(2,3) C, (1,1)-(3,2) C, (2,3)-(3,2) D: (2 - 1) / 3.
    assert kendall([(1, 1), (2, 3), (3, 2)]).tau == pytest.approx(1 / 3)


@pytest.mark.parametrize("pairs", [[], [(0.5, 0.7)]])
def test_fewer_than_two_reports_have_no_agreement(pairs: list[tuple[float, float]]) -> None:
    agreement = kendall(pairs)
    assert agreement.tau is None
    assert agreement.why == TOO_FEW
    assert agreement.words().startswith("not enough reports")
    assert "no rank agreement" in agreement.words()


def test_a_judge_that_ranks_nothing_has_no_agreement_not_zero() -> None:
    agreement = kendall([(1.0, 0.2), (1.0, 0.9), (1.0, 0.4)])
    assert agreement.tau is None
    assert agreement.why == NO_ORDER


def test_scores_equal_but_for_float_rounding_are_a_tie() -> None:
    same = 0.1 + 0.2  # 0.30000000000000004
    assert kendall([(0.3, 1.0), (same, 2.0), (0.9, 3.0)]).tau == pytest.approx(
        2 / (3 * 2) ** 0.5)
