"""`council eval` end to end, offline: the fake agent CLIs answer the questions, a scripted
judge scores them, Inspect keeps the logs; run again, it redoes nothing; killed, it leaves no
process and the next run finishes what was left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
from conftest import wait_for
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessage

from council.evaluation import command

from .conftest import TWO_QUESTIONS, Evaluator

pytestmark = pytest.mark.slow
CONFIGS = ("--config", "single:claude", "--config", "council")


def samples(log_dir: Path) -> dict[tuple[str, str], EvalSample]:
    """(configuration, question) → the sample of the newest log of each configuration."""
    found: dict[str, EvalLog] = {}
    for info in sorted(list_eval_logs(str(log_dir)), key=lambda i: i.name):
        log = read_eval_log(info)
        found[str(log.eval.task_args["configuration"])] = log
    return {(conf, str(sample.id)): sample
            for conf, log in found.items() for sample in log.samples or []}


def test_two_questions_two_configurations_then_nothing_is_redone(
        evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = evaluator.questions()
    evaluator.judge(met=True)
    log_dir = evaluator.root / "eval"
    args = (str(questions), *CONFIGS, "--judge", "cli:gemini", "--log-dir", str(log_dir),
            "--test")
    done = evaluator.run(*args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    got = samples(log_dir)
    assert sorted(got) == [("council", "q2"), ("council", "tides"),
                           ("single:claude", "q2"), ("single:claude", "tides")]
    for sample in got.values():
        assert sample.scores is not None
        assert sample.scores["rubric"].value == 1.0
        usage = sample.output.usage
        assert usage is not None
        council = sample.metadata["council"]
        assert usage.total_tokens > 0
        assert usage.total_tokens == council["usage"]["tokens_in"] + council["usage"]["tokens_out"]
        cost = sample.scores["cost"].value
        assert isinstance(cost, dict)
        assert cost["tokens"] == usage.total_tokens
        assert Path(council["run_dir"], "final-report.md").is_file()
        assert council["sources_json"]["sources"]  # the run's source ledger itself
        assert set(council["per_agent"]) >= {"claude"}
    assert "claims" in got[("council", "tides")].metadata["council"]["claims_json"]
    assert got[("single:claude", "tides")].metadata["council"]["claims_json"] is None
    summary = (log_dir / "summary.md").read_text()
    assert "| single:claude | 2 |" in summary
    assert "| council | 2 |" in summary
    assert "Judge: **cli:gemini**" in summary
    assert (log_dir / "summary.html").is_file()

    starts, judged = len(evaluator.council_starts()), len(evaluator.judgements())
    assert starts > 0
    assert judged >= 4
    again = evaluator.run(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(evaluator.council_starts()) == starts, "a council run started again"
    assert len(evaluator.judgements()) == judged, "a finished sample was scored again"
    assert "0 runs to do, 2 done" in again.stdout

    # A third question: the plan estimates its cost from the runs done, before any is spent.
    for name, value in evaluator.env.items():
        monkeypatch.setenv(name, value)
    more = evaluator.questions([*TWO_QUESTIONS, {"id": "q3", "question": "Why?"}], "3.jsonl")
    plan = command.plan_lines(command.prepare(command.EvalRequest(
        str(more), ("single:claude", "council"), "cli:gemini", log_dir, test=True,
        max_cost=2.0)))
    assert "single:claude: 1 runs to do, 2 done" in plan
    assert any(line.startswith("  estimate: ~$") and "a run from the 2 done" in line
               for line in plan), plan
    assert "budget: at most $2 a run (--max-cost), $4.00 for the 2 runs" in plan


def finished_log(log_dir: Path, configuration: str) -> bool:
    """Whether the configuration's task has ended successfully (its log's header says so)."""
    if not log_dir.is_dir():
        return False
    for info in list_eval_logs(str(log_dir)):
        try:
            log = read_eval_log(info, header_only=True)
        except Exception:  # a log being written
            continue
        if log.eval.task_args.get("configuration") == configuration and log.status == "success":
            return True
    return False


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def ours(root: Path) -> list[psutil.Process]:
    """Every live process started for this test: its command line or folder is under the
    test's tmp_path (council runs, their agents, judges)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            text = " ".join(proc.info["cmdline"] or []) + " " + (proc.info["cwd"] or "")
        except psutil.Error:
            continue
        if str(root) in text and proc.pid != os.getpid() and alive(proc.pid):
            found.append(proc)
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_killed_mid_run_leaves_no_process_and_the_next_run_completes_it(
        evaluator: Evaluator, sig: signal.Signals) -> None:
    # single:claude finishes at once; the council's codex and gemini take their time.
    evaluator.council.script({"codex": {"delay": 3}, "gemini": {"delay": 3}})
    evaluator.judge(met=True)
    questions = evaluator.questions()
    log_dir = evaluator.root / "eval"
    args = (str(questions), *CONFIGS, "--judge", "cli:gemini", "--log-dir", str(log_dir),
            "--test", "--max-runs", "4")
    proc = subprocess.Popen(evaluator.argv(*args), env=evaluator.env, cwd=evaluator.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        # single:claude done (its log says so), the council's runs under way.
        wait_for(lambda: finished_log(log_dir, "single:claude"), timeout=90)
        wait_for(lambda: any(e["cli"] == "codex" for e in evaluator.council_starts()))
        if sig == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
        else:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], err[-3000:]
    assert "run the same command again" in out + err
    assert ours(evaluator.root) == []
    assert [e for e in evaluator.council_starts() if alive(e["pid"])] == []
    finished = {key: s.uuid for key, s in samples(log_dir).items() if s.scores}
    assert ("single:claude", "tides") in finished
    assert ("single:claude", "q2") in finished
    runs_before = sorted(p.name for p in log_dir.glob("runs/single-claude/*/research/2*"))

    judged = len(evaluator.judgements())
    evaluator.council.script({})  # no more waiting: the interrupted runs resume at full speed
    done = evaluator.run(*args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    after = samples(log_dir)
    assert len(after) == 4
    assert all(s.scores for s in after.values())
    for key, uuid in finished.items():
        assert after[key].uuid == uuid, f"{key} was redone"
    assert sorted(p.name for p in log_dir.glob("runs/single-claude/*/research/2*")) == \
        runs_before
    # Only the council's two samples were judged this time.
    assert {e["kind"] for e in evaluator.judgements()[judged:]} <= {"rubric", "citations"}
    assert len(evaluator.judgements()) - judged <= 4
    assert ours(evaluator.root) == []


# Inspect, run in this process, trips pytest's warnings-as-errors on its own internals: its
# retry policy uses a tenacity argument tenacity deprecates, and its display leaves anyio
# streams to the garbage collector.
@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning",
                            "ignore::ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_judge_that_prefers_one_configuration_makes_it_win(
        evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's mockllm/model as the judge, in this process: every report that cites codex
    (only the council's do) meets its rubric, no other does. This proves the arithmetic of
    the summary, not the judge."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from .judgebin import _judge

    def scripted(messages: list[ChatMessage], tools: object, tool_choice: object,
                 config: object) -> ModelOutput:
        prompt = messages[-1].text
        output = ModelOutput.from_content("mockllm/model",
                                          _judge.answer(prompt, {"prefer": "codex"}))
        output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return output

    for name, value in evaluator.env.items():
        monkeypatch.setenv(name, value)
    judge = get_model("mockllm/model", custom_outputs=scripted)
    log_dir = evaluator.root / "eval"
    request = command.EvalRequest(str(evaluator.questions()), ("single:claude", "council"),
                                  "mockllm/model", log_dir, test=True)
    lines: list[str] = []
    assert command.main(request, lines.append, judge_model=judge) == 0, lines

    summary = (log_dir / "summary.md").read_text()
    assert "Judge: **mockllm/model**" in summary
    assert "| single:claude | 2 | 0.0 " in summary
    assert "| council | 2 | 100.0 " in summary
    assert "single:claude − council: -100.0 [-100.0, -100.0] points on 2 questions: council " \
        "scores higher" in summary
    assert "**council** scores higher than every other configuration" in summary
    assert "council scores higher" in (log_dir / "summary.html").read_text()


def test_two_judges_integrity_and_an_export_for_deepresearch_bench(
        evaluator: Evaluator) -> None:
    """DeepResearch Bench's layout, judged by gemini and again by codex (both preferring the
    council's reports, which cite codex), offline: the summary has both judges and their
    agreement, the integrity figures not checked (nothing fetched), and the export is what
    the benchmark's scripts read."""
    evaluator.judge(prefer="codex")
    drb = evaluator.drb()
    log_dir, out = evaluator.root / "eval", drb / "data" / "test_data" / "raw_data"
    done = evaluator.run(f"drb:{drb}", *CONFIGS, "--judge", "cli:gemini",
                         "--second-judge", "cli:codex", "--log-dir", str(log_dir), "--test",
                         "--export", "drb", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "judged by cli:gemini, and again by cli:codex" in done.stdout

    judged = evaluator.judgements()
    assert {(j["cli"], j["kind"]) for j in judged} >= {
        ("gemini", "rubric"), ("gemini", "race"), ("gemini", "citations"),
        ("codex", "rubric"), ("codex", "race")}
    assert not any(j["cli"] == "codex" and j["kind"] == "citations" for j in judged)
    for sample in samples(log_dir).values():
        assert sample.scores is not None
        assert set(sample.scores) >= {"rubric", "citations", "cost", "integrity",
                                      "second_judge"}
        integrity = sample.scores["integrity"]
        assert integrity.metadata is not None
        assert integrity.metadata["offline"] is True
        assert integrity.metadata["quotes"] is None  # not checked offline, not 0

    text = (log_dir / "summary.md").read_text()
    assert "## Second judge" in text
    assert "- Rubric scores: Kendall's tau-b +1.00 over 4 reports." in text
    assert "Both judges rank the configurations in the same order: council > single:claude." \
        in text
    assert "## Integrity (computed by council)" in text
    # Offline, nothing was fetched: quotes, numbers and sources not checked, in both runs.
    assert "| council | not checked | not checked | none in the reports | not checked | " \
        "not checked | 2 |" in text

    exported = {p.name: [json.loads(line) for line in p.read_text().splitlines()]
                for p in out.iterdir()}
    assert sorted(exported) == ["council-single-claude.jsonl", "council.jsonl"]
    for name, lines in exported.items():
        assert [line["id"] for line in lines] == [1, 2], name
        assert lines[0]["prompt"] == "How do tides work? "  # the benchmark's, unstripped
        assert all(set(line) == {"id", "prompt", "article"} for line in lines)
        assert all(line["article"].strip() and not line["article"].startswith("> council run")
                   for line in lines)
    assert f"export: 2 reports of council in {out / 'council.jsonl'}" in done.stdout

    count = len(evaluator.judgements())
    again = evaluator.run(f"drb:{drb}", *CONFIGS, "--judge",
                          "cli:gemini", "--second-judge", "cli:codex", "--log-dir",
                          str(log_dir), "--test", "--export", "drb", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "(replaced the file that was there)" in again.stdout
    assert len(evaluator.judgements()) == count  # the export needs no judge, no run


INSPECT_CHECKS = {"unknown-judge"}
BAD_LINE = '{"id": "a", "question": "Fine?"}\n{"id": "b", "question": "Broken?",\n'


@pytest.mark.parametrize(("case", "expected"), [
    ("malformed", "questions.jsonl:2: not valid JSON"),
    ("unknown-config", "unknown configuration 'triple'"),
    ("unknown-seat", "configuration single:nobody: unknown agent 'nobody'"),
    ("unknown-judge", "judge nosuch/model:"),
    ("unknown-cli-judge", "the cli judge is one of cli:claude, cli:codex, cli:gemini"),
    ("judge-without-credentials", "judge cli:gemini: gemini has no credentials"),
    ("second-judge-of-the-same-vendor", "--second-judge google/gemini-2.5-pro is of the same "
     "vendor (gemini) as --judge cli:gemini: name another vendor's judge"),
    ("second-judge-batch", "--judge-batch: the judge cli:codex is a CLI"),
    ("export-of-other-questions", "--export drb: the questions must be DeepResearch Bench's "
     "(drb:FOLDER)"),
    ("export-to-a-file", "--export drb "),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(
        evaluator: Evaluator, case: str, expected: str) -> None:
    questions = evaluator.questions()
    config, judge, more = "single:claude", "cli:gemini", []
    spec = str(questions)
    if case == "second-judge-of-the-same-vendor":
        more = ["--second-judge", "google/gemini-2.5-pro"]
    elif case == "second-judge-batch":
        judge, more = "google/gemini-2.5-pro", ["--second-judge", "cli:codex", "--judge-batch"]
    elif case == "export-of-other-questions":
        more = ["--export", "drb", str(evaluator.root / "out")]
    elif case == "export-to-a-file":
        spec, more = f"drb:{evaluator.drb()}", ["--export", "drb", str(questions)]
        expected += f"{questions}: is not a folder"
    elif case == "malformed":
        questions.write_text(BAD_LINE)
    elif case == "unknown-config":
        config = "triple"
    elif case == "unknown-seat":
        config = "single:nobody"
    elif case == "unknown-judge":
        judge = "nosuch/model"
    elif case == "unknown-cli-judge":
        judge = "cli:nosuch"
    else:
        del evaluator.env["GEMINI_API_KEY"]
    log_dir = evaluator.root / "eval"
    evaluator.env["PYTHONPROFILEIMPORTTIME"] = "1"  # Python's own record of what it imported
    done = evaluator.run(spec, "--config", config, "--judge", judge,
                         "--log-dir", str(log_dir), *more, timeout=60)
    imports = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    said = "".join(line + "\n" for line in done.stderr.splitlines()
                   if not line.startswith("import time:"))
    assert done.returncode == 2, said
    assert said.count("\n") == 1, said
    assert expected in said
    assert said.startswith("council: error: ")
    assert not log_dir.exists()
    assert evaluator.council_starts() == []
    # Only a judge named as an Inspect model needs Inspect (~1.5 s) to be checked.
    loaded = any(line.split("|")[-1].strip() == "inspect_ai" for line in imports)
    assert loaded == (case in INSPECT_CHECKS), case


def test_a_judge_of_a_configurations_only_vendor_is_flagged_in_the_plan(
        evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in evaluator.env.items():
        monkeypatch.setenv(name, value)
    prepared = command.prepare(command.EvalRequest(
        str(evaluator.questions()), ("single:claude", "single:codex", "council"),
        "cli:claude", evaluator.root / "eval"))
    assert prepared.flags == ["the judge cli:claude is of the same vendor (claude) as "
                              "single:claude's only agent: it may favour that configuration"]
    assert f"warning: {prepared.flags[0]}" in command.plan_lines(prepared)
    assert prepared.judge == "cli/claude"


def test_the_plan_names_both_judges_and_the_export(
        evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in evaluator.env.items():
        monkeypatch.setenv(name, value)
    out = evaluator.root / "raw_data"
    prepared = command.prepare(command.EvalRequest(
        f"drb:{evaluator.drb()}", ("single:codex", "council"), "gemini", evaluator.root / "eval",
        second_judge="cli:codex", export=("drb", out)))
    assert (prepared.judge, prepared.label) == ("cli/gemini/pro", "gemini (cli:gemini/pro)")
    assert prepared.second is not None
    assert prepared.second.model == "cli/codex"
    assert prepared.flags == ["the judge cli:codex is of the same vendor (codex) as "
                              "single:codex's only agent: it may favour that configuration"]
    assert prepared.export_tasks is not None
    assert set(prepared.export_tasks) == {"1", "2"}
    lines = command.plan_lines(prepared)
    assert lines[0].endswith("judged by gemini (cli:gemini/pro), and again by cli:codex")
    assert any(line.endswith("; the second judge 1 or 2 (rubric, RACE)") for line in lines)
    assert f"export: each configuration's reports to {out} in DeepResearch Bench's form " \
        "(<model>.jsonl), once they are scored" in lines
    assert command.roles(prepared) == {"grader": "cli/gemini/pro", "second_grader": "cli/codex"}
    assert not out.exists()  # nothing is written before the evaluation


def test_a_declined_confirm_is_not_started_and_exit_0(evaluator: Evaluator) -> None:
    log_dir = evaluator.root / "eval"
    done = subprocess.run(
        evaluator.argv(str(evaluator.questions()), "--config", "single:claude", "--judge",
                       "cli:claude", "--log-dir", str(log_dir), "--confirm"),
        env=evaluator.env, cwd=evaluator.root, input="n\n", capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("not started")
    assert "error" not in done.stderr
    assert evaluator.council_starts() == []
