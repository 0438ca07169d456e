"""`council eval` as a user runs it: the fake agent CLIs on PATH, behind a scripted judge that
answers when council asks a CLI to judge (judgebin/_judge.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import Council

JUDGE_BIN = Path(__file__).parent / "judgebin"
TWO_QUESTIONS: list[dict[str, Any]] = [
    {"id": "tides", "question": "How do tides work?",
     "criteria": ["Explains the Moon's role", {"criterion": "Names spring tides", "weight": 2}]},
    {"id": "q2", "question": "Why is the sky blue?", "criteria": ["Names Rayleigh scattering"]},
]


@dataclass
class Evaluator:
    council: Council

    @property
    def root(self) -> Path:
        return self.council.root

    @property
    def env(self) -> dict[str, str]:
        return self.council.env

    def questions(self, items: list[dict[str, Any]] | None = None,
                  name: str = "questions.jsonl") -> Path:
        path = self.root / name
        path.write_text("".join(json.dumps(q) + "\n" for q in items or TWO_QUESTIONS))
        return path

    def drb(self, name: str = "drb") -> Path:
        """A DeepResearch Bench checkout of two tasks, as its repository lays them out: ids
        are numbers, one prompt ends in a space (the benchmark's own query.jsonl has one),
        one task has a reference report."""
        root = self.root / name
        query = root / "data" / "prompt_data" / "query.jsonl"
        reference = root / "data" / "test_data" / "cleaned_data" / "reference.jsonl"
        for path in (query, reference):
            path.parent.mkdir(parents=True)
        query.write_text(
            json.dumps({"id": 1, "topic": "Science", "language": "en",
                        "prompt": "How do tides work? "}) + "\n"
            + json.dumps({"id": 2, "topic": "Science", "language": "en",
                          "prompt": "Why is the sky blue?"}) + "\n")
        reference.write_text(json.dumps({"id": 1, "prompt": "How do tides work? ",
                                         "article": "The Moon and the Sun pull the sea."})
                             + "\n")
        return root

    def judge(self, **settings: Any) -> None:
        path = self.root / "judge-script.json"
        path.write_text(json.dumps(settings))
        self.env["COUNCIL_FAKE_JUDGE"] = str(path)

    def judgements(self) -> list[dict[str, Any]]:
        path = Path(self.env["COUNCIL_FAKE_JUDGE_LOG"])
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "council", "eval", *args]

    def run(self, *args: str, timeout: float = 110) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), env=self.env, cwd=self.root,
                              capture_output=True, text=True, timeout=timeout)

    def council_starts(self) -> list[dict[str, Any]]:
        """Every agent CLI the fakes saw start (a council run starts at least one)."""
        return [e for e in self.council.fake_log() if e["event"] == "start"]


@pytest.fixture
def evaluator(council: Council) -> Iterator[Evaluator]:
    council.env["PATH"] = f"{JUDGE_BIN}:{council.env['PATH']}"
    council.env["COUNCIL_FAKE_JUDGE_LOG"] = str(council.root / "judge-log.jsonl")
    # Inspect's worker mode binds a Unix socket under XDG_DATA_HOME: below a test's deep
    # temporary HOME (CI's PYTEST_DEBUG_TEMPROOT adds to it) that path passes AF_UNIX's limit.
    with tempfile.TemporaryDirectory(prefix="insp-", dir="/tmp") as short:
        council.env["XDG_DATA_HOME"] = short
        yield Evaluator(council)
