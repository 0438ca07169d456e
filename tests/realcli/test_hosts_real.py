"""council started from inside Gemini CLI (its extension) and Codex (its plugin), with the real
host CLI as the session and the real agents, offline against the scripted model server.

Each host is set up once, the way the README tells a user to: `gemini extensions link` for
Gemini, and `codex plugin marketplace add` + `codex plugin add` for Codex, whose hooks run in
`codex exec` only with `--dangerously-bypass-hook-trust` (this test passes it, as a user
would; council never does)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from council.hosts.codex import install as codex

from .helpers import Run, Terminal, run_cli
from .server import ScriptedServer

pytestmark = pytest.mark.realcli
REPO = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("COUNCIL_HOST_RUNS") or 3)
# codex with plugins on asks its plugin hosts for updates at every start; a dead proxy keeps
# that traffic on this machine (the model server is reached directly).
NO_EGRESS = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
             "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """The conftest's server, logging request bodies: what the host session was told."""
    with ScriptedServer({}, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


def with_council(cli_env: dict[str, str]) -> dict[str, str]:
    """The hooks run the installed `council`: this interpreter's bin first on PATH."""
    return {**cli_env, **NO_EGRESS,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{cli_env['PATH']}"}


def finished_run(project: Path, where: str) -> tuple[Path, dict[str, Any]]:
    research = project / "research"
    assert research.is_dir(), f"no run started; {where}"
    runs = [p for p in research.iterdir() if p.name[0].isdigit()]
    assert len(runs) == 1, (runs, where)
    state: dict[str, Any] = yaml.safe_load((runs[0] / "state.yaml").read_text())
    assert state["phase"] == "done", (state.get("error"), where)
    return runs[0], state


def check_report(run: Path, state: dict[str, Any], topic: str, where: str) -> None:
    assert state["topic"] == topic, where
    assert state["synthesizer"] in ("claude", "codex", "gemini"), where  # council's own
    for seat in ("claude", "codex", "gemini"):
        assert (run / f"{seat}-refined.md").is_file(), (seat, where)
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text(), where
    assert (run / "report.html").is_file(), where


def host_requests(server: ScriptedServer, api: str) -> list[dict[str, Any]]:
    """The host session's own model requests (no report path: the agents' all have one)."""
    return [r for r in server.records(api) if not r.get("report_path")]


# ---------------------------------------------------------------- Gemini CLI


@pytest.fixture
def gemini_env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    env = with_council(cli_env)
    linked = run_cli(["gemini", "extensions", "link", str(REPO / "extensions" / "gemini"),
                      "--consent"], cwd=tmp_path, env=env, timeout=120)
    assert linked.returncode == 0, linked.describe()
    listed = run_cli(["gemini", "extensions", "list"], cwd=tmp_path, env=env, timeout=120)
    assert "council" in listed.stdout + listed.stderr, listed.describe()
    return env


def gemini_session(env: dict[str, str], project: Path, prompt: str) -> Run:
    return run_cli(["gemini", "-p", prompt, "--skip-trust", "-o", "json"], cwd=project,
                   env=env, timeout=300)


def test_deep_research_from_a_gemini_session(gemini_env: dict[str, str], server: ScriptedServer,
                                            tmp_path: Path) -> None:
    for n in range(1, RUNS + 1):
        project = tmp_path / f"project-{n}"
        project.mkdir()
        topic = f"Tides, run {n}?"
        proc = gemini_session(gemini_env, project, f"/council:deep-research --test {topic}")
        where = f"run {n} of {RUNS}: {proc.describe()}"
        assert proc.returncode == 0, where
        run, state = finished_run(project, where)
        check_report(run, state, topic, where)
        # The session was told where the report is, in its own next turn.
        told = [r for r in host_requests(server, "gemini")
                if str(run / "final-report.md") in json.dumps(r)]
        assert told, where


def test_a_plain_gemini_prompt_is_not_held_up(gemini_env: dict[str, str],
                                             server: ScriptedServer, tmp_path: Path) -> None:
    proc = gemini_session(gemini_env, tmp_path, "What is 2+2?")
    assert proc.returncode == 0, proc.describe()
    assert json.loads(proc.stdout)["response"].strip() == "OK."
    assert not (tmp_path / "research").exists()
    assert len(host_requests(server, "gemini")) >= 1


def test_a_bad_gemini_request_is_refused_without_asking_the_model(
        gemini_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = gemini_session(gemini_env, tmp_path, "/council:deep-research --agents nope q")
    assert proc.returncode == 0, proc.describe()
    assert "Research council not started" in proc.stdout + proc.stderr, proc.describe()
    assert "nope" in proc.stdout + proc.stderr
    assert [r for r in server.records("gemini") if "streamGenerateContent" in
            str(r.get("path"))] == []
    assert not list((tmp_path / "research").glob("2*"))


@pytest.mark.timeout(240)
def test_an_untrusted_gemini_folder_refuses_the_command_and_says_why(
        gemini_env: dict[str, str], server: ScriptedServer, tmp_path: Path,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Gemini 0.61 loads no extension command in a folder the user did not trust, but still
    runs the extension's hooks: the command arrives as typed and would reach the model as a
    plain prompt. (Headless, gemini itself stops first: exit 55, "not running in a trusted
    directory".) The link trusted the folder it ran in, so this project lies outside it."""
    project = tmp_path_factory.mktemp("untrusted")
    term = Terminal("gemini", ["gemini"], cwd=project, env=gemini_env)
    try:
        assert term.shows("Do you trust the files in this folder", 60), term.screen
        term.keys("Down", "Down")  # Trust folder, Trust parent folder, Don't trust
        assert term.shows(r"(?s)●\s*3\.\s*Don't trust", 10), term.screen
        term.keys("Enter")
        assert term.shows(r"Type your message", 60), term.screen
        # A "?" sent through tmux opened gemini's shortcut panel instead of being typed.
        term.type("/council:deep-research --test Tides at a terminal")
        assert term.shows(r"Research council not started: Gemini ran no extension command: "
                          r"this folder is\s+not trusted", 60), term.screen
    finally:
        term.close()
    assert not (project / "research").exists() or not list((project / "research").glob("2*"))
    asked = [r for r in host_requests(server, "gemini") if "streamGenerateContent" in
             str(r.get("path")) and "council:deep-research" in json.dumps(r.get("body"))]
    assert asked == [], "the command reached the model as a plain prompt"

    # doctor reads the trust gemini itself recorded: "Don't trust" here, the link's folder
    # trusted.
    def doctor_says(folder: Path) -> str:
        proc = run_cli([sys.executable, "-m", "council", "doctor"], cwd=folder,
                       env=gemini_env, timeout=120)
        (row,) = [line for line in proc.stdout.splitlines()
                  if line.startswith("gemini ") and "extension" in line]
        return row

    assert "this folder marked Don't trust" in doctor_says(project)
    assert doctor_says(tmp_path).rstrip().endswith(
        f"ready (extension linked to {REPO / 'extensions' / 'gemini'})")


# ---------------------------------------------------------------- Codex


@pytest.fixture
def codex_env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """Plugins on (council's agents still run with them off), the plugin installed from this
    checkout's marketplace."""
    env = with_council(cli_env)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
    for argv in (["codex", "plugin", "marketplace", "add", str(REPO)],
                 ["codex", "plugin", "add", "council@council"]):
        proc = run_cli(argv, cwd=tmp_path, env=env, timeout=120)
        assert proc.returncode == 0, proc.describe()
    return env


def codex_session(env: dict[str, str], project: Path, prompt: str) -> Run:
    return run_cli(["codex", "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
                    "--json", prompt], cwd=project, env=env, timeout=300)


def test_deep_research_from_a_codex_session(codex_env: dict[str, str], server: ScriptedServer,
                                           tmp_path: Path) -> None:
    for n in range(1, RUNS + 1):
        project = tmp_path / f"project-{n}"
        project.mkdir()
        topic = f"Tides, run {n}?"
        proc = codex_session(codex_env, project, f"$council:deep-research --test {topic}")
        where = f"run {n} of {RUNS}: {proc.describe()}"
        assert proc.returncode == 0, where
        run, state = finished_run(project, where)
        check_report(run, state, topic, where)
        told = [r for r in host_requests(server, "openai")
                if str(run / "final-report.md") in json.dumps(r)]
        assert told, where


def test_a_plain_codex_prompt_is_not_held_up(codex_env: dict[str, str], server: ScriptedServer,
                                            tmp_path: Path) -> None:
    proc = codex_session(codex_env, tmp_path, "What is 2+2?")
    assert proc.returncode == 0, proc.describe()
    messages = [e["item"]["text"] for e in proc.events()
                if e.get("type") == "item.completed" and e["item"].get("type") == "agent_message"]
    assert messages == ["OK."], proc.describe()
    assert not (tmp_path / "research").exists()


def test_doctor_reads_codex_hook_trust_as_codex_does(codex_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """`council doctor` says the hooks are not trusted; with the trust entries it computes
    (what trusting them in codex's TUI writes), codex runs them without the bypass flag, so
    its reading and codex's agree."""
    def doctor() -> str:
        proc = run_cli([sys.executable, "-m", "council", "doctor"], cwd=tmp_path,
                       env=codex_env, timeout=120)
        (line,) = [x for x in proc.stdout.splitlines() if x.startswith("codex  ")][-1:]
        return line.split(None, 1)[1]

    assert doctor() == "hooks not trusted"
    project = tmp_path / "project"
    project.mkdir()

    def session() -> Run:
        return run_cli(["codex", "exec", "--skip-git-repo-check", "--json",
                        "$council:deep-research --test Tides?"], cwd=project, env=codex_env,
                       timeout=300)

    skipped = session()  # untrusted: codex runs no hook, and says nothing of it
    assert skipped.returncode == 0, skipped.describe()
    assert not (project / "research").exists()
    home = Path(codex_env["CODEX_HOME"])
    (cache,) = (home / "plugins" / "cache" / "council" / "council").iterdir()
    hooks = json.loads((cache / "hooks" / "hooks.json").read_text())["hooks"]
    with (home / "config.toml").open("a") as config:
        for event, snake in codex.HOOK_EVENTS.items():
            identity = codex.hook_identity(event, hooks[event][0]["hooks"][0])
            config.write(f'\n[hooks.state."council@council:hooks/hooks.json:{snake}:0:0"]\n'
                         f'trusted_hash = "{identity}"\n'
                         f'trusted_content_hash = "{codex.bundle_hash(cache)}"\n')
    assert doctor() == "ready (plugin installed, hooks trusted)"
    proc = session()
    assert proc.returncode == 0, proc.describe()
    run, state = finished_run(project, proc.describe())
    check_report(run, state, "Tides?", proc.describe())
