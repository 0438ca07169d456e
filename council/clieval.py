"""`council eval`'s command line: its options, and the check that the [eval] extra is
installed before anything about them (evaluation/command.py runs it)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from council import options
from council.cliparts import click_type, confirmed, echo, examples, fail, handle_errors
from council.errors import CouncilError


class _EvalCommand(click.Command):
    """`council eval`: without its extra, the line that installs it comes before anything
    about its options (`--help` still shows them)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing and not {"--help", "-h"} & set(args):
            from council.evaluation import require_inspect

            try:
                require_inspect()
            except CouncilError as exc:
                fail(exc)
        return super().parse_args(ctx, args)


@click.command("eval", cls=_EvalCommand, epilog=examples(
    "council eval sample --config single:claude --config council \\",
    "    --judge cli:claude --log-dir eval-logs --test --limit 2"))
@click.argument("questions")
@click.option("--config", "configs", multiple=True, required=True, metavar="C",
              help="A configuration to evaluate (repeat to compare): single:<seat>, "
                   "council:three, council:quick|standard|deep, council (deep), optionally "
                   "@FILE (a council config), or a FILE.yaml.")
@click.option("--judge", required=True, metavar="J",
              help="The judge: cli:claude, cli:codex, cli:gemini (your CLI login; "
                   "cli:claude:MODEL for a model), a seat of your council config by name (its "
                   "CLI and model), or an Inspect model (anthropic/…, openai/…, google/…).")
@click.option("--second-judge", metavar="J",
              help="A second judge, of another vendor than --judge, scores the same reports; "
                   "the summary gives both scores and their rank agreement.")
@click.option("--log-dir", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Inspect's logs, the council runs and summary.md/summary.html go here; "
                   "the same command again goes on where it stopped.")
@click.option("--max-runs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Council runs at once.")
@click.option("--per-vendor", type=click.IntRange(min=1), default=4, show_default=True,
              help="CLI processes of one vendor at once on this machine, across runs and "
                   "evaluations.")
@click.option("--test", is_flag=True, help="Each run with --test (cheap models, 2 iterations).")
@click.option("--max-cost", type=click_type(options.OPTION["max_cost"]),
              help="Budget of each council run in USD (council run --max-cost).")
@click.option("--max-citations", type=click.IntRange(min=0), default=5, show_default=True,
              help="Citations checked per report.")
@click.option("--language", help="Only the questions in this language (e.g. en).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--confirm", is_flag=True, help="Show the plan and ask before spending.")
@click.option("--shard", metavar="I/N",
              help="Run only worker I of N's share, into the --log-dir all N share; the same "
                   "command without --shard closes the set.")
@click.option("--judge-batch", is_flag=True,
              help="An Inspect model judge answers in its provider's batch mode (cheaper, "
                   "slower); not a cli: judge.")
@click.option("--export", "export", nargs=2, metavar="drb DIR",
              type=(click.Choice(["drb"]), click.Path(path_type=Path)),
              help="Also write the scored reports to DIR in DeepResearch Bench's own form "
                   "(DIR/<model>.jsonl: id, prompt, article), for its scripts; QUESTIONS must "
                   "be drb:FOLDER.")
@handle_errors
def eval_cmd(questions: str, configs: tuple[str, ...], judge: str, second_judge: str | None,
             log_dir: Path, max_runs: int, per_vendor: int, test: bool,
             max_cost: float | None, max_citations: int, language: str | None,
             limit: int | None, confirm: bool, shard: str | None, judge_batch: bool,
             export: tuple[str, Path] | None) -> None:
    """Answer QUESTIONS (sample, a JSONL file, drb:FOLDER, drb2:FILE) with each configuration
    and compare them: rubric score, citation accuracy and cost (docs/eval.md). Needs the
    [eval] extra (Inspect AI): pip install 'council[eval]'."""
    from council.evaluation import command, inspect_installed, shards

    request = command.EvalRequest(questions, configs, judge, log_dir.absolute(), max_runs,
                                  per_vendor, test, max_cost, max_citations, language, limit,
                                  shards.parse(shard) if shard is not None else None,
                                  judge_batch, second_judge,
                                  (export[0], export[1].absolute()) if export else None)
    with inspect_installed():  # Inspect is the [eval] extra: only this command loads it
        code = command.main(request, echo, lambda line: echo(line, err=True),
                            (lambda: confirmed("Start the evaluation?")) if confirm else None)
    sys.exit(code)
