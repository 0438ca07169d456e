"""Adding a CLI is its adapter module and its registration, as docs/internals.md ("Adding a
CLI") shows: this test does exactly that to a copy of the package (the adapter written as
council/agents/toy.py, its facts and its adapter registered, its pin added: four files, and
nothing else touched) and runs a council of two toy seats through research, refinement and
synthesis with the fake `toy` (tests/fakes/bin/toy), which speaks a protocol of its own.

The toy refuses another CLI's options, tools and environment, and another CLI's hook reply
ends it with a protocol error: a shared module that handed it any of those would fail the
run. Its login file's token, which it prints, must be redacted wherever council keeps it,
and the TOY.md its agent plants must be moved out of the way before the next phase."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import Council

PACKAGE = Path(__file__).parents[1] / "council"

# What clis.py gains (appended: the registry is a plain dict).
FACTS = '''

TOY = Cli(
    "toy", npm="toy-cli", login="set TOY_API_KEY",
    config_var="TOY_HOME", config_folder=".toy", login_file="session.json",
    keys=("TOY_API_KEY",), prefixes=("TOY_",), request_bytes=9_000, min_window=16_384,
    memory_files=("TOY.md",), nested_memory=("TOY.md",),
    hook=HookReply({"verdict": "more"}, "prompt", stop={"verdict": "enough"}),
)
REGISTRY[TOY.name] = TOY
'''
# What agents/__init__.py gains.
REGISTRATION = '''

def _toy() -> Adapter:
    from council.agents.toy import ToyAdapter

    return ToyAdapter()


ADAPTERS["toy"] = _toy
'''
ADAPTER = '''\
"""toy 1.0 (a made-up CLI): one process looping through council's hook, its brief in a file."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from council import clis
from council.agents.base import AgentJob, Invocation, Outcome, failure, json_events, turn_cap
from council.agents.failure import Failure, Kind, one_line
from council.agents.toolsets import Instructions
from council.evidence.ledger import Usage, estimate
from council.graph import EDIT, FILES, WEB

INSTRUCTIONS = Instructions(
    {FILES: ("scribble", "peek"), EDIT: ("scribble", "peek"),
     WEB: ("scribble", "peek", "lookup")},
    how_to_write="Write files with scribble and read them with peek.",
    how_to_search="Search the web and read pages with lookup.")


