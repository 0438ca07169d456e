"""Each sample's council run starts isolated, in the sample's own folder (issue 31, finding
2): a `council/` package or a ./council.yaml in the folder `council eval` was started in is
not what the runs import or obey."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import write_trusted_config
from inspect_ai.log import list_eval_logs, read_eval_log

from council.evaluation import configurations, solver
from council.evaluation.configurations import ConfigurationError
from council.run import detach

from .conftest import TWO_QUESTIONS, Evaluator

# What a benchmark checkout's own `council/` package could do when imported: run as the user.
PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('imported from the cwd')\n"
SEATS = "synthesizer: scout\nagents:\n  scout: {cli: claude}\n"


def plant_package(folder: Path) -> Path:
    marker = folder / "planted-council-ran"
    package = folder / "council"
    package.mkdir()
    for name in ("__init__.py", "__main__.py"):
        (package / name).write_text(PLANTED.format(marker=str(marker)))
    return marker


@pytest.mark.slow
def test_eval_runs_import_nothing_from_the_folder_it_was_started_in(
        evaluator: Evaluator) -> None:
    """From a folder holding a `council/` package and a trusted ./council.yaml whose seat the
    configuration names: every run is the installed council, and it gets that config by
    name (the run's own folder holds none)."""
    root = evaluator.root
    marker = plant_package(root)
    write_trusted_config(root, SEATS)
    evaluator.judge(met=True)
    log_dir = root / "eval"
    # As the user's `council` script starts: no current folder on sys.path (-P), where
    # `python -m council` would import the planted package itself.
    argv = [sys.executable, "-P", "-m", "council", "eval",
            str(evaluator.questions(TWO_QUESTIONS[:1])), "--config", "single:scout",
            "--judge", "cli:claude", "--log-dir", str(log_dir), "--test"]
    done = subprocess.run(argv, env=evaluator.env, cwd=root, capture_output=True, text=True,
                          timeout=110)
    assert not marker.exists(), "a run imported the council/ package of the current folder"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    (info,) = list_eval_logs(str(log_dir))
    (sample,) = read_eval_log(info).samples or []
    assert sample.scores is not None
    assert sample.scores["rubric"].value == 1.0
    run = Path(sample.metadata["council"]["run_dir"])
    folder = run.parent.parent  # <runs>/<configuration>/<question>/research/<id>
    assert not (folder / "council.yaml").exists()
    state = yaml.safe_load((run / "state.yaml").read_text())
    assert state["options"]["config_file"] == str((root / "council.yaml").resolve())
    assert state["options"]["config_trust"] == "named with --config"  # not found in a cwd
    assert [seat["name"] for seat in state["options"]["seats"]] == ["scout"]
    assert "council/__init__.py" not in (folder / solver.LOG_ERR).read_text()


def test_a_run_is_the_installed_entry_file_under_isolation() -> None:
    argv = solver.council_argv("run", "--test")
    assert argv == (sys.executable, "-I", str(detach.ENTRY), "run", "--test")
    assert Path(argv[2]).parent == Path(solver.__file__).resolve().parents[1]


def test_the_project_config_is_named_checked_again_and_refused_once_changed(
        tmp_path: Path) -> None:
    conf = configurations.parse("single:scout")
    with pytest.raises(ConfigurationError, match="unknown agent 'scout'"):
        solver.project_config(conf)  # no ./council.yaml: the built-in seats
    path = write_trusted_config(tmp_path, SEATS)
    assert solver.project_config(conf, test=True) == ["--config", str(path.resolve())]
    assert solver.project_config(configurations.parse("single:scout@" + str(path))) == []
    path.write_text(SEATS + "  evil: {cli: codex, extra_args: [--dangerously-bypass]}\n")
    with pytest.raises(ConfigurationError, match="council trust"):
        solver.project_config(conf)
