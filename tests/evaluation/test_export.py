"""`--export drb DIR`: the reports as DeepResearch Bench's scripts read them (its README and
deepresearch_bench_race.py / utils/extract.py: data/test_data/raw_data/<model>.jsonl, one
{"id", "prompt", "article"} a line; RACE finds an article by the task's prompt, character for
character, FACT by its id as query.jsonl writes it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from council.evaluation import configurations, export
from council.evaluation.export import Answer, ExportRefused
from council.evaluation.public_sets import DrbTask, drb_tasks

HEADER = ("> council run `20260101-000000-abcdef` · claude, codex · completeness 90\n"
          "> integrity (computed by council): quotes 1 of 1 found\n\n")
REPORT = "# Tides\n\nThe Moon pulls the sea [1](https://example.org/tides).\n"
TASKS = {"7": DrbTask(7, "  How do tides work?\n", "en"), "3": DrbTask(3, "为什么天是蓝的", "zh")}


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_line_is_the_tasks_id_and_exact_prompt_and_the_judged_report() -> None:
    answers = [Answer("council", "7", HEADER + REPORT + "\n## Completeness\n\n90 of 100\n"),
               Answer("council", "3", "天空是蓝色的。\n"), Answer("council", "99", REPORT)]
    written, unknown = export.drb_lines(answers, TASKS)
    assert unknown == 1
    first, second = (json.loads(line) for line in written)
    assert list(first) == ["id", "prompt", "article"]
    assert first["id"] == 7
    assert isinstance(first["id"], int)
    assert first["prompt"] == "  How do tides work?\n"  # untouched: RACE matches on it
    assert first["article"] == REPORT  # council's header and Completeness left out
    assert second == {"id": 3, "prompt": "为什么天是蓝的", "article": "天空是蓝色的。\n"}
    assert "\\u" not in written[1]  # UTF-8 as the benchmark's own files are


def test_the_lines_follow_query_jsonls_order() -> None:
    answers = [Answer("c", "3", "b\n"), Answer("c", "7", "a\n")]
    written, _ = export.drb_lines(answers, TASKS)
    assert [json.loads(line)["id"] for line in written] == [7, 3]


def test_a_file_per_configuration_named_as_a_model(tmp_path: Path) -> None:
    confs = [configurations.parse(c) for c in ("single:claude", "council:three", "council")]
    assert [export.model_name(c) for c in confs] == ["council-single-claude", "council-three",
                                                     "council"]
    folder = tmp_path / "raw_data"
    answers = [Answer("single:claude", "7", REPORT), Answer("council", "7", REPORT),
               Answer("council", "3", REPORT), Answer("council", "nope", REPORT)]
    said = export.write_drb(folder, confs, answers, TASKS, failed=2)
    assert said == [
        f"export: 1 report of single:claude in {folder / 'council-single-claude.jsonl'}",
        f"export: 2 reports of council in {folder / 'council.jsonl'}",
        "export: skipped 1 whose question has no DeepResearch Bench id, 2 failed samples "
        "(not written)"]
    assert [line["id"] for line in lines(folder / "council.jsonl")] == [7, 3]
    assert not (folder / "council-three.jsonl").exists()  # no report: no empty file

    again = export.write_drb(folder, confs[:1], answers[:1], TASKS)
    assert again == [f"export: 1 report of single:claude in "
                     f"{folder / 'council-single-claude.jsonl'} (replaced the file that was "
                     "there)"]


def test_nothing_to_write_is_said(tmp_path: Path) -> None:
    assert export.write_drb(tmp_path, [configurations.parse("council")], [], TASKS) == [
        f"export: no report to write in {tmp_path}"]


def test_a_link_in_place_of_the_file_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    (tmp_path / "council.jsonl").symlink_to(target)
    export.write_drb(tmp_path, [configurations.parse("council")],
                     [Answer("council", "7", REPORT)], TASKS)
    assert target.read_text() == "keep"
    assert not (tmp_path / "council.jsonl").is_symlink()


def test_the_folder_is_checked_before_anything_runs(tmp_path: Path) -> None:
    export.check_folder(tmp_path)
    export.check_folder(tmp_path / "new" / "raw_data")  # made when written
    afile = tmp_path / "file"
    afile.write_text("")
    with pytest.raises(ExportRefused, match=rf"^--export drb {afile}: is not a folder$"):
        export.check_folder(afile)
    with pytest.raises(ExportRefused, match=f"is under {afile}, which is not a folder$"):
        export.check_folder(afile / "raw_data")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_folder_this_user_cannot_write_in_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(ExportRefused, match=f"cannot write in {locked}$"):
            export.check_folder(locked / "raw_data")
    finally:
        locked.chmod(0o700)


def test_the_tasks_come_from_query_jsonl_as_written(tmp_path: Path) -> None:
    query = tmp_path / "data" / "prompt_data" / "query.jsonl"
    query.parent.mkdir(parents=True)
    query.write_text('{"id": 1, "topic": "x", "language": "en", "prompt": " Why? "}\n'
                     '{"id": "b2", "language": "zh", "prompt": "为什么"}\n', encoding="utf-8")
    assert drb_tasks(tmp_path) == {"1": DrbTask(1, " Why? ", "en"),
                                   "b2": DrbTask("b2", "为什么", "zh")}
