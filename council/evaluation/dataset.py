"""The QUESTIONS argument: which questions an evaluation asks.

    sample            the ten questions shipped with council (council/evaluation/data/)
    FILE.jsonl        a file in council's format (questions.py)
    drb:FOLDER        DeepResearch Bench, from a checkout of its repository
    drb2:FILE         DeepResearch Bench II's tasks_and_rubrics.jsonl (or its folder)

`language` keeps the questions in one language (DeepResearch Bench mixes English and
Chinese); `limit` the first N."""

from __future__ import annotations

from pathlib import Path

from council.evaluation.public_sets import load_drb, load_drb2
from council.evaluation.questions import SAMPLE, Question, QuestionsError, load_file, sample_file

DRB, DRB2 = "drb:", "drb2:"
PREFIXES = (DRB, DRB2)


def canonical_spec(spec: str) -> str:
    """The spec with an absolute path, as the task records it (a re-run from another folder
    is the same evaluation)."""
    if spec == SAMPLE:
        return spec
    for prefix in PREFIXES:
        if spec.startswith(prefix):
            return prefix + str(Path(spec[len(prefix):]).absolute())
    return str(Path(spec).absolute())


def load(spec: str, language: str | None = None,
         limit: int | None = None) -> tuple[list[Question], list[str]]:
    """The questions, and notes to show (tasks skipped for their licence)."""
    notes: list[str] = []
    if spec == SAMPLE:
        questions = load_file(sample_file())
    elif spec.startswith(DRB2):
        questions, notes = load_drb2(Path(spec[len(DRB2):]))
    elif spec.startswith(DRB):
        questions = load_drb(Path(spec[len(DRB):]))
    else:
        questions = load_file(Path(spec))
    if language:
        questions = [q for q in questions if q.language == language]
    if limit is not None:
        questions = questions[:limit]
    if not questions:
        raise QuestionsError(f"no questions in {spec}"
                             + (f" in language {language!r}" if language else ""))
    return questions, notes