class ToyAdapter:
    cli = "toy"
    facts = clis.facts("toy")
    native_loop = True
    resumes_sessions = False
    instructions = INSTRUCTIONS
    private_home = False

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        argv = ["toy", "converse", "--workdir", str(job.cwd), "--brief", str(job.prompt_file),
                "--loop-hook", job.hook_command(self.cli, job.hook_home()),
                "--max-rounds", str(turn_cap(job.max_iterations)),
                "--tools", ",".join(INSTRUCTIONS.tools[job.tools]),
                "--system", str(job.system_prompt(INSTRUCTIONS)),
                *(["--model", job.seat.model] if job.seat.model else [])]
        return Invocation(tuple(argv), job.cwd)

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        raise NotImplementedError("toy loops in one process through its hook")

    def outcome(self, log: Path, returncode: int | None, start: int = 0) -> Outcome:
        session = error = None
        for event in json_events(log, start):
            if event.get("toy") == "hello":
                session = str(event.get("conversation"))
            elif event.get("toy") == "goodbye":
                error = None if event.get("ok") else str(event.get("why"))
        return Outcome(session, failure(self.cli, returncode, error))

    def lost_session(self, said: str) -> bool:
        return False  # it never resumes a session

    def classify(self, events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
                 now: datetime, tz: tzinfo | None = None) -> Failure | None:
        for event in events:
            if event.get("toy") == "goodbye" and not event.get("ok"):
                return Failure(Kind.CRASH, one_line(str(event.get("why"))))
        return None if returncode in (0, None) else Failure(Kind.CRASH, f"toy exited {returncode}")

    def answered_models(self, events: Iterable[dict[str, Any]]) -> list[str]:
        return []  # it does not say

    def own_retry(self, event: dict[str, Any]) -> bool:
        return False  # it never retries

    def fatal(self, event: dict[str, Any]) -> Failure | None:
        return None

    def usage_counter(self, model: str | None) -> ToyUsage:
        return ToyUsage(model)

    def requests(self, events: Iterable[dict[str, Any]]) -> int | None:
        return sum(1 for event in events if event.get("toy") == "round") or None

    def one_shot(self, folder: Path, prompt: Path, model: str | None = None) -> Invocation:
        argv = ["toy", "converse", "--workdir", str(folder), "--brief", str(prompt),
                *(["--model", model] if model else [])]
        return Invocation(tuple(argv), folder)

    def answer(self, log: Path) -> str:
        return ""  # toy says nothing but its rounds

    def own_variables(self, environ: Mapping[str, str]) -> set[str]:
        return set()

    def memory_files(self, folder: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (*self.facts.memory_files, *self.facts.config_entries), self.facts.nested_memory

    def login_elsewhere(self, config_dir: Path, env: Mapping[str, str]) -> str | None:
        return None

    def stranded_key(self, env: Mapping[str, str], home: Path) -> str | None:
        return None

    def fetches(self, event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
        return iter(())  # toy logs no page it read

    def doctor_notes(self) -> list[str]:
        return []


class ToyUsage:
    def __init__(self, model: str | None) -> None:
        self.model, self.tokens = model, (0, 0)

    def add(self, event: dict[str, Any]) -> None:
        if event.get("toy") == "spent":
            self.tokens = (self.tokens[0] + int(event.get("prompt_tokens") or 0),
                           self.tokens[1] + int(event.get("completion_tokens") or 0))

    def total(self) -> Usage:
        return estimate("toy", self.model, self.tokens[0], self.tokens[1])
'''
SECRET = "toy-login-7Qx2Lm9Rv4Tz8Kp3"
CONFIG = "synthesizer: toy-a\nagents:\n  toy-a: {cli: toy}\n  toy-b: {cli: toy}\n"


def with_a_toy(root: Path) -> Path:
    """A copy of the package with the toy CLI added; the folder to put on the path."""
    copy = root / "pkg" / "council"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "agents" / "toy.py").write_text(ADAPTER, encoding="utf-8")
    for name, text in (("clis.py", FACTS), ("agents/__init__.py", REGISTRATION)):
        with (copy / name).open("a", encoding="utf-8") as handle:
            handle.write(text)
    pins = json.loads((copy / "tested_versions.json").read_text(encoding="utf-8"))
    pins["toy"] = {"npm": "toy-cli", "version": "1.0.0", "node": ">=20", "passed": ["1.0.0"]}
    (copy / "tested_versions.json").write_text(json.dumps(pins, indent=2), encoding="utf-8")
    return copy.parent


def changed_files(original: Path, copy: Path) -> list[str]:
    """The files of `copy` that are new or differ from `original`'s."""
    out = []
    for path in sorted(copy.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(copy)
            if not (original / rel).is_file() or not filecmp.cmp(path, original / rel, False):
                out.append(rel.as_posix())
    return out


def test_a_toy_cli_is_its_adapter_and_its_registration(council: Council) -> None:
    pkg = with_a_toy(council.root)
    assert changed_files(PACKAGE, pkg / "council") == [
        "agents/__init__.py", "agents/toy.py", "clis.py", "tested_versions.json"]
    env = {**council.env, "PYTHONPATH": str(pkg), "TOY_API_KEY": "toy-key-0123456789"}
    login = Path(env["HOME"]) / ".toy" / "session.json"
    login.parent.mkdir()
    login.write_text(json.dumps({"access_token": SECRET, "expires": 1}))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "council", *args], env=env,
                              cwd=council.root, capture_output=True, text=True, timeout=180)

    (council.root / "toy.yaml").write_text(CONFIG)
    proc = cli("run", "--test", "--config", "toy.yaml", "What limits battery life?")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "research → refinement → synthesis by toy-a" in proc.stdout
    run = council.only_run()
    state = yaml.safe_load((run / "state.yaml").read_text())
    assert state["phase"] == "done"
    for seat in ("toy-a", "toy-b"):
        phases = state["agents"][seat]["phases"]
        assert [phases[p]["status"] for p in ("research", "refinement")] == ["complete"] * 2
    assert state["agents"]["toy-a"]["phases"]["synthesis"]["status"] == "complete"
    assert "# toy report" in (run / "final-report.md").read_text()

    log = [e for e in council.fake_log() if e["cli"] == "toy"]
    starts = [e for e in log if e["event"] == "start"]
    assert len(starts) == 5  # each seat's research and refinement, and one synthesis
    # Its own environment: its key, none of the other vendors' (the toy exits 4 otherwise).
    assert all("TOY_API_KEY" in e["env_names"] for e in starts)
    # Its own hook reply: a continuation, then a stop, each in its own words.
    replies = [json.loads(e["stdout"]) for e in log if e["event"] == "hook"]
    assert {"verdict": "more", "prompt": replies[0]["prompt"]} in replies
    assert {"verdict": "enough"} in replies
    assert [e["code"] for e in log if e["event"] == "exit"] == [0] * 5
    # Its system prompt names its own tools.
    system = next(run.rglob("toy-a-research-system.md")).read_text()
    assert "scribble, peek, lookup" in system
    # The TOY.md its agent planted in research was moved out before refinement loaded it.
    assert not [e for e in log if e["event"] == "memory"]
    assert list((run / "loops" / "quarantine").glob("*TOY.md"))
    # Its login file's token, which it printed, is redacted wherever council kept it.
    kept = [p for p in run.rglob("*") if p.is_file() and SECRET in p.read_text(errors="ignore")]
    assert kept == []
    assert "REDACTED:toy-login" in (run / "logs" / "toy-a-research.jsonl").read_text()
