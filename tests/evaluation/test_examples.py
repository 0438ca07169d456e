"""examples/eval/: the GitHub Actions workflow and the Kubernetes Jobs that run `council eval`
across machines. Each is parsed and checked for what makes the set come out whole (N shards
named the same way everywhere, one command shape for the workers and the closer, the log
directory passed from the workers to the closer, credentials only where council runs); then
their commands are run as written, with the fake CLIs, each worker as a machine of its own
(its own HOME, so its council runs are foreign to the others), and the closer on what they
left behind. No network, no runner: the `run:` scripts and the container commands themselves.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from council.readiness.preflight import KEYS

from .conftest import Evaluator

EXAMPLES = Path(__file__).parents[2] / "examples" / "eval"
WORKFLOW = EXAMPLES / "github-actions.yml"
SHARDS_JOB = EXAMPLES / "k8s-indexed-job.yaml"
CLOSE_JOB = EXAMPLES / "k8s-close-job.yaml"
MATRIX_SHARD = "${{ matrix.shard }}"
K8S_SHARD = '"$((JOB_COMPLETION_INDEX + 1))/'
SECRET = re.compile(r"^\$\{\{ secrets\.([A-Z_]+) \}\}$")
CREDENTIALS = {"CLAUDE_CODE_OAUTH_TOKEN", "CODEX_API_KEY", "GEMINI_API_KEY"}


# ------------------------------------------------------------------------------ reading

def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def k8s(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def eval_lines(script: str) -> list[str]:
    """The `council eval …` commands of a shell script, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line.strip().removeprefix("exec ") for line in joined.splitlines()
            if re.match(r"\s*(exec )?council eval ", line)]


def parsed(line: str) -> tuple[list[str], dict[str, list[str]]]:
    """A `council eval` line → its positional arguments and its options (each with its
    values, in order)."""
    words = shlex.split(line)[2:]
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    while words:
        word = words.pop(0)
        if word.startswith("--"):
            options.setdefault(word, []).append(words.pop(0))
        else:
            positional.append(word)
    return positional, options


