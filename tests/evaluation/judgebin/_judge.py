"""A scripted judge for council eval's tests: the answers a model judge would give, read from
the prompt council's scorers send (judging.py), and, as a fake CLI, the output a headless
claude, codex or gemini writes. Stdlib only.

Script (`COUNCIL_FAKE_JUDGE`, a JSON file; all keys optional):

    {"prefer": "codex",      # a report containing this text meets every criterion ...
     "met": false,           # ... any other report meets none (true: every report meets all)
     "verdict": "supported", # the verdict given to every citation
     "fail": false,          # answer with the CLI's own error (exit 1) instead
     "by_cli": {"codex": {"met": true}}}  # settings of one CLI's judge over the rest

Each judgement is appended to `COUNCIL_FAKE_JUDGE_LOG` (one JSON line: cli, kind, pid)."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

FAKES_BIN = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))), "fakes", "bin")
ITEM = re.compile(r"^(c\d+|p\d+): ", re.M)


def script() -> dict[str, Any]:
    path = os.environ.get("COUNCIL_FAKE_JUDGE")
    if not path:
        return {}
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return data if isinstance(data, dict) else {}


def kind(prompt: str) -> str:
    if '{"verdicts"' in prompt:
        return "citations"
    if "\n<reference>\n" in prompt:
        return "race"
    return "rubric"


def report_of(prompt: str) -> str:
    match = re.search(r"<report>\n(.*?)\n</report>", prompt, re.S)
    return match.group(1) if match else ""


def answer(prompt: str, settings: dict[str, Any]) -> str:
    """The JSON a judge following the prompt's instructions would give."""
    ids = ITEM.findall(prompt)
    which = kind(prompt)
    prefer = settings.get("prefer")
    good = prefer in report_of(prompt) if prefer else bool(settings.get("met", True))
    if which == "citations":
        verdict = settings.get("verdict", "supported")
        return json.dumps({"verdicts": [{"id": i, "verdict": verdict, "reason": "scripted"}
                                        for i in ids if i.startswith("p")]})
    if which == "race":
        return json.dumps({"scores": [{"id": i, "report": 8 if good else 2, "reference": 5}
                                      for i in ids if i.startswith("c")]})
    return "Here is my grading:\n```json\n" + json.dumps(
        {"criteria": [{"id": i, "met": good, "reason": "scripted"}
                      for i in ids if i.startswith("c")]}) + "\n```"


def _log(cli: str, which: str) -> None:
    path = os.environ.get("COUNCIL_FAKE_JUDGE_LOG")
    if path:
        line = json.dumps({"cli": cli, "kind": which, "pid": os.getpid(), "argv": sys.argv[1:]})
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(fd, (line + "\n").encode())
        os.close(fd)


def judging(cli: str, argv: list[str]) -> bool:
    """Whether council calls this CLI as its judge (else it is an agent: the real fake)."""
    # An agent is offered its phase's tools (--tools Read,…; web search on or off) and
    # council's research instructions; the judge no tool and no instructions of council's.
    if cli == "claude":
        return "--tools" in argv and argv[argv.index("--tools") + 1] == ""
    if cli == "codex":
        return "web_search=disabled" in argv and not any(
            "model_instructions_file" in arg for arg in argv)
    return "--approval-mode" not in argv and "--version" not in argv


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main(cli: str) -> None:
    argv = sys.argv[1:]
    if not judging(cli, argv):
        target = os.path.join(FAKES_BIN, cli)
        os.execv(target, [target, *argv])
    prompt = sys.stdin.read()
    settings = script()
    settings = {**settings, **(settings.get("by_cli") or {}).get(cli, {})}
    which = kind(prompt)
    _log(cli, which)
    if settings.get("delay"):
        time.sleep(float(settings["delay"]))
    failed = bool(settings.get("fail"))
    text = "" if failed else answer(prompt, settings)
    usage = {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4}
    if cli == "claude":
        emit({"type": "system", "subtype": "init", "session_id": "judge", "model": "fake"})
        emit({"type": "result", "subtype": "success", "is_error": failed,
              "result": "API Error: 500 scripted" if failed else text, "session_id": "judge",
              "total_cost_usd": 0.001, "usage": usage})
    elif cli == "codex":
        emit({"type": "thread.started", "thread_id": "judge"})
        emit({"type": "turn.started"})
        if failed:
            emit({"type": "turn.failed", "error": {"message": "scripted failure"}})
        else:
            emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                                     "text": text}})
            emit({"type": "turn.completed", "usage": usage})
    else:
        emit({"type": "init", "session_id": "judge", "model": "fake"})
        emit({"type": "message", "role": "user", "content": prompt[:100]})
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            emit({"type": "message", "role": "assistant", "content": part, "delta": True})
        emit({"type": "result", "status": "error" if failed else "success",
              **({"error": {"message": "scripted failure"}} if failed else {}),
              "stats": {"input_tokens": usage["input_tokens"],
                        "output_tokens": usage["output_tokens"]}})
    sys.exit(1 if failed else 0)
