"""The research question's scope: the sub-questions a good answer must close and the
dimensions it must cover (seed 003's scoping, before the research), and how well the reports
covered them.

One agent writes the scope before the research starts (scope.json), so every researcher works
from the same checklist; after refinement, the claim extractor says which sub-questions the
reports answered and with which claims, and which dimensions they left as gaps. These
functions check both answers without any model; `score.py` turns them into numbers. The
phases that ask for them are phases/scope.py and phases/claims.py."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.store import agentfs

SCOPE = "scope.json"
QUESTIONS = (3, 8)  # how many sub-questions a scope may have (inclusive)
DIMENSIONS = (3, 6)
STATUSES = ("answered", "partial", "open")
ID = re.compile(r"[A-Za-z0-9_.-]{1,16}")  # ids go into every later prompt: short, one line


@dataclass(frozen=True)
class Scope:
    questions: dict[str, str]  # id → sub-question, in order
    dimensions: dict[str, str]  # id → dimension

    def to_dict(self) -> dict[str, Any]:
        return {"status": "ok",
                "questions": [{"id": k, "question": v} for k, v in self.questions.items()],
                "dimensions": [{"id": k, "dimension": v} for k, v in self.dimensions.items()]}


@dataclass(frozen=True)
class Coverage:
    questions: dict[str, tuple[str, tuple[str, ...]]]  # id → (status, ids of its claims)
    dimensions: dict[str, bool]  # id → covered


def validate_scope(data: Any) -> Scope:
    """The scope an agent wrote, or ValueError saying what to fix."""
    if not isinstance(data, Mapping):
        raise ValueError('expected an object {"questions": [...], "dimensions": [...]}')
    return Scope(_items(data, "questions", "question", QUESTIONS),
                 _items(data, "dimensions", "dimension", DIMENSIONS))


def _items(data: Mapping[str, Any], key: str, field: str,
           bounds: tuple[int, int]) -> dict[str, str]:
    raw = data.get(key)
    if not isinstance(raw, list) or not bounds[0] <= len(raw) <= bounds[1]:
        raise ValueError(f"'{key}' must be a list of {bounds[0]} to {bounds[1]} items")
    out: dict[str, str] = {}
    for i, item in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{where} is not an object")
        iid, text = item.get("id"), item.get(field)
        if not isinstance(iid, str) or not ID.fullmatch(iid) or iid in out:
            raise ValueError(f"{where}: 'id' must be unique, 1 to 16 letters, digits, '_', "
                             "'.' or '-'")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: '{field}' must be a non-empty string")
        out[iid] = " ".join(text.split())[:300]
    return out


def validate_coverage(data: Mapping[str, Any], scope: Scope,
                      claim_ids: Collection[str]) -> Coverage:
    """The extractor's judgement of the reports against the scope: every sub-question and
    every dimension exactly once. ValueError otherwise."""
    questions: dict[str, tuple[str, tuple[str, ...]]] = {}
    for i, item in enumerate(_entries(data, "questions", scope.questions)):
        where = f"questions[{i}]"
        qid, status, claims = str(item["id"]), item.get("status"), item.get("claims", [])
        if qid in questions:
            raise ValueError(f"{where}: {qid} is listed twice")
        if status not in STATUSES:
            raise ValueError(f"{where}: 'status' must be one of {', '.join(STATUSES)}")
        if not isinstance(claims, list) or not all(
                isinstance(c, str) and c in claim_ids for c in claims):
            raise ValueError(f"{where}: 'claims' must list ids of the claims above")
        questions[qid] = (str(status), tuple(claims))
    missing = [q for q in scope.questions if q not in questions]
    if missing:
        raise ValueError(f"'questions' lacks {', '.join(missing)}")

    dimensions: dict[str, bool] = {}
    for i, item in enumerate(_entries(data, "dimensions", scope.dimensions)):
        where = f"dimensions[{i}]"
        did = str(item["id"])
        if did in dimensions:
            raise ValueError(f"{where}: {did} is listed twice")
        if not isinstance(item.get("covered"), bool):
            raise ValueError(f"{where}: 'covered' must be true or false")
        dimensions[did] = item["covered"]
    missing = [d for d in scope.dimensions if d not in dimensions]
    if missing:
        raise ValueError(f"'dimensions' lacks {', '.join(missing)}")
    return Coverage(questions, dimensions)


def _entries(data: Mapping[str, Any], key: str,
             ids: Mapping[str, str]) -> list[Mapping[str, Any]]:
    """The objects listed under `key`, each with an `id` among `ids` (a model may write any
    JSON: a list or a number where a string belongs must be an error, not a crash)."""
    raw = data.get(key)
    if not isinstance(raw, list):
        raise ValueError(f"'{key}' must list every one of {', '.join(ids)}")
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) \
                or item["id"] not in ids:
            raise ValueError(f"{key}[{i}]: 'id' must be one of {', '.join(ids)}")
    return raw


def load(path: Path) -> Scope | None:
    """The run's scope, if one was written and is usable (a degraded scope is None)."""
    try:
        data = agentfs.read_json(path)
    except (FileNotFoundError, agentfs.UnsafeFile, ValueError):
        return None
    if not isinstance(data, dict) or data.get("status") != "ok":
        return None
    try:
        return validate_scope(data)
    except ValueError:
        return None
