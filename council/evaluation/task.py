"""The Inspect task: one configuration of council on a set of questions, scored by the
evaluation's judge (the `grader` model role).

`council eval` builds one per configuration and runs them as an eval set. Inspect users run
it directly:

    inspect eval council/deep_research -T questions=sample -T configuration=single:claude \\
        --model-role grader=cli/gemini

The task's model is `none/none`: what answers is the configuration (a solver), not a chat
model; the judge is the only model Inspect calls."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from council.evaluation import dataset, scorers
from council.evaluation.solver import council_run

DEFAULT_RUNS_DIR = "council-eval-runs"
MAX_CITATIONS = 5


@task
def deep_research(questions: str = "sample", configuration: str = "council",
                  runs_dir: str = DEFAULT_RUNS_DIR, test: bool = False,
                  max_cost: float | None = None, max_citations: int = MAX_CITATIONS,
                  language: str | None = None, limit: int | None = None) -> Task:
    """Deep research questions answered by a council configuration.

    Args:
        questions: `sample`, a JSONL file, `drb:FOLDER` or `drb2:FILE` (docs/eval.md).
        configuration: `single:<seat>`, `council:three`, `council`, optionally `@FILE`.
        runs_dir: where the council runs go, one folder per configuration and question.
        test: council's --test (cheap models, two iterations).
        max_cost: council's --max-cost for each run, in US dollars.
        max_citations: citations checked per report.
        language: only the questions in this language.
        limit: only the first N questions.
    """
    found, _ = dataset.load(questions, language, limit)
    samples = [Sample(id=q.id, input=q.question, metadata=q.metadata()) for q in found]
    return Task(
        dataset=samples,
        solver=council_run(configuration, str(Path(runs_dir).absolute()), test, max_cost),
        scorer=[scorers.rubric(), scorers.citation_check(max_citations), scorers.cost()],
        model="none/none",
        display_name=f"deep_research {configuration}",
        metadata={"configuration": configuration, "questions": questions})
