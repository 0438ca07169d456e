"""Lean by default: `pip install council` runs councils and every host without Inspect AI,
which is the `[eval]` extra. Each process here starts with Inspect unimportable (a
sitecustomize on PYTHONPATH that refuses `inspect_ai` and logs every attempt), as in a core
install, so a module that reaches for it fails here rather than on a user's machine.
`council run` in the terminal supervises its run in its own process, so its run is checked
whole; processes started with `python -I` are checked by the import walk."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Council
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "council"

NO_INSPECT = '''\
"""Inspect AI uninstalled, as far as this process can tell; each attempt is logged."""
import os
import sys
from importlib.abc import MetaPathFinder


class NoInspect(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] != "inspect_ai":
            return None
        with open(os.environ["COUNCIL_TEST_INSPECT_LOG"], "a") as log:
            log.write(name + "\\n")
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NoInspect())
'''


@pytest.fixture
def lean(council: Council, tmp_path: Path) -> Path:
    """council's processes, and python children that inherit the environment, without
    Inspect. The returned log lists every import of it they tried."""
    shim = tmp_path / "no-inspect"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(NO_INSPECT)
    log = tmp_path / "inspect-imports.log"
    log.touch()
    council.env["PYTHONPATH"] = str(shim)
    council.env["COUNCIL_TEST_INSPECT_LOG"] = str(log)
    return log


def test_the_core_install_has_no_inspect_and_the_test_install_has_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = [dep.lower() for dep in project["dependencies"]]
    assert not [dep for dep in named if dep.startswith("inspect")]
    extras = project["optional-dependencies"]
    assert [dep for dep in extras["eval"] if dep.startswith("inspect-ai")]
    assert "council[eval]" in extras["test"]  # CI's ".[test]" keeps testing the eval


def test_only_the_eval_command_imports_the_eval() -> None:
    """Read from the source, lazy imports included: outside council/evaluation, only the cli
    imports it (clieval.py), and only inside `council eval` and its check before parsing
    (the inspect entry point is in the package). clieval.py is `council eval`'s command line,
    one of the three click modules with cli.py and cliparts.py (tests/test_layers.py): kept
    apart from cli.py, which every command loads, so the eval is reached from one place, lazily."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "evaluation"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [node for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in ast.walk(tree):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n.partition(".")[0] == "inspect_ai" or n.startswith("council.evaluation")
                   or n == "council.evaluation" for n in names):
                inside = [f.name for f in functions if node in ast.walk(f)]
                found.setdefault(str(path.relative_to(ROOT)), set()).update(inside or ["<module>"])
    # eval_cmd, and _EvalCommand's check before parsing
    assert found == {"council/clieval.py": {"eval_cmd", "parse_args"}}


def test_no_council_module_outside_the_eval_imports_inspect(council: Council,
                                                            lean: Path) -> None:
    """Every module `council run`, `council mcp`, the hosts' hooks, the seats' hooks and the
    views are made of imports without Inspect, and none of them tries to."""
    code = (
        "import importlib, json, pkgutil, sys, council\n"
        "names = sorted(m.name for m in pkgutil.walk_packages(council.__path__, 'council.')\n"
        "               if not m.name.startswith('council.evaluation.'))\n"
        "failed = {}\n"
        "for name in names:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed[name] = repr(exc)\n"
        "print(json.dumps({'names': names, 'failed': failed,\n"
        "                  'inspect': sorted(m for m in sys.modules if 'inspect_ai' in m)}))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=council.env, cwd=council.root,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert {"council.cli", "council.__main__", "council.hosts.mcpserver", "council.hosts.flow",
            "council.seat.hook", "council.run.supervisor", "council.views.watch",
            "council.readiness.doctor", "council.evaluation"} <= set(result["names"])
    assert (result["failed"], result["inspect"]) == ({}, [])
    assert lean.read_text() == ""


def test_a_council_runs_and_is_shown_without_inspect(council: Council, lean: Path) -> None:
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--agents", "claude", "What limits battery life?")
    assert proc.returncode == 0, proc.stderr
    run_id = council.only_run().name
    for args in (("status", run_id), ("status", "--json", run_id), ("list",), ("doctor",),
                 ("report", run_id), ("--help",)):
        proc = council.run(*args)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.returncode == 0, (args, proc.stderr)
    assert lean.read_text() == ""


def test_the_mcp_server_runs_a_council_without_inspect(council: Council, lean: Path) -> None:
    """`council mcp` starts a council and answers its status to the end. (The detached
    supervisor and the agents' hooks start with `python -I`, which keeps the shim's PYTHONPATH
    out: their modules are among those the import walk above checks.)"""
    council.script({"*": {"finish_after": 1}})

    async def research() -> tuple[list[str], dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "council", "mcp"],
                                       env=council.env, cwd=council.root)
        with (council.root / "server-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                tools = sorted(tool.name for tool in (await session.list_tools()).tools)
                started = await session.call_tool(
                    "start_research",
                    {"topic": "What limits battery life?", "test": True, "agents": ["claude"]})
                assert not started.is_error, started.content
                assert isinstance(started.structured_content, dict)
                run_id = started.structured_content["run_id"]
                for _ in range(10):
                    status = await session.call_tool("research_status",
                                                     {"run_id": run_id, "wait": 20})
                    assert isinstance(status.structured_content, dict), status.content
                    if status.structured_content["ended"]:
                        return tools, status.structured_content
        raise AssertionError(f"run {run_id} did not end")

    tools, status = anyio.run(research)
    assert "start_research" in tools
    assert status["phase"] == "done"
    assert "Traceback" not in (council.root / "server-stderr.log").read_text()
    assert lean.read_text() == ""


def test_eval_without_inspect_names_the_one_command_that_installs_it(council: Council,
                                                                     lean: Path) -> None:
    proc = council.run("eval", "sample", "--config", "single:claude", "--judge", "cli:claude",
                       "--log-dir", "evals")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == ("council: error: council eval needs Inspect AI (the [eval] extra), "
                           "which is not installed: pip install 'council[eval]'\n")
    assert lean.read_text().split()[0] == "inspect_ai"  # it did try, and was refused
    assert not (council.root / "evals").exists()  # nothing was started
    # Said first: not "Missing option '--judge'" to someone who cannot run it anyway.
    bare = council.run("eval", "sample")
    assert (bare.returncode, bare.stderr) == (1, proc.stderr)
    assert "--judge" in council.run("eval", "--help").stdout  # its options still shown
