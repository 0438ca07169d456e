"""`pip install council`, as a user gets it: this checkout's wheel installed with its core
dependencies, and nothing else, into a fresh virtualenv, by pip from the package index pip is
configured with on this machine. There `council run` finishes a council, `council mcp`
answers an MCP client, Inspect AI is not importable, and `council eval` names the line that
installs it. A core dependency missing from pyproject.toml fails here: nothing else is on the
virtualenv's path (tests/test_lean.py hides Inspect from the test environment instead, which
still holds every package of `.[test]`).

The agents are the fake CLIs (tests/fakes/bin), run from an empty folder with a temporary
HOME. The virtualenv is made without pip, and this interpreter's pip installs into it
(`pip --python`), which saves the seconds ensurepip takes; pip's cache is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import yaml
from conftest import FAKES_BIN
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from realcli.test_wheel_hosts_real import build_wheel, run

from council.paths import RUN_ID

# One worker under pytest-xdist: the module's virtualenv (a fixture of the module) is built
# once, not once a worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("lean_install")]
# The test environment's own packages: none of them may reach the core install's processes.
OUTSIDE = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV",
           "COUNCIL_RESEARCH_DIR", "COUNCIL_CONFIG_HOME")


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the wheel and its core dependencies, no extra."""
    wheel = build_wheel(tmp_path_factory.mktemp("dist"))
    venv = tmp_path_factory.mktemp("core") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--no-compile", "--quiet", str(wheel)], cwd=venv.parent, timeout=600)
    return venv


@pytest.fixture
def user(core: Path, isolated: Path) -> tuple[dict[str, str], Path]:
    """A user's shell in an empty folder: the core install's `council` first on PATH, then the
    fake CLIs (logged in, as far as preflight can tell), a temporary HOME (`isolated`'s), and
    council's defaults for its research and config folders."""
    env = {k: v for k, v in os.environ.items() if k not in OUTSIDE}
    env["PATH"] = os.pathsep.join([str(core / "bin"), str(FAKES_BIN), os.environ["PATH"]])
    env.update(ANTHROPIC_API_KEY="fake-key", OPENAI_API_KEY="fake-key",
               GEMINI_API_KEY="fake-key", COUNCIL_FAKE_LOG=str(isolated / "fake-log.jsonl"))
    assert env["HOME"] == str(isolated / "home")
    assert shutil.which("council", path=env["PATH"]) == str(core / "bin" / "council")
    folder = isolated / "empty"
    folder.mkdir()
    return env, folder


def council(user: tuple[dict[str, str], Path], *args: str) -> subprocess.CompletedProcess[str]:
    env, folder = user
    return subprocess.run(["council", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, check=False)


def test_the_core_install_has_no_inspect(core: Path) -> None:
    python = str(core / "bin" / "python")
    probe = ("import importlib.util as u\n"
             "for name in ('inspect_ai', 'mcp'): print(name, u.find_spec(name) is not None)")
    found = run([python, "-c", probe], cwd=core.parent).stdout.splitlines()
    assert found == ["inspect_ai False", "mcp True"]  # a core dependency is, Inspect is not
    site = run([python, "-c", "import council; print(council.__file__)"], cwd=core.parent)
    assert Path(site.stdout.strip()).is_relative_to(core), site.stdout  # the wheel's, not ours


def test_the_core_install_runs_a_council(user: tuple[dict[str, str], Path]) -> None:
    proc = council(user, "run", "--test", "--agents", "claude,codex", "q")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    research = user[1] / "research"  # the default ./research
    runs = [path for path in research.iterdir() if RUN_ID.fullmatch(path.name)]
    assert len(runs) == 1, sorted(research.iterdir())
    run_dir = runs[0]
    state = yaml.safe_load((run_dir / "state.yaml").read_text())
    assert state["phase"] == "done"
    assert set(state["agents"]) == {"claude", "codex"}
    final = (run_dir / "final-report.md").read_text()
    assert "2 of 2 agents contributed (claude, codex)" in final, final


def test_the_core_install_serves_mcp(user: tuple[dict[str, str], Path]) -> None:
    env, folder = user
    errors = folder.parent / "mcp-stderr.log"

    async def ask() -> tuple[str, list[str]]:
        params = StdioServerParameters(command="council", args=["mcp"], env=env, cwd=folder)
        with anyio.fail_after(60), errors.open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                hello = await session.initialize()
                tools = (await session.list_tools()).tools
        return hello.server_info.name, sorted(tool.name for tool in tools)

    name, tools = anyio.run(ask)
    assert name == "council"
    assert {"start_research", "research_status"} <= set(tools), tools
    assert "Traceback" not in errors.read_text()


def test_eval_in_the_core_install_names_its_install_line(
        user: tuple[dict[str, str], Path]) -> None:
    line = "pip install 'council[eval]'"
    proc = council(user, "eval", "sample", "--config", "single:claude", "--judge",
                   "cli:claude", "--log-dir", "evals")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines() == [
        "council: error: council eval needs Inspect AI (the [eval] extra), which is not "
        f"installed: {line}"]
    assert not (user[1] / "evals").exists()
    helped = council(user, "eval", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--judge" in helped.stdout
    assert "pip install 'council[eval]'" in " ".join(helped.stdout.split())