def step_with(job: dict[str, Any], text: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [s for s in job["steps"] if text in s.get("run", "")]
    assert len(steps) == 1, f"one step runs {text!r}"
    return steps[0]


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [s for s in job["steps"]
                                   if str(s.get("uses", "")).startswith(action)]
    assert len(steps) == 1, f"one step uses {action}"
    return steps[0]


def worker_and_closer() -> tuple[dict[str, Any], dict[str, Any]]:
    jobs = workflow()["jobs"]
    workers = [j for j in jobs.values() if "matrix" in j.get("strategy", {})]
    closers = [j for j in jobs.values() if "needs" in j]
    assert len(workers) == 1
    assert len(closers) == 1
    return workers[0], closers[0]


def same_set(worker: tuple[list[str], dict[str, list[str]]],
             closer: tuple[list[str], dict[str, list[str]]]) -> None:
    """The closer is the workers' command without --shard: the same questions,
    configurations, judge and log directory (anything else would close another set)."""
    assert worker[0] == closer[0]
    assert len(worker[0]) == 1
    shardless = {k: v for k, v in worker[1].items() if k != "--shard"}
    assert shardless == closer[1]
    assert "--shard" not in closer[1]
    assert len(closer[1]["--config"]) >= 2
    assert len(closer[1]["--judge"]) == len(closer[1]["--log-dir"]) == 1


def credentials_of(env: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    return {e["name"]: (e["valueFrom"]["secretKeyRef"]["name"],
                        e["valueFrom"]["secretKeyRef"]["key"]) for e in env}


def one_per_cli(names: set[str]) -> None:
    """Each CLI gets exactly one credential, one council's preflight knows for it."""
    assert names == CREDENTIALS
    for cli, keys in KEYS.items():
        assert len(names & set(keys)) == 1, cli


# ------------------------------------------------------------------------ the workflow

def test_the_workflow_runs_n_shards_and_closes_the_same_set() -> None:
    worker, closer = worker_and_closer()
    shards = worker["strategy"]["matrix"]["shard"]
    n = len(shards)
    assert n >= 2
    assert shards == list(range(1, n + 1))
    assert worker["strategy"]["fail-fast"] is False

    run = step_with(worker, "council eval")["run"]
    assert f"--shard {MATRIX_SHARD}/{n}" in run
    [line] = eval_lines(run.replace(MATRIX_SHARD, "I"))
    work = parsed(line)
    assert work[1]["--shard"] == [f"I/{n}"]
    [close_line] = eval_lines(step_with(closer, "council eval")["run"])
    same_set(work, parsed(close_line))

    # The log directory goes up from each shard and comes down, merged, where the closer
    # reads it; the closer runs after every shard, also when one failed.
    log_dir = work[1]["--log-dir"][0]
    upload = step_using(worker, "actions/upload-artifact")
    assert upload["with"]["path"] == log_dir
    assert upload["if"] == "${{ !cancelled() }}"
    assert upload["with"]["name"] == f"eval-shard-{MATRIX_SHARD}"
    download = step_using(closer, "actions/download-artifact")
    assert download["with"] == {"pattern": "eval-shard-*", "merge-multiple": True,
                                "path": log_dir}
    assert closer["needs"] == "shard"
    assert "shard" in workflow()["jobs"]
    assert closer["if"] == "${{ !cancelled() }}"
    summary = step_using(closer, "actions/upload-artifact")["with"]["path"].split()
    assert {f"{log_dir}/summary.{ext}" for ext in ("md", "html", "svg")} <= set(summary)


def test_the_workflow_gives_credentials_to_council_only() -> None:
    """One non-rotating secret per CLI, on the `council eval` steps and nowhere else: not
    the job, not the steps that run npm's install scripts."""
    data = workflow()
    assert "env" not in data
    for job in worker_and_closer():
        assert "env" not in job
        for step in job["steps"]:
            env = step.get("env", {})
            secrets = {name for name, value in env.items() if SECRET.match(str(value))}
            if "council eval" in step.get("run", ""):
                assert secrets == set(env)
                assert all(SECRET.match(env[name])[1] == name  # type: ignore[index]
                           for name in env)
                one_per_cli(secrets)
            else:
                assert not secrets, step
                assert "secrets." not in str(step)


# ------------------------------------------------------------------------ Kubernetes

def container(job: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = job["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def test_the_indexed_job_is_n_shards_on_one_volume_and_the_closer_the_same_set() -> None:
    docs = k8s(SHARDS_JOB)
    [claim] = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    [job] = [d for d in docs if d["kind"] == "Job"]
    [close] = k8s(CLOSE_JOB)
    spec = job["spec"]
    n = spec["completions"]
    assert spec["completionMode"] == "Indexed"
    assert n >= 2
    assert spec["parallelism"] == n
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]

    script = container(job)["args"][0]
    assert f'--shard {K8S_SHARD}{n}"' in script
    [line] = eval_lines(script)
    work = parsed(line.replace(K8S_SHARD, '"I/'))
    assert work[1]["--shard"] == [f"I/{n}"]
    [close_line] = eval_lines(container(close)["args"][0])
    same_set(work, parsed(close_line))

    # Both write the log directory on the same claim, and take the same credentials.
    log_dir = work[1]["--log-dir"][0]
    for one in (job, close):
        pod = one["spec"]["template"]["spec"]
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
                  for v in pod["volumes"] if "persistentVolumeClaim" in v}
        mounts = [m for m in container(one)["volumeMounts"] if m["name"] in claims]
        assert [claims[m["name"]] for m in mounts] == [claim["metadata"]["name"]]
        assert log_dir.startswith(mounts[0]["mountPath"] + "/")
        found = credentials_of(container(one)["env"])
        one_per_cli(set(found))
        assert {key for _, key in found.values()} == set(found)
        assert "envFrom" not in container(one)
    # Exit 2 is bad input: that index fails at once instead of starting again.
    [rule] = spec["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailIndex"
    assert rule["onExitCodes"]["values"] == [2]
    assert rule["onExitCodes"]["containerName"] == container(job)["name"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


# --------------------------------------------------------------- running the commands

def needs_shard() -> None:
    """The workers' commands need `council eval --shard` (issue 37, item 1): until this
    council has it, running them is skipped, and it turns on by itself once it does."""
    out = subprocess.run([sys.executable, "-m", "council", "eval", "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    if "--shard" not in out:
        pytest.skip("`council eval --help` has no --shard option yet (issue 37 item 1, "
                    "branch i37-shard): the examples' worker commands need it")


@pytest.fixture
def short() -> Iterator[Path]:
    """A folder with a short path for the machines: Inspect binds a socket under HOME
    (~/.local/share/inspect_ai/acp/PID.sock), and a socket's path holds 107 bytes at most."""
    folder = Path(tempfile.mkdtemp(prefix="council-ex-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def machine(evaluator: Evaluator, short: Path,
            secrets: set[str]) -> tuple[Path, dict[str, str]]:
    """A fresh machine: its own HOME, research and config folders, the questions in its
    checkout, council and the fake CLIs on PATH, and the credentials the example gives it
    (fake values) instead of the suite's own. Its folders are at the same paths as the
    previous machine's, which is moved away first: every hosted runner has the same HOME and
    workspace paths, and every pod of one image the same HOME and mounts, with nothing left
    in them of another machine."""
    root = short / "m"
    if root.exists():
        root.rename(short / f"gone-{len(list(short.iterdir()))}")
    (root / "home").mkdir(parents=True)
    work = root / "work"
    work.mkdir()
    (work / "questions.jsonl").write_text(evaluator.questions().read_text())
    env = {k: v for k, v in evaluator.env.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                        "XDG_STATE_HOME", "COUNCIL_STATE_HOME")}
    env.update({name: f"fake-{name.lower()}" for name in secrets})
    env.update(HOME=str(root / "home"), COUNCIL_RESEARCH_DIR=str(root / "research"),
               COUNCIL_CONFIG_HOME=str(root / "config"))
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    return work, env


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A `run:` script as GitHub's runner starts it (`bash --noprofile --norc -eo pipefail`)."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def merge(source: Path, into: Path) -> None:
    """download-artifact's merge-multiple: every artifact's files in one folder, a file of
    the same path overwritten by the later one. A shard that wrote nothing uploads nothing
    (upload-artifact only warns)."""
    if source.is_dir():
        shutil.copytree(source, into, dirs_exist_ok=True, symlinks=True)


def starts(evaluator: Evaluator) -> int:
    return len(evaluator.council_starts())


def closed(evaluator: Evaluator, log_dir: Path, configurations: list[str], before: int,
           done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert starts(evaluator) == before, "the closer started a council run"
    summary = (log_dir / "summary.md").read_text(encoding="utf-8")
    for conf in configurations:
        assert f"| {conf} | 2 |" in summary, summary
    assert (log_dir / "summary.html").is_file()
    assert (log_dir / "summary.svg").is_file()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_workflows_steps_run_as_written_on_separate_machines(evaluator: Evaluator,
                                                                 short: Path) -> None:
    """Each shard's `run:` steps on a machine of its own, its log directory carried to the
    closer as the artifacts would carry it; the closer redoes nothing and sums up 2 + 2."""
    needs_shard()
    worker, closer = worker_and_closer()
    run = step_with(worker, "council eval")
    close = step_with(closer, "council eval")
    _, options = parsed(eval_lines(close["run"])[0])
    log_dir = options["--log-dir"][0]
    evaluator.judge(met=True)
    artifacts = evaluator.root / "artifacts"
    for shard in worker["strategy"]["matrix"]["shard"]:
        work, env = machine(evaluator, short, set(run["env"]))
        script = run["run"].replace(MATRIX_SHARD, str(shard))
        assert "${{" not in script
        done = bash(script, work, env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "CLAUDE_CODE_OAUTH_TOKEN" in done.stdout  # `council doctor` names it
        assert "fake-claude_code_oauth_token" not in done.stdout + done.stderr
        merge(work / log_dir, artifacts / f"eval-shard-{shard}")

    work, env = machine(evaluator, short, set(close["env"]))
    for artifact in sorted(artifacts.iterdir()):
        merge(artifact, work / log_dir)
    before = starts(evaluator)
    closed(evaluator, work / log_dir, options["--config"], before, bash(close["run"], work, env))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_indexed_jobs_commands_run_as_written_on_one_volume(evaluator: Evaluator,
                                                                 short: Path) -> None:
    """Each index's container command in a pod of its own (its own HOME), the shared volume
    and the questions' ConfigMap as folders; then the closing Job's command."""
    needs_shard()
    docs = k8s(SHARDS_JOB)
    [job] = [d for d in docs if d["kind"] == "Job"]
    [close] = k8s(CLOSE_JOB)
    volume, questions = evaluator.root / "volume", evaluator.root / "configmap"
    volume.mkdir()
    questions.mkdir()
    (questions / "questions.jsonl").write_text(evaluator.questions().read_text())
    evaluator.judge(met=True)

    def script(one: dict[str, Any]) -> str:
        mounts = {m["name"]: m["mountPath"] for m in container(one)["volumeMounts"]}
        text = str(container(one)["args"][0])
        text = text.replace(mounts["logs"] + "/", f"{volume}/")
        return text.replace(mounts["questions"] + "/", f"{questions}/")

    assert container(job)["command"] == ["/bin/sh", "-c"]
    for index in range(job["spec"]["completions"]):
        work, env = machine(evaluator, short, set(credentials_of(container(job)["env"])))
        env["JOB_COMPLETION_INDEX"] = str(index)
        done = subprocess.run(["/bin/sh", "-c", script(job)], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # A pod's record of its own runs is on the volume, one per shard that ran anything (with
    # two questions, a shard may have no task), so a pod started again resumes them.
    states = {p.name for p in (volume / "state").iterdir()}
    assert states
    assert states <= {f"shard-{i}" for i in range(job["spec"]["completions"])}

    work, env = machine(evaluator, short, set(credentials_of(container(close)["env"])))
    _, options = parsed(eval_lines(script(close))[0])
    before = starts(evaluator)
    done = subprocess.run(["/bin/sh", "-c", script(close)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    closed(evaluator, Path(options["--log-dir"][0]), options["--config"], before, done)
