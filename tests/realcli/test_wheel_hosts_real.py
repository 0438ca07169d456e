"""A pip user's council, from its wheel: built from this checkout, installed (not editable)
into a fresh virtualenv in an empty folder, then `council setup HOST` for each host with the
real CLI, `council doctor`, and a council started from that host's session, offline against
the scripted model server. Nothing here points at the checkout: the hosts' hooks run the
wheel's `council`, and their plugin files are the wheel's council/hostfiles.

The virtualenv reads this interpreter's site-packages for council's dependencies (a .pth
line after its own, so the wheel's council comes first) and installs with --no-deps
--no-index; the wheel is built without build isolation when hatchling is importable here,
so the test needs no network then."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .helpers import RealClis, fingerprint
from .server import ScriptedServer
from .test_hosts_real import NO_EGRESS, check_report, finished_run

pytestmark = pytest.mark.realcli
REPO = Path(__file__).resolve().parents[2]
TOPIC = "Tides from a wheel?"


def run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def build_wheel(dist: Path) -> Path:
    """This checkout's wheel, built in `dist` (also the build's working folder, outside the
    checkout). Without build isolation when hatchling is importable here, so it needs no
    network then; otherwise pip fetches hatchling as pip is configured to."""
    offline = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", *offline, "-w", str(dist),
         str(REPO)], cwd=dist)
    (wheel,) = dist.glob("council-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv, in an empty folder, holding council from a wheel of this
    checkout."""
    empty = tmp_path_factory.mktemp("empty")
    wheel = build_wheel(tmp_path_factory.mktemp("dist"))
    env = empty / "venv"
    run([sys.executable, "-m", "venv", str(env)], cwd=empty)
    python = env / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    cwd=empty).stdout.strip())
    (site / "zz-council-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # --ignore-installed: the council of the interpreter running this test (a CI venv's, not
    # editable) is on the .pth path, and pip would take it for this install.
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
         "-q", str(wheel)],
        cwd=empty)
    where = run([str(python), "-c", "import council; print(council.__file__)"], cwd=empty)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout
    return env


def user_env(cli_env: dict[str, str], venv: Path) -> dict[str, str]:
    """The user's shell: the wheel's `council` first on PATH, the real CLIs after it, codex
    with plugins on as it comes (cli_env turns them off for council's agents)."""
    config = Path(cli_env["CODEX_HOME"]) / "config.toml"
    config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
    return {**cli_env, **NO_EGRESS,
            "PATH": f"{venv / 'bin'}{os.pathsep}{cli_env['PATH']}"}


def council(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["council", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, check=False)


def session(host: str, env: dict[str, str], project: Path) -> subprocess.CompletedProcess[str]:
    """The host's own session, with only what `council setup` installed: no --plugin-dir, no
    hook-trust bypass."""
    prompt = f"/council:deep-research --test {TOPIC}"
    argv = {"claude": ["claude", "-p", prompt, "--permission-mode", "acceptEdits",
                       "--output-format", "json"],
            "gemini": ["gemini", "-p", prompt, "--skip-trust", "-o", "json"],
            "codex": ["codex", "exec", "--skip-git-repo-check", "--json",
                      f"$council:deep-research --test {TOPIC}"]}[host]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True,
                          timeout=400, stdin=subprocess.DEVNULL, check=False)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("host", ["claude", "gemini", "codex"])
def test_a_wheel_install_sets_up_each_host_and_runs_a_council_from_it(
        host: str, venv: Path, cli_env: dict[str, str], real_clis: RealClis,
        server: ScriptedServer, tmp_path: Path) -> None:
    env = user_env(cli_env, venv)
    # the hooks run the first `council` on PATH: the wheel's
    assert shutil.which("council", path=env["PATH"]) == str(venv / "bin" / "council")
    hostfiles = next((venv / "lib").glob("python*/site-packages/council/hostfiles"))
    homes = [Path(env["HOME"]), Path(env["CODEX_HOME"]), Path(env["GEMINI_CLI_HOME"])]

    before = council(env, tmp_path, "doctor")
    (row,) = [x for x in before.stdout.splitlines() if x.startswith(f"{host}  ")][-1:]
    assert "ready" not in row, before.stdout
    assert f"{host}: run `council setup {host}`" in before.stdout
    assert "<your council checkout>" not in before.stdout

    first = council(env, tmp_path, "setup", host)
    assert first.returncode == 0, first.stdout + first.stderr
    said = first.stdout.splitlines()
    assert said[0] == {
        "claude": f"claude: installed plugin council@council from {hostfiles}",
        "gemini": f"gemini: linked extension council to {hostfiles / 'extensions' / 'gemini'}",
        "codex": f"codex: installed plugin council@council from {hostfiles}"}[host], said
    if host == "codex":
        assert said[1].startswith("codex: trusted council's hooks in "), said
    assert f"{host}: ready" in first.stdout, said

    unchanged = fingerprint(homes)
    again = council(env, tmp_path, "setup", host)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == f"{host}: already set up, nothing changed"
    assert fingerprint(homes) == unchanged  # no host command ran, no file was touched

    project = tmp_path / "project"
    project.mkdir()
    doctor = council(env, project, "doctor")
    (row,) = [x for x in doctor.stdout.splitlines() if x.startswith(f"{host}  ")][-1:]
    state = row.split(None, 1)[1]
    assert state.startswith({
        "claude": f"ready (plugin council@council 0.1.0 from {hostfiles})",
        "gemini": f"ready (extension linked to {hostfiles / 'extensions' / 'gemini'})",
        "codex": "ready (plugin installed, hooks trusted)"}[host]), doctor.stdout

    proc = session(host, env, project)
    where = f"{host}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, where
    run_dir, st = finished_run(project, where)
    if host == "claude":  # the session itself writes the synthesis
        assert st["synthesizer"] == "main-session", where
        assert "3 of 3 agents contributed" in (run_dir / "final-report.md").read_text()
    else:
        check_report(run_dir, st, TOPIC, where)
