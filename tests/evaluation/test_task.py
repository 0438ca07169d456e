"""The task as Inspect users run it: `inspect eval council/deep_research`, found through
council's entry point, with the cli judge as the grader."""

from __future__ import annotations

import subprocess
import sys

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from council.evaluation.task import deep_research

from .conftest import Evaluator

pytestmark = pytest.mark.slow


def test_the_task_carries_each_question_with_its_rubric(evaluator: Evaluator) -> None:
    task = deep_research(questions=str(evaluator.questions()), configuration="council:three",
                         runs_dir=str(evaluator.root / "runs"))
    samples = list(task.dataset)
    assert [s.id for s in samples] == ["tides", "q2"]
    assert samples[0].input == "How do tides work?"
    assert samples[0].metadata is not None
    assert samples[0].metadata["criteria"][1] == {"criterion": "Names spring tides",
                                                  "weight": 2.0, "dimension": None}


def test_inspect_eval_runs_councils_task_with_the_cli_judge(evaluator: Evaluator) -> None:
    evaluator.judge(met=True)
    log_dir = evaluator.root / "logs"
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "council/deep_research",
         "-T", f"questions={evaluator.questions()}", "-T", "configuration=single:claude",
         "-T", f"runs_dir={evaluator.root / 'runs'}", "-T", "test=true",
         "--model-role", "grader=cli/claude", "--log-dir", str(log_dir), "--display", "plain"],
        env=evaluator.env, cwd=evaluator.root, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    assert log.eval.task == "council/deep_research"
    assert log.eval.model == "council/single:claude"  # what answered, not none/none
    assert log.status == "success"
    assert [s.scores["rubric"].value for s in log.samples or [] if s.scores] == [1.0, 1.0]
    assert {e["cli"] for e in evaluator.judgements()} == {"claude"}
