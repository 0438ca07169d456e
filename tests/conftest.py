from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from council.trust import MARKERS, agent_above, ancestry

HERE = Path(__file__).parent
FAKES_BIN = HERE / "fakes" / "bin"
REAL_HOME = Path.home()
# What this test session runs under, when an agent CLI started it: a `council trust` or
# `council adopt` it starts as a process is then refused, rightly, so such a test skips.
UNDER_AN_AGENT = agent_above(ancestry(), {})


def pytest_report_header() -> str:
    """Where the realcli tests will find the real CLIs (their versions are reported at the
    end, once asked), or how to get them: a user sees why those tests ran or skipped."""
    from realcli.helpers import CLIS, ENABLE, cli_cache, locate

    found = locate(cli_cache(REAL_HOME) / "bin", os.environ.get("PATH", ""))
    if missing := [cli for cli in CLIS if cli not in found]:
        return f"real CLIs: {', '.join(missing)} not found, realcli tests skip: {ENABLE}"
    return "real CLIs: " + ", ".join(f"{cli} from {found[cli][1]}" for cli in CLIS)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (the test command's): one worker more than this machine's cores. A worker
    spends about a sixth of its time waiting, not computing (an agent's delay, a vendor's
    retry-after, a hang's time limit, a browser): a worker more keeps the cores busy through
    those waits (on 2 cores, the suite in 4 min 27 s with 3 workers, 5 min 13 s with 2).
    PYTEST_XDIST_AUTO_NUM_WORKERS, pytest-xdist's own setting, still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`--dist loadgroup`), the realcli tests are one group: they run one
    at a time on one worker, as they were written to, beside the rest on the others."""
    for item in items:
        if item.get_closest_marker("realcli"):
            item.add_marker(pytest.mark.xdist_group("realcli"))


# The closing "real CLIs used" lines the pytest-xdist workers handed back.
WORKERS_CLIS: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A pytest-xdist worker ended: keep the CLIs its realcli tests ran on."""
    for line in getattr(node, "workeroutput", {}).get("real_clis", []):
        if line not in WORKERS_CLIS:
            WORKERS_CLIS.append(line)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Under pytest-xdist, name the CLI versions the realcli tests ran on (without it,
    tests/realcli/conftest.py does)."""
    for line in WORKERS_CLIS:
        terminalreporter.write_line(f"real CLIs used: {line}")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own research dir, config home and HOME; none touches the real one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COUNCIL_RESEARCH_DIR", str(tmp_path / "research"))
    monkeypatch.setenv("COUNCIL_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                "COUNCIL_FAKE_SCRIPT", "COUNCIL_FAKE_LOG", "CLAUDE_CODE_MAX_RETRIES",
                "COUNCIL_MAX_RUNS", "COUNCIL_EVAL_RUN"):
        monkeypatch.delenv(var, raising=False)
    # The person gate (trust.py) refuses under an agent CLI: a test stands for a person
    # wherever the suite runs (the gate's own tests give it their ancestry as data).
    monkeypatch.setattr("council.trust.ancestry", lambda: [])
    for var in MARKERS:
        monkeypatch.delenv(var, raising=False)
    # No test fetches a source unless it is about fetching (issue 44): council's own fetches
    # are off (evidence/fetch.py), and a test of them clears this and cites only loopback.
    monkeypatch.setenv("COUNCIL_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    watched = [REAL_HOME / ".config" / "council", REAL_HOME / "research"]
    before = [p.exists() for p in watched]
    yield tmp_path
    assert [p.exists() for p in watched] == before, "a test wrote to the real home"


@dataclass
class Council:
    """Runs the installed `council` as a user would, with the fake CLIs first on PATH."""

    root: Path
    env: dict[str, str]

    def script(self, mapping: dict[str, Any]) -> None:
        path = self.root / "fake-script.json"
        path.write_text(json.dumps(mapping))
        self.env["COUNCIL_FAKE_SCRIPT"] = str(path)

    def run(self, *args: str, input: bytes | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        needs_a_person(args)
        return subprocess.run(
            [sys.executable, "-m", "council", *args],
            env=self.env, cwd=self.root, input=input.decode() if input else None,
            capture_output=True, text=True, timeout=timeout,
        )

    @property
    def research(self) -> Path:
        return self.root / "research"

    def only_run(self) -> Path:
        runs = [p for p in self.research.iterdir() if p.is_dir() and not p.is_symlink()]
        assert len(runs) == 1, runs
        return runs[0]

    def fake_log(self) -> list[dict[str, Any]]:
        path = Path(self.env["COUNCIL_FAKE_LOG"])
        if not path.exists():
            return []
        text = path.read_text()
        complete = text[: text.rfind("\n") + 1]  # a fake may be writing the last line
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


def needs_a_person(args: tuple[str, ...]) -> None:
    """Skip a test that runs `council trust` or `council adopt` as a process when this
    session runs under an agent: the person gate refuses both there, whatever the test
    expects."""
    if UNDER_AN_AGENT and args[:1] in (("trust",), ("adopt",)):
        pytest.skip(f"this session runs under {UNDER_AN_AGENT}, and council refuses trust and "
                    "adopt there: run it from your own terminal")


@pytest.fixture
def council(isolated: Path) -> Council:
    env = dict(os.environ)
    env["PATH"] = f"{FAKES_BIN}{os.pathsep}{env['PATH']}"
    env["COUNCIL_FAKE_LOG"] = str(isolated / "fake-log.jsonl")
    # Logged in, as far as council's preflight can tell (the fakes need no key).
    env.update(ANTHROPIC_API_KEY="fake-key", OPENAI_API_KEY="fake-key",
               GEMINI_API_KEY="fake-key")
    return Council(isolated, env)


def wait_for(condition: Callable[[], bool], timeout: float = 30) -> None:
    """Poll a real condition (files written by the processes) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def write_trusted_config(folder: Path, text: str) -> Path:
    """Write a project's ./council.yaml and trust it, as its user would with `council
    trust` after reviewing it: an untrusted one is refused (trust.py). The record goes to the
    test's own config home (`isolated`), which the `council` fixture's processes share."""
    from council.config import trust_file

    path = folder / "council.yaml"
    path.write_text(text)
    trust_file(path)
    return path


def bind_first(run: str) -> Callable[[list[Any]], None]:
    """A change to a session's requests (council.store.sessions.update) that binds its
    first request to a run, as its Stop does."""
    from council.store.sessions import RUNNING

    def change(requests: list[Any]) -> None:
        requests[0].status, requests[0].run = RUNNING, run

    return change


def answer_on_a_terminal(council: Council, args: tuple[str, ...], question: bytes,
                         reply: bytes) -> tuple[int, str]:
    """Run `council ARGS` with a pseudo-terminal as its stdin, stdout and stderr, as a
    person would; answer `question` with `reply`. Its exit code and what it showed."""
    needs_a_person(args)
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "council", *args], stdin=slave,
                            stdout=slave, stderr=slave, env=council.env, cwd=council.root,
                            start_new_session=True)
    os.close(slave)
    shown = b""
    answered = False
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
            if not ready:
                break
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the program ended and closed the terminal
                break
            if not data:
                break
            shown += data
            if not answered and question in shown:
                os.write(master, reply)
                answered = True
        return proc.wait(timeout=30), shown.decode().replace("\r\n", "\n")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
