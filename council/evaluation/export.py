"""`council eval … --export drb DIR`: the evaluation's reports in the form DeepResearch
Bench's own scripts read, for a submission (github.com/Ayanami0730/deep_research_bench).

Its README and scripts (run_benchmark.sh, deepresearch_bench_race.py, utils/extract.py,
utils/clean_article.py) read `data/test_data/raw_data/<model_name>.jsonl`: one JSON object a
line, `{"id": …, "prompt": …, "article": …}`. RACE finds a model's article by the task's
prompt, character for character, and FACT by the task's id as query.jsonl writes it (a
number), so both are copied from query.jsonl, not from council's questions (which strip the
prompt). So DIR is that raw_data folder of a checkout (or any folder, copied there later),
and each configuration is one model: `council-single-claude.jsonl`, `council-three.jsonl`,
then `TARGET_MODELS=("council-single-claude" …)` in run_benchmark.sh.

The article is the report as the judge read it (citations.for_judging: without council's
header lines and Completeness section, which describe the run), with what council's
integrity check marked in it still marked. A report whose question has no DeepResearch Bench
id, or a sample that failed, is not written; the note counts them."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from council.errors import CouncilError, UsageError
from council.evaluation.citations import for_judging
from council.evaluation.configurations import Configuration
from council.evaluation.public_sets import DrbTask
from council.store.disk import atomic_write

DRB = "drb"
FORMATS = (DRB,)
PREFIX = "council"


class ExportRefused(UsageError):
    """`--export` that cannot be done: an unknown format, a folder that cannot be written,
    or questions that are not the benchmark's."""


class ExportFailed(CouncilError):
    """Writing the export failed after the evaluation ran."""


@dataclass(frozen=True)
class Answer:
    """A sample that was scored: a configuration's report on one question."""

    configuration: str
    question: str  # the question's id
    report: str


def check_folder(folder: Path) -> None:
    """DIR can take the export: a folder, or a path whose nearest existing parent is a
    folder this user can write in (the folder is made when the export is written)."""
    here = folder
    while not here.exists() and not here.is_symlink() and here.parent != here:
        here = here.parent
    if not here.is_dir():
        what = "is not a folder" if here == folder else f"is under {here}, which is not a folder"
        raise ExportRefused(f"--export {DRB} {folder}: {what}")
    if not os.access(here, os.W_OK | os.X_OK):
        raise ExportRefused(f"--export {DRB} {folder}: cannot write in {here}")


def model_name(conf: Configuration) -> str:
    """The configuration's name as a DeepResearch Bench model (a file name and a word of
    run_benchmark.sh's TARGET_MODELS): `council-single-claude`, `council-three`, `council`."""
    slug = conf.slug()
    return slug if slug == PREFIX or slug.startswith(PREFIX + "-") else f"{PREFIX}-{slug}"


def drb_lines(answers: Sequence[Answer], tasks: Mapping[str, DrbTask]) -> tuple[list[str], int]:
    """One configuration's JSON lines, in query.jsonl's order, and how many answers had no
    task of that id."""
    order = {key: place for place, key in enumerate(tasks)}
    known = sorted((a for a in answers if a.question in tasks), key=lambda a: order[a.question])
    lines = [json.dumps({"id": tasks[a.question].id, "prompt": tasks[a.question].prompt,
                         "article": for_judging(a.report)}, ensure_ascii=False)
             for a in known]
    return lines, len(answers) - len(known)


def write_drb(folder: Path, configurations: Sequence[Configuration], answers: Sequence[Answer],
              tasks: Mapping[str, DrbTask], failed: int = 0) -> list[str]:
    """Each configuration's file in `folder`; one line per file written, and one counting
    what was skipped. `failed`: samples without a report."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportFailed(f"--export {DRB} {folder}: {exc.strerror or exc}") from exc
    said, unknown = [], 0
    for conf in configurations:
        mine = [a for a in answers if a.configuration == conf.name]
        lines, missing = drb_lines(mine, tasks)
        unknown += missing
        if not lines:
            continue
        path = folder / f"{model_name(conf)}.jsonl"
        replaced = path.exists() or path.is_symlink()
        try:
            atomic_write(path, "".join(line + "\n" for line in lines))
        except OSError as exc:
            raise ExportFailed(f"--export {DRB}: cannot write {path}: "
                               f"{exc.strerror or exc}") from exc
        said.append(f"export: {len(lines)} report{'' if len(lines) == 1 else 's'} of "
                    f"{conf.name} in {path}" + (" (replaced the file that was there)"
                                                if replaced else ""))
    skipped = [f"{unknown} whose question has no DeepResearch Bench id" if unknown else "",
               f"{failed} failed sample{'' if failed == 1 else 's'}" if failed else ""]
    if any(skipped):
        said.append("export: skipped " + ", ".join(part for part in skipped if part)
                    + " (not written)")
    if not said:
        said.append(f"export: no report to write in {folder}")
    return said
