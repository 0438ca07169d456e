"""council's questions file: each mistake named with its file and line, before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council.evaluation.questions import (
    Criterion,
    QuestionsError,
    load_file,
    sample_file,
)


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_the_sample_set_ships_ten_questions_across_fields_each_with_a_rubric() -> None:
    questions = load_file(sample_file())
    assert len(questions) == 10
    assert len({q.id for q in questions}) == 10
    assert all(len(q.criteria) >= 4 for q in questions)
    assert any(c.weight > 1 for q in questions for c in q.criteria)


def test_a_question_with_weighted_criteria_and_a_reference(tmp_path: Path) -> None:
    path = write(tmp_path, {"id": 7, "question": " Why? ", "reference": "ref",
                            "criteria": ["a", {"criterion": "b", "weight": 2.5,
                                               "dimension": "insight"}]})
    (q,) = load_file(path)
    assert q.id == "7"
    assert q.question == "Why?"
    assert q.reference == "ref"
    assert q.criteria == (Criterion("a"), Criterion("b", 2.5, "insight"))
    assert q.metadata()["criteria"][1] == {"criterion": "b", "weight": 2.5,
                                           "dimension": "insight"}


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, {"id": "a", "question": "A?"}, "", "  ", {"id": "b", "question": "B?"})
    assert [q.id for q in load_file(path)] == ["a", "b"]


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "b", "question": ', ":2: not valid JSON"),
    ("[1, 2]", ":2: expected a JSON object"),
    ({"id": "b"}, ":2: 'question' must be a non-empty string"),
    ({"question": "B?"}, ":2: 'id' must be a non-empty string or a number"),
    ({"id": True, "question": "B?"}, ":2: 'id' must be"),
    ({"id": "b", "question": "B?", "critera": []}, ":2: unknown key 'critera'"),
    ({"id": "b", "question": "B?", "criteria": "x"}, ":2: 'criteria' must be a list"),
    ({"id": "b", "question": "B?", "criteria": [{"criterion": "x", "weight": 0}]},
     ":2: criteria[0]: 'weight' must be a positive number"),
    ({"id": "b", "question": "B?", "criteria": [{"criterion": "x", "wieght": 1}]},
     ":2: criteria[0]: unknown key 'wieght'"),
    ({"id": "b", "question": "B?", "criteria": [3]}, ":2: criteria[0]: a rubric item"),
    ({"id": "b", "question": "B?", "reference": ""}, ":2: 'reference' must be"),
    ({"id": "b", "question": "B?", "dimension_weights": {"x": -1}},
     ":2: 'dimension_weights' must map"),
    ({"id": "b", "question": "B?", "dimension_weights": {"x": 1},
      "criteria": [{"criterion": "c", "dimension": "y"}]}, ":2: criteria without a weighted"),
    ({"id": "a", "question": "Again?"}, "question id 'a' appears twice"),
])
def test_each_mistake_names_the_file_and_line(tmp_path: Path, line: object,
                                              message: str) -> None:
    path = write(tmp_path, {"id": "a", "question": "A?"}, line)
    with pytest.raises(QuestionsError) as info:
        load_file(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_a_file_that_is_not_a_plain_file_or_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QuestionsError, match="does not exist"):
        load_file(tmp_path / "nope.jsonl")
    with pytest.raises(QuestionsError, match="not a plain file"):
        load_file(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(QuestionsError, match="holds no questions"):
        load_file(empty)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(QuestionsError, match="not UTF-8"):
        load_file(binary)
