"""The person gate (trust.py): `council trust` and `council adopt` are answered by a person,
never by a model. The decision is a function of the process's ancestry (as data here), its
environment and its own command line; the real process tree is read by `trust.ancestry`."""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from council import trust
from council.config import trust_file
from council.errors import UsageError
from council.hosts import mcptools
from council.run.recovery import adopt
from council.runoptions import RunOptions, Seat
from council.store import provenance
from council.store.state import RunState, create_state
from council.store.workspace import Workspace
from council.trust import Ancestor, agent_above, agent_of, council_command, person_answers

REAL_ANCESTRY = trust.ancestry  # before the autouse fixture stands a person in for it

SHELL = Ancestor(500, "bash", "/usr/bin/bash", ("bash", "-c", "council trust --yes x"))
TERMINAL = [Ancestor(300, "bash", "/usr/bin/bash", ("-bash",)),
            Ancestor(200, "sshd", "/usr/sbin/sshd", ("sshd: me@pts/0",)),
            Ancestor(1, "systemd", "/usr/lib/systemd/systemd", ("/sbin/init",))]
CRON = [Ancestor(400, "sh", "/usr/bin/dash", ("/bin/sh", "-c", "council trust --yes x")),
        Ancestor(90, "cron", "/usr/sbin/cron", ("/usr/sbin/cron", "-f")),
        Ancestor(1, "systemd")]
