"""The Inspect task: one configuration of council on a set of questions, scored by the
evaluation's judge (the `grader` model role).

`council eval` builds one per configuration and runs them as an eval set. Inspect users run
it directly:

    inspect eval council/deep_research -T questions=sample -T configuration=single:claude \\
        --model-role grader=cli/gemini

With `-T second_judge=true` a second judge scores the rubric too: `--model-role
second_grader=cli/codex`.

The task's model is `council/<configuration>` (`council/single:claude`), the name Inspect's
log and viewer show: what answers is the configuration (a solver), not a chat model, so that
model is never called; the judge is the only model Inspect calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi

from council.evaluation import dataset, scorers
from council.evaluation.citations import MAX_CITATIONS
from council.evaluation.solver import council_run

DEFAULT_RUNS_DIR = "council-eval-runs"
PROVIDER = "council"  # the task's model: council/<configuration>


class Configuration(ModelAPI):
    """The model Inspect shows for a task: the council configuration that answers. The
    solver (solver.py) runs the council and sets the output; nothing asks this for text."""

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None, config: GenerateConfig | None = None,
                 **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(self, *args: Any, **kwargs: Any) -> ModelOutput:
        raise RuntimeError(f"{PROVIDER}/{self.model_name} is answered by council's solver, "
                           "not called as a chat model")


@modelapi(name=PROVIDER)
def council() -> type[ModelAPI]:
    return Configuration


@task
def deep_research(questions: str = "sample", configuration: str = "council",
                  runs_dir: str = DEFAULT_RUNS_DIR, test: bool = False,
                  max_cost: float | None = None, max_citations: int = MAX_CITATIONS,
                  language: str | None = None, limit: int | None = None,
                  start: int = 0, stop: int | None = None, second_judge: bool = False) -> Task:
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
        start, stop: only questions[start:stop] of those (`council eval` cuts each
            configuration's questions into slices, one task each: shards.py).
        second_judge: score the rubric again with the `second_grader` model role.
    """
    found, _ = dataset.load(questions, language, limit)
    samples = [Sample(id=q.id, input=q.question, metadata=q.metadata())
               for q in found[start:stop]]
    part = "" if start == 0 and stop is None else f" [{start + 1}-{start + len(samples)}]"
    return Task(
        dataset=samples,
        solver=council_run(configuration, str(Path(runs_dir).absolute()), test, max_cost),
        scorer=[scorers.rubric(), scorers.citation_check(max_citations), scorers.cost(),
                scorers.integrity(), *([scorers.second_rubric()] if second_judge else [])],
        model=f"{PROVIDER}/{configuration}",
        display_name=f"deep_research {configuration}{part}",
        metadata={"configuration": configuration, "questions": questions})
