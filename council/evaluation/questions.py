"""The questions an evaluation asks, and council's own file format for them: JSON Lines, one
question a line.

    {"id": "tides", "question": "How do tides work?",
     "criteria": ["Explains the Moon's role", {"criterion": "Quantifies the Sun's share",
                  "weight": 2, "dimension": "insight"}],
     "reference": "…a reference report, for RACE-style relative scoring…"}

`id` and `question` are required; `criteria` (rubric items, each met or not, optionally
weighted and grouped in dimensions) and `reference` are optional. A malformed file is named
with its line before anything runs: the evaluation costs real money, so a typo must not be
found after the first hour."""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from council.errors import UsageError

KEYS = ("id", "question", "criteria", "reference", "dimension_weights")
CRITERION_KEYS = ("criterion", "weight", "dimension")
MAX_ID_CHARS = 200
# A questions file is a list of prompts and rubrics; anything larger is a mistake (or not a
# file), refused rather than read into memory.
MAX_FILE_BYTES = 512 << 20
SAMPLE = "sample"  # the QUESTIONS argument naming the set shipped with council


class QuestionsError(UsageError):
    """A questions file that cannot be used: its message names the file and line."""


@dataclass(frozen=True)
class Criterion:
    """One rubric item: the judge says whether the report meets it."""

    text: str
    weight: float = 1.0
    dimension: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.text, "weight": self.weight, "dimension": self.dimension}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Criterion:
        dimension = data.get("dimension")
        return cls(str(data["criterion"]), float(data.get("weight", 1.0)),
                   None if dimension is None else str(dimension))


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    criteria: tuple[Criterion, ...] = ()
    reference: str | None = None
    # Per-dimension weights (DeepResearch Bench's); without them every criterion counts by
    # its own weight alone.
    dimension_weights: Mapping[str, float] = field(default_factory=dict)
    # Where the question comes from and under which licence (shown in the summary).
    source: str | None = None
    language: str | None = None
    # Articles the benchmark forbids citing (DeepResearch Bench II); a report that cites one
    # is flagged.
    blocked_urls: tuple[str, ...] = ()

    def metadata(self) -> dict[str, Any]:
        """What an Inspect sample carries besides the question (scorers read it back)."""
        return {"criteria": [c.to_dict() for c in self.criteria],
                "reference": self.reference,
                "dimension_weights": dict(self.dimension_weights),
                "source": self.source, "language": self.language,
                "blocked_urls": list(self.blocked_urls)}


def sample_file() -> Path:
    """The sample set shipped in the package (data/sample.jsonl)."""
    return Path(str(resources.files("council.evaluation").joinpath("data", "sample.jsonl")))


def read_text(path: Path, what: str) -> str:
    """A file the user named, read whole: a plain file only (a FIFO would block), bounded,
    UTF-8."""
    try:
        info = os.stat(path)
    except FileNotFoundError as exc:
        raise QuestionsError(f"{what} {path} does not exist") from exc
    except OSError as exc:
        raise QuestionsError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise QuestionsError(f"{what} {path} is not a plain file")
    if info.st_size > MAX_FILE_BYTES:
        raise QuestionsError(f"{what} {path} is larger than {MAX_FILE_BYTES >> 20} MB")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise QuestionsError(f"{what} {path}: not UTF-8 text") from exc
    except OSError as exc:
        raise QuestionsError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def json_lines(path: Path, what: str = "questions file") -> list[tuple[int, dict[str, Any]]]:
    """Each non-blank line of a JSON Lines file as (line number, object); a line that is not
    a JSON object is an error naming the file and the line."""
    out = []
    for number, line in enumerate(read_text(path, what).splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise QuestionsError(f"{path}:{number}: not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise QuestionsError(f"{path}:{number}: expected a JSON object, one per line")
        out.append((number, data))
    return out


def load_file(path: Path) -> list[Question]:
    """The questions of a file in council's format, checked line by line."""
    questions = [parse(data, f"{path}:{number}") for number, data in json_lines(path)]
    if not questions:
        raise QuestionsError(f"{path} holds no questions")
    return unique(questions, str(path))


def unique(questions: Sequence[Question], where: str) -> list[Question]:
    seen: set[str] = set()
    for question in questions:
        if question.id in seen:
            raise QuestionsError(f"{where}: question id {question.id!r} appears twice")
        seen.add(question.id)
    return list(questions)


def parse(data: Mapping[str, Any], where: str) -> Question:
    """One question object, or a QuestionsError saying what is wrong with it where."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise QuestionsError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    qid = data.get("id")
    if isinstance(qid, bool) or not isinstance(qid, str | int) or not str(qid).strip():
        raise QuestionsError(f"{where}: 'id' must be a non-empty string or a number")
    qid = str(qid).strip()
    if len(qid) > MAX_ID_CHARS or not qid.isprintable():
        raise QuestionsError(f"{where}: 'id' must be at most {MAX_ID_CHARS} printable "
                             "characters")
    text = data.get("question")
    if not isinstance(text, str) or not text.strip():
        raise QuestionsError(f"{where}: 'question' must be a non-empty string")
    reference = data.get("reference")
    if reference is not None and (not isinstance(reference, str) or not reference.strip()):
        raise QuestionsError(f"{where}: 'reference' must be a non-empty string (a reference "
                             "report)")
    raw = data.get("criteria", [])
    if not isinstance(raw, list):
        raise QuestionsError(f"{where}: 'criteria' must be a list of rubric items")
    criteria = tuple(_criterion(item, f"{where}: criteria[{i}]") for i, item in enumerate(raw))
    weights = data.get("dimension_weights", {})
    if not isinstance(weights, dict) or not all(
            isinstance(k, str) and _positive(v) for k, v in weights.items()):
        raise QuestionsError(f"{where}: 'dimension_weights' must map dimension names to "
                             "positive numbers")
    dimensions = {c.dimension or "" for c in criteria}
    missing = sorted(d for d in dimensions if weights and d not in weights)
    if missing:
        raise QuestionsError(f"{where}: criteria without a weighted dimension "
                             f"({missing[0] or 'none given'!r}) beside 'dimension_weights'")
    return Question(qid, text.strip(), criteria, reference,
                    {k: float(v) for k, v in weights.items()})


def _criterion(item: Any, where: str) -> Criterion:
    if isinstance(item, str) and item.strip():
        return Criterion(item.strip())
    if not isinstance(item, dict):
        raise QuestionsError(f"{where}: a rubric item is a string or an object "
                             '{"criterion": ..., "weight": ..., "dimension": ...}')
    unknown = sorted(set(item) - set(CRITERION_KEYS))
    if unknown:
        raise QuestionsError(f"{where}: unknown key {unknown[0]!r} (known: "
                             f"{', '.join(CRITERION_KEYS)})")
    text, weight, dimension = item.get("criterion"), item.get("weight", 1), item.get("dimension")
    if not isinstance(text, str) or not text.strip():
        raise QuestionsError(f"{where}: 'criterion' must be a non-empty string")
    if not _positive(weight):
        raise QuestionsError(f"{where}: 'weight' must be a positive number")
    if dimension is not None and (not isinstance(dimension, str) or not dimension.strip()):
        raise QuestionsError(f"{where}: 'dimension' must be a non-empty string")
    return Criterion(text.strip(), float(weight), dimension)


def _positive(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, int | float)
            and math.isfinite(value) and value > 0)