# As seen from each CLI's shell tool (claude 2.1.332, codex 0.171, gemini 0.61).
CLAUDE = Ancestor(28606, "claude",
                  "/c/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                  ("claude", "-p", "Do it."))
CODEX = Ancestor(29220, "codex",
                 "/c/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/"
                 "bin/codex", ("/c/vendor/bin/codex", "exec", "--skip-git-repo-check"))
CODEX_LAUNCHER = Ancestor(29148, "node", "/usr/bin/node", ("node", "/c/bin/codex", "exec"))
GEMINI = Ancestor(30018, "node", "/usr/bin/node",
                  ("/usr/bin/node", "--max-old-space-size=12052", "/c/bin/gemini"))
GEMINI_LAUNCHER = Ancestor(29687, "node", "/usr/bin/node", ("node", "/c/bin/gemini", "-p"))
NPX_GEMINI = Ancestor(7, "node", "/usr/bin/node",
                      ("node", "/h/.npm/_npx/1/node_modules/@google/gemini-cli/dist/index.js"))
SUPERVISOR = Ancestor(700, "python3.11", "/usr/bin/python3.11",
                      ("/v/bin/python", "-I", "/v/lib/council/__main__.py", "resume", "2026"))
MCP_SERVER = Ancestor(800, "council", "/usr/bin/python3.11",
                      ("/v/bin/python", "/v/bin/council", "mcp"))


@pytest.mark.parametrize(("chain", "agent"), [
    ([SHELL, CLAUDE, *TERMINAL], "claude (pid 28606)"),
    ([SHELL, CODEX, CODEX_LAUNCHER, *TERMINAL], "codex (pid 29220)"),
    ([SHELL, SHELL, GEMINI, GEMINI_LAUNCHER, *TERMINAL], "gemini (pid 30018)"),
    ([SHELL, NPX_GEMINI, *TERMINAL], "gemini (pid 7)"),
    # `script -qc 'council trust' /dev/null` gives a terminal, and a parent: the model's
    ([Ancestor(600, "script", "/usr/bin/script", ("script", "-qc", "council trust")), SHELL,
      CLAUDE, *TERMINAL], "claude (pid 28606)"),
    # a seat's shell, under the run's supervisor; the MCP server's children
    ([SHELL, SUPERVISOR, *TERMINAL], "council (pid 700)"),
    ([SHELL, MCP_SERVER, CLAUDE, *TERMINAL], "council (pid 800)"),
])
def test_an_agent_anywhere_above_is_found(chain: list[Ancestor], agent: str) -> None:
    assert agent_above(chain, {}) == agent
    assert not person_answers(True, True, agent_above(chain, {}))


@pytest.mark.parametrize("chain", [TERMINAL, CRON, [SHELL, *TERMINAL], []])
def test_a_person_or_their_own_script_is_not_an_agent(chain: list[Ancestor]) -> None:
    assert agent_above(chain, {"HOME": "/h", "CODEX_HOME": "/h/.codex"}) is None


def test_the_terminal_decides_only_when_no_agent_is_above() -> None:
    assert person_answers(False, True, None)  # a person at a terminal is asked
    assert person_answers(True, False, None)  # the user's own script (cron)
    assert not person_answers(False, False, None)  # nobody to ask
    assert not person_answers(True, False, "claude (pid 1)")
    assert not person_answers(False, True, "codex (pid 1)")


@pytest.mark.parametrize(("env", "agent"), [
    ({"CLAUDECODE": "1"}, "claude (CLAUDECODE is set)"),
    ({"CODEX_THREAD_ID": "019a"}, "codex (CODEX_THREAD_ID is set)"),
    ({"GEMINI_CLI": "1"}, "gemini (GEMINI_CLI is set)"),
])
def test_an_agent_clis_mark_counts_when_the_ancestry_was_cut(env: dict[str, str],
                                                           agent: str) -> None:
    """A double fork leaves a process under init; what its CLI put in its environment
    still tells, unless the model unset it (docs/containment.md says so)."""
    assert agent_above([Ancestor(1, "systemd")], env) == agent


def test_councils_own_hook_and_mcp_server_are_never_a_person() -> None:
    for argv in (["/v/bin/council", "mcp"], ["/v/council/__main__.py", "hook", "stop"],
                 ["/v/bin/python", "-m", "council", "mcp"]):
        assert agent_above(TERMINAL, {}, argv) is not None, argv
    for argv in (["/v/bin/council", "trust", "--yes"], ["/v/bin/pytest", "-q"], []):
        assert agent_above(TERMINAL, {}, argv) is None, argv


def test_council_is_known_by_every_way_it_is_started() -> None:
    assert council_command(("council", "trust", "--yes")) == "trust"
    assert council_command(("/v/bin/python", "/v/bin/council", "mcp")) == "mcp"
    assert council_command(("python3", "-m", "council", "run", "q")) == "run"
    assert council_command(("/p", "-I", "/x/council/__main__.py", "hook", "claude")) == "hook"
    assert council_command(("council",)) == ""
    for argv in (("python3", "-m", "pytest"), ("grep", "council", "f"), ("vim", "council"),
                 ("/x/council-tools/run",)):
        assert council_command(argv) is None, argv
    assert agent_of(Ancestor(1, "vim", "/usr/bin/vim", ("vim", "council.yaml"))) is None


def test_the_real_ancestry_is_this_processs_parents() -> None:
    chain = REAL_ANCESTRY()
    assert chain[0].pid == os.getppid()
    assert chain[0].argv == tuple(psutil.Process(os.getppid()).cmdline())
    pids = [p.pid for p in chain]
    assert len(pids) == len(set(pids))


def test_a_process_started_by_a_claude_named_program_is_refused(tmp_path: Path) -> None:
    """The I/O edge, end to end: a parent whose name is `claude` (as the real binary's is)
    runs `council trust --yes`, which refuses, naming it, and records nothing. (The real
    CLIs: tests/realcli/test_person_gate_real.py.)"""
    (tmp_path / "council.yaml").write_text("synthesizer: a\nagents:\n  a: {cli: claude}\n")
    (tmp_path / "claude").symlink_to("/bin/sh")  # a shell that is called claude
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    line = f"{shlex.quote(sys.executable)} -m council trust --yes; exit $?"
    proc = subprocess.run(["claude", "-c", line], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("council: error: council trust asks a person: ")
    assert "(this runs under " in proc.stderr
    assert "--yes" not in proc.stderr
    assert not trust.store_file().exists()


def test_no_record_is_written_under_an_agent(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """trust.record and recovery.adopt ask again, whoever calls them (a hook, the MCP server,
    code yet to come)."""
    (tmp_path / "council.yaml").write_text("synthesizer: a\nagents:\n  a: {cli: claude}\n")
    root = tmp_path / "research" / "20261122-031441-88dba5"
    root.mkdir(parents=True)
    create_state(root, RunState(id=root.name, topic="t", created_at="x", phase="research",
                                options=RunOptions(seats=(Seat("codex", "codex"),))))
    monkeypatch.setattr(trust, "ancestry", lambda: [SHELL, CODEX, *TERMINAL])
    with pytest.raises(UsageError, match=r"^only a person may do this, in a terminal of their "
                                         r"own; this runs under codex \(pid 29220\): nothing "
                                         r"was trusted$"):
        trust_file(tmp_path / "council.yaml")
    assert not trust.store_file().exists()
    with pytest.raises(UsageError, match=r"under codex \(pid 29220\): nothing was adopted$"):
        adopt(Workspace(root))
    assert not provenance.is_own(root)
    monkeypatch.setattr(trust, "ancestry", lambda: TERMINAL)
    monkeypatch.setattr(sys, "argv", ["/v/bin/council", "mcp"])
    with pytest.raises(UsageError, match=r"under council mcp: nothing was trusted$"):
        trust_file(tmp_path / "council.yaml")


def test_the_refusal_names_the_agent_and_not_the_way_around(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--yes` and a terminal change nothing under an agent; the line says what was found
    (for a person who typed it inside an agent's session) and never names `--yes`."""
    monkeypatch.setattr(trust, "ancestry", lambda: [SHELL, CLAUDE, *TERMINAL])
    for yes in (True, False):
        with pytest.raises(UsageError) as refused:
            trust.ask_a_person(yes, "council adopt asks a person: nothing was adopted")
        assert str(refused.value) == ("council adopt asks a person: nothing was adopted (this "
                                      "runs under claude (pid 28606), and an agent cannot "
                                      "answer for you)")
    monkeypatch.setattr(trust, "ancestry", lambda: TERMINAL)
    trust.ask_a_person(True, "unused")  # the user's own script
    with pytest.raises(UsageError, match=r"^no terminal$"):
        trust.ask_a_person(False, "no terminal")  # pytest's stdin is no terminal


# ------------------------------------------------------------ no model's path to a record

RECORD_WRITERS = {"council.trust": {"record"}, "council.config": {"trust_file", "trust_reviewed"},
                  "council.run.recovery": {"adopt"}}


def test_no_host_module_reaches_a_trust_or_adoption_record() -> None:
    """The hooks and the MCP server (council/hosts/) import no function that writes a trust
    or adoption record, so no tool and no hook can lead to one."""
    found = []
    for path in sorted((Path(trust.__file__).parent / "hosts").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in RECORD_WRITERS:
                found += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                          if a.name in RECORD_WRITERS[node.module]]
            elif isinstance(node, ast.Attribute) and node.attr in {"trust_file", "adopt",
                                                                   "trust_reviewed"}:
                found.append(f"{path.name}: .{node.attr}")
    assert found == []


def test_the_mcp_tools_offer_no_trust_and_no_adoption() -> None:
    names = [tool.name for tool in mcptools.TOOLS]
    assert names  # the tools are there to look at
    assert not [n for n in names if "trust" in n or "adopt" in n], names
