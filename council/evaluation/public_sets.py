"""The public deep-research benchmarks, read from a copy the user downloaded (council fetches
nothing): their licences and attribution are in docs/eval.md.

- DeepResearch Bench (Du et al. 2025, github.com/Ayanami0730/deep_research_bench, Apache-2.0):
  `data/prompt_data/query.jsonl` (id, topic, language, prompt),
  `data/criteria_data/criteria.jsonl` (per task: dimension weights and weighted criteria per
  dimension) and `data/test_data/cleaned_data/reference.jsonl` (id, prompt, article: the
  reference report RACE scores against).
- DeepResearch Bench II (github.com/imlrz/DeepResearch-Bench-II): `tasks_and_rubrics.jsonl`
  (per task: prompt, binary rubric items in three dimensions, the articles it may not cite).
  Its data is CC BY 4.0 except three tasks: two CC BY-NC 4.0 (idx 26 and 110), which are
  skipped here, and one CC0 (idx 119), kept and flagged."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.evaluation.questions import (
    Criterion,
    Question,
    QuestionsError,
    json_lines,
    unique,
)

DRB_FILES = {
    "query": ("data/prompt_data/query.jsonl", "query.jsonl"),
    "criteria": ("data/criteria_data/criteria.jsonl", "criteria.jsonl"),
    "reference": ("data/test_data/cleaned_data/reference.jsonl", "reference.jsonl"),
}
DRB_SOURCE = "DeepResearch Bench (Apache-2.0)"
DRB2_FILE = "tasks_and_rubrics.jsonl"
DRB2_DIMENSIONS = ("info_recall", "analysis", "presentation")
# DATA_LICENSE of DeepResearch Bench II, for copies whose tasks carry no "license" field.
DRB2_LICENCES = {26: "CC BY-NC 4.0", 110: "CC BY-NC 4.0", 119: "CC0"}
DRB2_DEFAULT_LICENCE = "CC BY 4.0"


def _find(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


@dataclass(frozen=True)
class DrbTask:
    """A task of DeepResearch Bench's query.jsonl as its own scripts read it: they find a
    model's article by the task's id (as written: a number) and by its prompt, character for
    character."""

    id: int | str
    prompt: str
    language: str | None


def drb_tasks(folder: Path) -> dict[str, DrbTask]:
    """Every task of DeepResearch Bench's query.jsonl in `folder` (a checkout), by its id as
    a question's id (a string)."""
    query = _find(folder, DRB_FILES["query"])
    if query is None:
        raise QuestionsError(f"{folder}: no {DRB_FILES['query'][0]} (a checkout of "
                             "github.com/Ayanami0730/deep_research_bench)")
    tasks: dict[str, DrbTask] = {}
    for number, task in json_lines(query, "DeepResearch Bench query file"):
        tid, prompt = task.get("id"), task.get("prompt")
        if tid is None or not isinstance(prompt, str) or not prompt.strip():
            raise QuestionsError(f"{query}:{number}: a task needs an 'id' and a 'prompt'")
        key, language = str(tid), task.get("language")
        if key in tasks:
            raise QuestionsError(f"{query}: question id {key!r} appears twice")
        tasks[key] = DrbTask(tid if isinstance(tid, int | str) and not isinstance(tid, bool)
                             else key, prompt, str(language) if language else None)
    return tasks


def load_drb(folder: Path) -> list[Question]:
    """DeepResearch Bench from a checkout of its repository (or a folder holding the three
    files): every task of query.jsonl, with its criteria and reference report where the other
    two files have them."""
    tasks = drb_tasks(folder)
    query = _find(folder, DRB_FILES["query"])
    criteria_file = _find(folder, DRB_FILES["criteria"])
    reference_file = _find(folder, DRB_FILES["reference"])
    criteria = _by_id(criteria_file) if criteria_file else {}
    references = _by_id(reference_file) if reference_file else {}
    questions = []
    for key, task in tasks.items():
        crit = criteria.get(key)
        items, weights = _drb_criteria(crit, f"{criteria_file}: task {key}") if crit else ((), {})
        article = (references.get(key) or {}).get("article")
        questions.append(Question(
            key, task.prompt.strip(), items,
            article if isinstance(article, str) and article.strip() else None, weights,
            DRB_SOURCE, task.language))
    return unique(questions, str(query))


