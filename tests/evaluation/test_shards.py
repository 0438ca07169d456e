"""`council eval … --shard I/N`, offline: two workers started at once share one log folder
and do every (configuration, question) once; the same command without --shard closes the set
without a research request; a worker killed mid-run and started again redoes nothing it had
finished. The fake agent CLIs answer, the scripted judge scores (conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from inspect_ai.log import list_eval_logs, read_eval_log

from council.errors import UsageError
from council.evaluation import results, shards
from council.paths import RESEARCH_FOLDER
from council.store.state import RunEnd

from .conftest import TWO_QUESTIONS, Evaluator
from .test_command import alive, ours

CONFIGS = ("--config", "single:claude", "--config", "single:codex")


def test_shard_is_i_of_n_or_one_line() -> None:
    assert shards.parse("2/3") == shards.Shard(2, 3)
    for bad in ("0/2", "3/2", "a", "1/0", "1-2"):
        with pytest.raises(shards.ShardError):
            shards.parse(bad)


def test_the_shares_of_n_workers_partition_the_tasks() -> None:
    tasks = [f"t{i}" for i in range(11)]
    for n in (1, 2, 3, 11, 12):
        parts = [shards.share(tasks, shards.Shard(i, n)) for i in range(1, n + 1)]
        assert sorted(t for part in parts for t in part) == sorted(tasks)
        assert sum(len(p) for p in parts) == len(tasks)  # no task in two shares
    assert shards.slices(3) == [(0, None)]
    assert shards.slices(12, 5) == [(0, 5), (5, 10), (10, 15)]


def test_judge_batch_with_a_cli_judge_is_refused_in_one_line(evaluator: Evaluator) -> None:
    done = evaluator.run(str(evaluator.questions()), *CONFIGS, "--judge", "cli:gemini",
                         "--log-dir", str(evaluator.root / "eval"), "--judge-batch")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--judge-batch" in done.stderr
    assert "no batch mode" in done.stderr
    assert not (evaluator.root / "eval").exists()


def scored(log_dir: Path) -> dict[tuple[str, str], list[Any]]:
    """(configuration, question) → every scored sample in every task's newest log."""
    out: dict[tuple[str, str], list[Any]] = {}
    for header in shards.newest_logs(log_dir).values():
        log = read_eval_log(header.location)
        for sample in log.samples or []:
            if sample.scores and not sample.error:
                key = (str(log.eval.task_args["configuration"]), str(sample.id))
                out.setdefault(key, []).append(sample)
    return out


def council_runs(log_dir: Path) -> list[Path]:
    return sorted(log_dir.glob(f"runs/*/*/{RESEARCH_FOLDER}/2*"))


def research_starts(evaluator: Evaluator) -> list[dict[str, Any]]:
    """Agent CLIs started for a council run (the judge's calls are logged apart)."""
    return [e for e in evaluator.council_starts() if "/runs/" in str(e.get("cwd", ""))]


