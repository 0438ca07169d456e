"""The public benchmarks, read from a folder laid out as their repositories are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council.evaluation import dataset
from council.evaluation.public_sets import load_drb, load_drb2, non_commercial
from council.evaluation.questions import QuestionsError


def jsonl(path: Path, *rows: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def drb(root: Path) -> Path:
    jsonl(root / "data/prompt_data/query.jsonl",
          {"id": 1, "topic": "Finance", "language": "zh", "prompt": "中国金融?"},
          {"id": 51, "topic": "Science", "language": "en", "prompt": "How do tides work?"})
    jsonl(root / "data/criteria_data/criteria.jsonl",
          {"id": 51, "prompt": "How do tides work?",
           "dimension_weight": {"comprehensiveness": 0.6, "insight": 0.4},
           "criterions": {
               "comprehensiveness": [{"criterion": "Moon", "explanation": "names it",
                                      "weight": 0.7},
                                     {"criterion": "Sun", "explanation": "too", "weight": 0.3}],
               "insight": [{"criterion": "Resonance", "explanation": "why", "weight": 1}]}})
    jsonl(root / "data/test_data/cleaned_data/reference.jsonl",
          {"id": 51, "prompt": "How do tides work?", "article": "The reference report."})
    return root


def test_deep_research_bench_from_a_checkout(tmp_path: Path) -> None:
    questions = load_drb(drb(tmp_path))
    assert [q.id for q in questions] == ["1", "51"]
    tides = questions[1]
    assert tides.language == "en"
    assert tides.reference == "The reference report."
    assert [(c.text, c.weight, c.dimension) for c in tides.criteria] == [
        ("Moon: names it", 0.7, "comprehensiveness"), ("Sun: too", 0.3, "comprehensiveness"),
        ("Resonance: why", 1.0, "insight")]
    assert tides.dimension_weights == {"comprehensiveness": 0.6, "insight": 0.4}
    assert tides.source == "DeepResearch Bench (Apache-2.0)"
    assert questions[0].criteria == ()  # no criteria line for it: the generic rubric applies


def test_a_language_and_a_limit_pick_the_questions(tmp_path: Path) -> None:
    drb(tmp_path)
    found, _ = dataset.load(f"drb:{tmp_path}", language="en")
    assert [q.id for q in found] == ["51"]
    found, _ = dataset.load(f"drb:{tmp_path}", limit=1)
    assert [q.id for q in found] == ["1"]
    with pytest.raises(QuestionsError, match="in language 'fr'"):
        dataset.load(f"drb:{tmp_path}", language="fr")


def test_a_folder_that_is_not_the_benchmark_says_what_it_lacks(tmp_path: Path) -> None:
    with pytest.raises(QuestionsError, match=r"no data/prompt_data/query\.jsonl"):
        load_drb(tmp_path)


def task(idx: int, **extra: object) -> dict[str, object]:
    return {"id": f"task{idx}", "idx": idx, "language": "en", "prompt": f"Question {idx}?",
            "content": {"task": "…", "rubric": {"info_recall": ["fact a", "fact b"],
                                                 "analysis": ["why"],
                                                 "presentation": ["a table"]},
                        "blocked": {"title": "T", "urls": ["https://example.org/paper"]}},
            **extra}


def test_deep_research_bench_ii_skips_the_non_commercial_tasks(tmp_path: Path) -> None:
    jsonl(tmp_path / "tasks_and_rubrics.jsonl", task(1), task(26), task(110), task(119),
          task(5, license="CC BY-NC-SA 4.0"), task(6, license="CC BY 4.0"))
    questions, skipped = load_drb2(tmp_path)
    assert [q.id for q in questions] == ["task1", "task119", "task6"]
    assert len(skipped) == 3
    assert "task26" in skipped[0]
    assert "CC BY-NC 4.0" in skipped[0]
    first = questions[0]
    assert [(c.text, c.dimension) for c in first.criteria] == [
        ("fact a", "info_recall"), ("fact b", "info_recall"), ("why", "analysis"),
        ("a table", "presentation")]
    assert first.blocked_urls == ("https://example.org/paper",)
    assert first.source == "DeepResearch Bench II (CC BY 4.0)"
    assert questions[1].source == "DeepResearch Bench II (CC0)"  # kept, its licence shown


@pytest.mark.parametrize(("licence", "nc"), [
    ("CC BY-NC 4.0", True), ("CC-BY-NC-4.0", True), ("cc by-nc-sa", True),
    ("CC BY 4.0", False), ("CC0", False), ("Apache-2.0", False)])
def test_non_commercial_licences(licence: str, nc: bool) -> None:
    assert non_commercial(licence) is nc


def test_the_spec_is_recorded_with_an_absolute_path(tmp_path: Path) -> None:
    assert dataset.canonical_spec("sample") == "sample"
    assert dataset.canonical_spec("drb:bench") == f"drb:{Path('bench').absolute()}"
    assert dataset.canonical_spec("q.jsonl") == str(Path("q.jsonl").absolute())