def _by_id(path: Path) -> dict[str, dict[str, Any]]:
    return {str(data.get("id")): data for _, data in json_lines(path, "benchmark file")}


def _drb_criteria(data: Mapping[str, Any], where: str
                  ) -> tuple[tuple[Criterion, ...], dict[str, float]]:
    """DeepResearch Bench's criteria: per dimension a list of {criterion, explanation,
    weight}, and the dimensions' own weights."""
    groups = data.get("criterions")
    weights = data.get("dimension_weight") or {}
    if not isinstance(groups, dict) or not isinstance(weights, dict):
        raise QuestionsError(f"{where}: expected 'criterions' and 'dimension_weight' objects")
    items = []
    for dimension, entries in groups.items():
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict) or not isinstance(entry.get("criterion"), str):
                continue
            text = entry["criterion"].strip()
            if isinstance(entry.get("explanation"), str) and entry["explanation"].strip():
                text = f"{text}: {entry['explanation'].strip()}"
            weight = entry.get("weight", 1)
            items.append(Criterion(text, float(weight) if _number(weight) else 1.0,
                                   str(dimension)))
    used = {c.dimension for c in items}
    dims = {str(k): float(v) for k, v in weights.items() if str(k) in used and _number(v)}
    if used - set(dims):
        dims = {}  # a dimension without a weight: every criterion counts by its own weight
    return tuple(items), dims


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


def drb2_licence(task: Mapping[str, Any]) -> str:
    """A DeepResearch Bench II task's licence: its own "license" field, else the dataset's
    DATA_LICENSE list by idx."""
    own = task.get("license")
    if isinstance(own, str) and own.strip():
        return own.strip()
    idx = task.get("idx")
    return DRB2_LICENCES.get(idx, DRB2_DEFAULT_LICENCE) if isinstance(idx, int) else \
        DRB2_DEFAULT_LICENCE


def non_commercial(licence: str) -> bool:
    """`CC BY-NC 4.0`, `CC-BY-NC-4.0`, `cc by-nc-sa`: a NonCommercial licence."""
    return "NC" in re.split(r"[\s\-_/]+", licence.upper())


def load_drb2(path: Path) -> tuple[list[Question], list[str]]:
    """DeepResearch Bench II's tasks (`path`: tasks_and_rubrics.jsonl or its folder), and one
    line per task skipped because its licence forbids commercial use."""
    file = path / DRB2_FILE if path.is_dir() else path
    questions, skipped = [], []
    for number, task in json_lines(file, "DeepResearch Bench II tasks file"):
        where = f"{file}:{number}"
        prompt, content = task.get("prompt"), task.get("content")
        if not isinstance(prompt, str) or not prompt.strip() or not isinstance(content, dict):
            raise QuestionsError(f"{where}: a task needs a 'prompt' and a 'content' object")
        key = str(task.get("id") or task.get("idx") or number)
        licence = drb2_licence(task)
        if non_commercial(licence):
            skipped.append(f"skipped DeepResearch Bench II task {key} (idx {task.get('idx')}): "
                           f"its data is {licence}")
            continue
        rubric = content.get("rubric")
        if not isinstance(rubric, dict):
            raise QuestionsError(f"{where}: no 'content.rubric' object")
        items = tuple(Criterion(text.strip(), 1.0, dimension)
                      for dimension in DRB2_DIMENSIONS
                      for text in rubric.get(dimension) or () if isinstance(text, str)
                      and text.strip())
        blocked = content.get("blocked") if isinstance(content.get("blocked"), dict) else {}
        urls = tuple(u for u in (blocked or {}).get("urls") or () if isinstance(u, str))
        source = f"DeepResearch Bench II ({licence})"
        questions.append(Question(key, prompt.strip(), items, None, {}, source,
                                  str(task.get("language")) if task.get("language") else None,
                                  urls))
    return unique(questions, str(file)), skipped