@pytest.mark.slow
def test_two_workers_at_once_then_the_close_runs_nothing(evaluator: Evaluator) -> None:
    evaluator.judge(met=True)
    log_dir = evaluator.root / "eval"
    args = (str(evaluator.questions()), *CONFIGS, "--judge", "cli:gemini", "--log-dir",
            str(log_dir), "--test")
    workers = [subprocess.Popen(evaluator.argv(*args, "--shard", f"{i}/2"), env=evaluator.env,
                                cwd=evaluator.root, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
               for i in (1, 2)]
    outputs = [w.communicate(timeout=150) for w in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, out[-3000:] + err[-3000:]
        assert "1 of the 2 tasks are this worker's, 1 to run" in out

    got = scored(log_dir)
    assert sorted(got) == [(c, q["id"]) for c in ("single:claude", "single:codex")
                           for q in sorted(TWO_QUESTIONS, key=lambda q: q["id"])]
    assert all(len(samples) == 1 for samples in got.values())
    assert len(council_runs(log_dir)) == 4
    assert sum(1 for j in evaluator.judgements() if j["kind"] == "rubric") == 4
    logs = [read_eval_log(i, header_only=True) for i in list_eval_logs(str(log_dir))]
    assert len({log.eval.eval_set_id for log in logs}) == 1  # one set, two workers

    starts, judged = len(research_starts(evaluator)), len(evaluator.judgements())
    closed = evaluator.run(*args)
    assert closed.returncode == 0, closed.stdout[-3000:] + closed.stderr[-3000:]
    assert len(research_starts(evaluator)) == starts, "the close sent a research request"
    assert len(evaluator.judgements()) == judged, "the close scored a sample again"
    summary = (log_dir / "summary.md").read_text()
    assert "| single:claude | 2 |" in summary
    assert "| single:codex | 2 |" in summary
    assert "still missing" not in summary
    assert (log_dir / "summary.html").is_file()
    assert (log_dir / "summary.svg").is_file()


def script(evaluator: Evaluator, mapping: dict[str, Any]) -> None:
    """The fakes' script, replaced atomically (a fake starting now reads one or the other)."""
    path = evaluator.root / "fake-script.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(mapping))
    os.replace(tmp, path)
    evaluator.env["COUNCIL_FAKE_SCRIPT"] = str(path)


def run_done(log_dir: Path, slug: str, question: dict[str, Any]) -> bool:
    research = results.sample_folder(log_dir / "runs", slug, question["id"]) / RESEARCH_FOLDER
    found = results.latest(research, question["question"]) if research.is_dir() else None
    return found is not None and found[1].phase == RunEnd.DONE


@pytest.mark.slow
def test_a_worker_killed_mid_run_finishes_its_share_without_redoing(
        evaluator: Evaluator) -> None:
    evaluator.judge(met=True)
    script(evaluator, {})
    log_dir = evaluator.root / "eval"
    first, second = sorted(TWO_QUESTIONS, key=lambda q: q["id"])  # the order Inspect runs
    args = (str(evaluator.questions([first, second])), *CONFIGS, "--judge", "cli:gemini",
            "--log-dir", str(log_dir), "--test", "--max-runs", "1", "--shard", "1/2")
    proc = subprocess.Popen(evaluator.argv(*args), env=evaluator.env, cwd=evaluator.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        # The first question's council run done: from now on claude hangs, so the second
        # question's run is under way, not finished, when the worker dies. With one run at
        # once, the second starts only once the first sample is scored.
        wait_for(lambda: run_done(log_dir, "single-claude", first), timeout=90)
        script(evaluator, {"claude": {"hang": True}})
        second_folder = str(results.sample_folder(log_dir / "runs", "single-claude",
                                                  second["id"]))
        wait_for(lambda: any(second_folder in str(e.get("cwd", ""))
                             for e in research_starts(evaluator)), timeout=90)
        os.killpg(proc.pid, signal.SIGKILL)  # no chance to write its log or stop its runs
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert not run_done(log_dir, "single-claude", second)
    first_folder = str(results.sample_folder(log_dir / "runs", "single-claude", first["id"]))
    first_starts = [e for e in research_starts(evaluator) if first_folder in str(e["cwd"])]
    assert first_starts
    assert sum(1 for j in evaluator.judgements() if j["kind"] == "rubric") == 1

    script(evaluator, {})
    again = evaluator.run(*args, timeout=150)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "1 of the 2 tasks are this worker's, 1 to run" in again.stdout
    assert [e for e in research_starts(evaluator) if first_folder in str(e["cwd"])] == \
        first_starts, "the finished sample's council run was redone"
    assert sum(1 for j in evaluator.judgements() if j["kind"] == "rubric") == 2, \
        "the finished sample was scored again"
    got = scored(log_dir)
    assert sorted(got) == [("single:claude", first["id"]), ("single:claude", second["id"])]
    assert len(council_runs(log_dir)) == 2  # the second question's run resumed, not redone
    summary = (log_dir / "summary.md").read_text()
    assert "| single:claude | 2 |" in summary
    assert "2 samples are still missing" in summary  # single:codex is shard 2's
    assert "2 of 4 samples are still missing" in again.stdout
    assert [p for p in ours(evaluator.root) if alive(p.pid)] == []


def test_judge_batch_puts_an_inspect_judge_in_batch_mode_on_its_role_only(
        tmp_path: Path) -> None:
    """Batch mode is the grader's own GenerateConfig, not the eval set's (which is part of
    every task's identity: workers with and without it must share their tasks)."""
    from council.evaluation import command

    def prepared(batch: bool) -> command.Prepared:
        request = command.EvalRequest("sample", ("single:claude",), "mockllm/model", tmp_path,
                                      judge_batch=batch)
        return command.Prepared(request, [], [], command.inspect_name(request.judge))

    judge = command.grader(prepared(True))
    assert judge.name == "model"
    assert judge.config.batch is True
    assert command.grader(prepared(False)) == "mockllm/model"


@pytest.mark.slow
def test_the_close_runs_what_a_missing_worker_left(evaluator: Evaluator) -> None:
    evaluator.judge(met=True)
    log_dir = evaluator.root / "eval"
    args = (str(evaluator.questions()), *CONFIGS, "--judge", "cli:gemini", "--log-dir",
            str(log_dir), "--test")
    one = evaluator.run(*args, "--shard", "1/2")
    assert one.returncode == 0, one.stdout[-3000:] + one.stderr[-3000:]
    assert sorted(scored(log_dir)) == [("single:claude", "q2"), ("single:claude", "tides")]
    assert "2 of 4 samples are still missing" in one.stdout
    claude_runs = [e for e in research_starts(evaluator) if e["cli"] == "claude"]

    closed = evaluator.run(*args)
    assert closed.returncode == 0, closed.stdout[-3000:] + closed.stderr[-3000:]
    got = scored(log_dir)
    assert len(got) == 4
    assert all(len(samples) == 1 for samples in got.values())
    assert [e for e in research_starts(evaluator) if e["cli"] == "claude"] == claude_runs
    assert {e["cli"] for e in research_starts(evaluator)} == {"claude", "codex"}
    summary = (log_dir / "summary.md").read_text()
    assert "| single:codex | 2 |" in summary
    assert "still missing" not in summary


def test_more_than_a_slice_of_questions_are_tasks_of_a_slice_each(
        evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    from council.evaluation import command, configurations, dataset

    for name, value in evaluator.env.items():
        monkeypatch.setenv(name, value)
    questions, _ = dataset.load("sample", None, None)
    assert len(questions) > shards.SLICE
    request = command.EvalRequest("sample", ("single:claude",), "cli:gemini",
                                  evaluator.root / "eval", test=True)
    conf = configurations.parse("single:claude")
    prepared = command.Prepared(request, questions,
                                [(conf, configurations.resolve(conf, test=True))], "cli/gemini")
    tasks = command.tasks_of(prepared)
    ids = [[str(s.id) for s in task.dataset] for task in tasks]
    assert len(tasks) == len(shards.slices(len(questions)))
    assert [i for part in ids for i in part] == [q.id for q in questions]
    assert all(len(part) <= shards.SLICE for part in ids)


def one_log(log_dir: Path) -> str:
    """A real log of a finished task, written by Inspect; its location."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    location = str(log_dir / "2026-01-01T00-00-00-00-00_task_one.eval")
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="task", dataset=EvalDataset(),
                    model="mockllm/model", config=EvalConfig())
    write_eval_log(EvalLog(eval=spec, status="success"), location)
    return location


def local(location: str) -> Path:
    return Path(location.removeprefix("file://"))


def test_a_log_replaced_while_it_is_read_is_read_again(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Another worker renames a new log into place between Inspect's size and tail reads:
    the read fails as a torn zip, the file changed, so it is read again."""
    import inspect_ai.log

    location = one_log(tmp_path)
    real, calls = inspect_ai.log.read_eval_log, []

    def racing(where: str, **kwargs: Any) -> Any:
        calls.append(where)
        if len(calls) == 1:
            copy = local(location).with_suffix(".new")
            copy.write_bytes(local(location).read_bytes())
            os.replace(copy, local(location))  # what Inspect's atomic write does
            raise ValueError("EOCD not found")
        return real(where, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", racing)
    header = shards.read_log(location, header_only=True)
    assert header is not None
    assert header.status == "success"
    assert len(calls) == 2


def test_a_torn_log_is_left_out_named_once_and_not_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_ai.log

    location = one_log(tmp_path)
    torn = local(location).with_name("2099-01-01T00-00-00-00-00_task_torn.eval")
    data = local(location).read_bytes()
    torn.write_bytes(data[: len(data) // 2])
    os.utime(torn, (4e9, 4e9))  # newer than the good one: it would win if it were read

    real, calls = inspect_ai.log.read_eval_log, []

    def counted(where: str, **kwargs: Any) -> Any:
        calls.append(where)
        return real(where, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", counted)
    warned: list[str] = []
    logs = shards.newest_logs(tmp_path, warned.append)
    assert [local(h.location) for h in logs.values()] == [local(location)]
    (line,) = warned
    assert torn.name in line
    assert "not done" in line
    assert sum(1 for c in calls if c.endswith(torn.name)) == 1  # broken, not busy


def test_a_torn_read_is_known_however_inspect_wraps_it() -> None:
    import zipfile

    def chained() -> BaseException:
        try:
            try:
                raise ValueError("EOCD not found")
            except ValueError as inner:
                raise RuntimeError("reading the log folder") from inner
        except RuntimeError as outer:
            return outer

    assert shards.torn(ValueError("EOCD not found"))
    assert shards.torn(zipfile.BadZipFile("File is not a zip file"))
    assert shards.torn(chained())
    assert shards.torn(ExceptionGroup("tasks", [OSError("x"), ValueError("EOCD not found")]))
    assert not shards.torn(ValueError("bad configuration"))
    assert not shards.torn(OSError("EOCD not found"))  # not the zip reader's


def test_a_torn_read_is_tried_again_and_nothing_else_is() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("EOCD not found")
        return "done"

    assert shards.again_if_torn(flaky) == "done"
    assert len(calls) == 2

    def broken() -> str:
        calls.append(1)
        raise ValueError("bad configuration")

    calls.clear()
    with pytest.raises(ValueError, match="bad configuration"):
        shards.again_if_torn(broken)
    assert len(calls) == 1

    def always_torn() -> str:
        calls.append(1)
        raise ValueError("EOCD not found")

    calls.clear()
    with pytest.raises(ValueError, match="EOCD"):
        shards.again_if_torn(always_torn)
    assert len(calls) == shards.TORN_TRIES


def test_a_log_that_cannot_be_read_is_named_and_its_samples_count_as_missing(
        tmp_path: Path) -> None:
    from council.evaluation import command

    location = one_log(tmp_path)
    header = shards.read_log(location, header_only=True)
    assert header is not None
    header.eval.dataset.samples = 3
    data = local(location).read_bytes()
    local(location).write_bytes(data[: len(data) // 2])
    warned: list[str] = []
    assert command._rows([header], warned.append) == ([], 3, [])
    (line,) = warned
    assert local(location).name in line


def test_the_shared_eval_set_id_is_made_once_and_read_back(tmp_path: Path) -> None:
    first = shards.shared_set_id(tmp_path, ["a", "b"])
    assert first == shards.set_id(["a", "b"])
    assert (tmp_path / shards.EVAL_SET_ID_FILE).read_text() == first
    assert shards.shared_set_id(tmp_path, ["c"]) == first  # another worker's, kept
    (tmp_path / shards.EVAL_SET_ID_FILE).write_text("  Xk3pQ9vLmN2rT5wY8zA1bC \n")  # Inspect's
    assert shards.shared_set_id(tmp_path, ["a"]) == "Xk3pQ9vLmN2rT5wY8zA1bC"


def test_an_eval_set_id_file_that_is_not_an_id_is_refused_in_one_line(tmp_path: Path) -> None:
    """issue 43 item 14: DIR/.eval-set-id is read without following a link, as a plain file
    only, bounded, never waited on (a FIFO), and what it holds must be an id: it goes into
    every log of the set."""
    secret = tmp_path / "secret"
    secret.write_text("council-0123456789abcdef")
    path = tmp_path / "logs" / shards.EVAL_SET_ID_FILE
    path.parent.mkdir()

    def refused(what: str) -> str:
        with pytest.raises(UsageError) as caught:
            shards.shared_set_id(path.parent, ["a"])
        message = str(caught.value)
        assert "\n" not in message, message
        assert str(path) in message, message
        assert what in message, message
        assert "remove it" in message
        return message

    path.symlink_to(secret)
    refused(f"a link to {secret}")
    path.unlink()
    path.symlink_to(tmp_path / "nowhere")  # a dangling link is not made nor followed
    refused("a link to")
    assert not (tmp_path / "nowhere").exists()
    path.unlink()
    os.mkfifo(path)  # no writer: a blocking open would hang here
    refused("a FIFO")
    path.unlink()
    path.write_text("x" * (1 << 20))
    refused("not an eval set id")
    for bad in ("two\nlines", "\x1b]52;c;aGk=\x07", "../../etc", "id with spaces", "\udcff"):
        path.write_bytes(bad.encode("utf-8", "surrogateescape"))
        said = refused("not an eval set id")
        assert "\x1b" not in said
