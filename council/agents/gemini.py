"""Gemini CLI: one process looping through an AfterAgent hook in the seat's workspace
`.gemini/settings.json`. The workspace must be trusted or the hook is silently ignored."""

from __future__ import annotations

import json
from pathlib import Path

from council.agents.base import (
    AgentJob,
    Invocation,
    Outcome,
    failure,
    json_events,
    model_args,
)
from council.ledger import Usage, estimate

# `-o json/stream-json` exit with the HTTP status modulo 256.
HTTP_EXIT_CODES = {244: "server error (HTTP 500)", 173: "rate limited (HTTP 429)",
                   144: "bad request (HTTP 400)", 145: "unauthorised (HTTP 401)",
                   147: "forbidden (HTTP 403)", 41: "no valid authentication configured",
                   55: "workspace not trusted", 42: "invalid session to resume",
                   53: "turn limit exceeded"}


class GeminiAdapter:
    cli = "gemini"
    native_loop = True
    # `--resume` of a session that used tools re-sends each function response twice, which
    # the API rejects (400); an interrupted gemini starts a fresh session on its partial report.
    resumes_sessions = False

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        settings_dir = job.cwd / ".gemini"
        settings_dir.mkdir(exist_ok=True)
        settings = {
            # The default 10 attempts with backoff turn a dead or rate-limiting endpoint
            # into ~5 minutes of silence per request.
            "general": {"maxAttempts": 3},
            "hooks": {
                "AfterAgent": [
                    {"matcher": "*",
                     "hooks": [{"name": "council-loop", "type": "command",
                                "command": job.hook_command(self.cli), "timeout": 120000}]}
                ]
            }
        }
        (settings_dir / "settings.json").write_text(json.dumps(settings, indent=2),
                                                    encoding="utf-8")
        argv = [
            "gemini",
            *model_args("-m", job.seat),
            # auto_edit offers write_file and replace but no shell.
            "--approval-mode", "auto_edit",
            "-o", "stream-json",
            *job.seat.extra_args,
        ]
        env = {
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            # One process instead of a relaunched child whose parent ignores SIGTERM.
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        return Invocation(tuple(argv), job.cwd, env, stdin_file=job.prompt_file)

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        raise NotImplementedError("gemini loops in one process through its AfterAgent hook")

    def outcome(self, log: Path, returncode: int | None, start: int = 0) -> Outcome:
        session_id = error = None
        for event in json_events(log, start):
            if event.get("type") == "init" and event.get("session_id"):
                session_id = str(event["session_id"])
            if event.get("type") == "result":
                if event.get("status") == "error":
                    err = event.get("error") or {}
                    error = str(err.get("message") if isinstance(err, dict) else err)
                else:
                    error = None
        error = failure(self.cli, returncode, error, HTTP_EXIT_CODES)
        return Outcome(session_id, error)

    def usage(self, log: Path, model: str | None) -> Usage:
        """The `result` event's stats, once per process (gemini reports nothing before)."""
        total = Usage()
        for event in json_events(log):
            if event.get("type") == "result" and isinstance(event.get("stats"), dict):
                stats = event["stats"]
                tokens_in = stats.get("input_tokens") or stats.get("input") or 0
                tokens_out = stats.get("output_tokens") or 0
                total = total + estimate(self.cli, model, int(tokens_in), int(tokens_out))
        return total
