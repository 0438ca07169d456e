"""Claude Code: `claude -p` looping through a Stop hook given with `--settings`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import council.agents.selfhosted as selfhosted
from council.agents.base import (
    AgentJob,
    Invocation,
    Outcome,
    failure,
    json_events,
    model_args,
    turn_cap,
)
from council.agents.environment import agent_env
from council.agents.mcp import claude_allowed, claude_config
from council.agents.toolsets import claude_args
from council.domains import Policy
from council.evidence.ledger import Usage, estimate
from council.store import agentfs

# Containment: `--permission-mode acceptEdits` lets Read/Write/Edit/Glob/Grep work inside the
# agent's cwd (its own folder) and refuses them everywhere else. Naming a file tool in the
# allow list would lift that limit for every path (a bare `Write` overrides acceptEdits' cwd
# rule: seen writing into the user's project and over state.yaml), so only the web tools are
# pre-approved. Research never needs a shell.
ALLOWED_TOOLS = "WebSearch,WebFetch"
DENIED_TOOLS = "Bash"


def permission_args(policy: Policy, servers: Sequence[str] = ()) -> list[str]:
    """`--allowedTools` and `--disallowedTools`, with the run's source policy as WebFetch
    domain rules: an allow list pre-approves WebFetch on its domains only (elsewhere the
    fetch needs an approval print mode cannot give: refused), a deny list refuses its
    domains whatever else allows them. WebSearch's permission rules name queries, not
    domains: its results are judged afterwards, in the ledger. `servers`: the allow rules of
    the seat's own MCP servers (mcp.claude_allowed)."""
    allow, deny = policy.claude_rules()
    allowed = ["WebSearch", *allow] if policy.allow else ALLOWED_TOOLS.split(",")
    allowed += servers
    return ["--allowedTools", ",".join(allowed),
            "--disallowedTools", ",".join([DENIED_TOOLS, *deny])]


class ClaudeAdapter:
    cli = "claude"
    native_loop = True
    resumes_sessions = True

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        # claude runs a hook with `/bin/sh -c` (seen), which reads no start-up file when not
        # interactive: the command's own HOME=… is all the hook needs.
        command = job.hook_command(self.cli, job.hook_home())
        settings = {
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 120}]}]
            }
        }
        # In council's own folder, not the agent's: an agent that can write its cwd could
        # otherwise rewrite the hook that loops it before its next phase or resume.
        name = f"{job.seat.name}-{job.tag}-claude-settings.json"
        agentfs.write(job.council_dir(), name, json.dumps(settings, indent=2))
        settings_file = job.council_dir() / name
        env = {
            # Claude Code ends a turn after 8 blocks in a row without a tool call; council's
            # hook enforces the real cap, so keep the CLI's above it.
            "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": str(job.max_iterations + 2),
            # The default of 10 retries turns a dead endpoint into ~3 minutes per call.
            "CLAUDE_CODE_MAX_RETRIES": os.environ.get("CLAUDE_CODE_MAX_RETRIES", "4"),
        }
        if job.seat.effort:
            env["CLAUDE_CODE_EFFORT_LEVEL"] = job.seat.effort
        if job.seat.self_hosted and job.home is not None:
            # A private HOME: no login of the user's; the server's URL, key and window.
            job.home.mkdir(parents=True, exist_ok=True)
            env.update(selfhosted.claude_env(job.seat, str(job.home)))
        servers = job.seat.mcp_servers
        mcp_config: list[str] = []
        if servers:
            # Beside the settings, where no agent can rewrite the servers it is given.
            config_name = f"{job.seat.name}-{job.tag}-claude-mcp.json"
            # Started without the variables claude has that it is not given: the
            # user's keys, and a self-hosted seat's server key among claude's own (env).
            config = claude_config(servers, [*agent_env(self.cli, extra=job.seat.env), *env])
            agentfs.write(job.council_dir(), config_name, json.dumps(config, indent=2))
            mcp_config = ["--mcp-config", str(job.council_dir() / config_name)]
        argv = [
            "claude", "-p",
            "--settings", str(settings_file),
            # The user's own settings and council's, never a project's or a local one from
            # the agent's folder: another CLI that once worked there (a seat's fallback) could
            # have left a .claude/settings.local.json whose hooks would run as the user (seen:
            # claude 2.1.197 runs them, and keeps --settings' hooks with this flag).
            "--setting-sources", "user",
            # MCP servers only from a --mcp-config a seat's extra_args names: a .mcp.json an
            # agent or a cloned project left in the folder starts no server as the user.
            "--strict-mcp-config",
            # The seat's own servers (mcp_servers), and with the flag above no other.
            *mcp_config,
            # Every model request of the process counts, the ones after each Stop-hook block
            # too (base.turn_cap); past it claude exits 1 with "error_max_turns".
            "--max-turns", str(turn_cap(job.max_iterations)),
            # bypassPermissions exits 1 as root; acceptEdits allows writes inside cwd.
            "--permission-mode", "acceptEdits",
            *permission_args(job.sources, claude_allowed(servers)),
            # Only the tools the phase needs (no Agent, no Workflow…), and council's own
            # instructions instead of Claude Code's: both are sent with every request.
            *claude_args(job.tools, job.seat.extra_args, job.system_prompt()),
            # stream-json writes each event as it happens (json buffers until the end).
            "--output-format", "stream-json", "--verbose",
            *model_args("--model", job.seat),
            *(["--resume", session_id] if session_id else []),
            *job.seat.extra_args,
        ]
        return Invocation(tuple(argv), job.cwd, env, stdin_file=job.prompt_file)

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        raise NotImplementedError("claude loops in one process through its Stop hook")

    def lost_session(self, said: str) -> bool:
        return "No conversation found with session ID" in said  # rc 1, in the result event

    def outcome(self, log: Path, returncode: int | None, start: int = 0) -> Outcome:
        session_id = error = None
        for event in json_events(log, start):
            if event.get("session_id"):
                session_id = str(event["session_id"])
            if event.get("type") == "result":
                # subtype says "success" even for API errors: is_error is the truth.
                if event.get("is_error"):
                    errors = event.get("errors") or []
                    error = str(event.get("result") or "; ".join(map(str, errors)) or
                                event.get("subtype"))
                else:
                    error = None
        error = failure(self.cli, returncode, error)
        return Outcome(session_id, error)

    def usage_counter(self, model: str | None) -> ClaudeUsage:
        return ClaudeUsage(model)

    def requests(self, events: Iterable[dict[str, Any]]) -> int | None:
        """Each process's `num_turns` (claude's count of its model requests, a follow-up after
        a Stop hook's block included), summed; a later result of the same process
        (`result_index` above 0) holds its running total, so it replaces the one before."""
        counts: list[int] = []
        for event in events:
            if event.get("type") != "result" or not isinstance(event.get("num_turns"), int):
                continue
            if _int(event.get("result_index")) > 0 and counts:
                counts[-1] = event["num_turns"]
            else:
                counts.append(event["num_turns"])
        return sum(counts) if counts else None


class ClaudeUsage:
    """Each process's `result` carries its exact cost; while one runs, its assistant
    messages' usage (one per message id) gives an estimate.

    A `claude -p` process looped by the Stop hook writes one result (seen on 2.1.197 and
    2.1.332: `result_index` 0), and council adds one per process. Should a process write
    several, each one's `total_cost_usd` and `usage` are its running total so far (claude's
    own schema: "read the latest result rather than summing"), so a later result of the same
    process (`result_index` above 0) replaces the one before it. Newer claude (2.1.330+) also
    states `model_usage_since_last_result`: what the process counted since its previous
    result, each call on one result only, even across a `--resume` whose first result carries
    the earlier process's totals. When a result has it, council adds that instead."""

    def __init__(self, model: str | None) -> None:
        self.model, self.seen = model, None
        self.done = Usage()  # processes finished, and every `since` part stated so far
        self.latest = Usage()  # the current process's running total, from its last result
        self.live: dict[str, dict[str, object]] = {}

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.seen = event.get("model") or self.seen
        elif kind == "assistant":
            message = event.get("message") or {}
            if isinstance(message.get("usage"), dict):
                self.live[str(message.get("id"))] = message["usage"]
        elif kind == "result":
            since = event.get("model_usage_since_last_result")
            if isinstance(since, dict):
                self.done = self.done + _since_last(since)
            else:
                if _int(event.get("result_index")) == 0:  # a new process's first result
                    self.done, self.latest = self.done + self.latest, Usage()
                self.latest = _running_total(event)
            self.live = {}

    def total(self) -> Usage:
        done = self.done + self.latest
        if not self.live:
            return done
        tokens_in = sum(_tokens_in(u) for u in self.live.values())
        tokens_out = sum(_int(u.get("output_tokens")) for u in self.live.values())
        cached = sum(_int(u.get("cache_read_input_tokens")) for u in self.live.values())
        # The model claude says it runs (its init event) before the seat's alias, which
        # each claude version resolves its own way (opus: claude-opus-4-8, then -5-5).
        return done + estimate("claude", self.seen or self.model, tokens_in, tokens_out, cached)


def _running_total(result: dict[str, Any]) -> Usage:
    """A result's `usage` and `total_cost_usd`: its process's total so far."""
    u = result.get("usage") or {}
    cost = result.get("total_cost_usd")
    return Usage(_tokens_in(u), _int(u.get("output_tokens")),
                 None if not isinstance(cost, int | float) else float(cost),
                 tokens_cached=_int(u.get("cache_read_input_tokens")))


def _since_last(by_model: dict[str, Any]) -> Usage:
    """`model_usage_since_last_result`: per model, shaped like `modelUsage` (inputTokens,
    outputTokens, cacheReadInputTokens, cacheCreationInputTokens, costUSD)."""
    total = Usage()
    for usage in by_model.values():
        if not isinstance(usage, dict):
            continue
        cost = usage.get("costUSD")
        cached = _int(usage.get("cacheReadInputTokens"))
        tokens_in = (_int(usage.get("inputTokens")) + cached
                     + _int(usage.get("cacheCreationInputTokens")))
        total = total + Usage(tokens_in, _int(usage.get("outputTokens")),
                              float(cost) if isinstance(cost, int | float) else None,
                              tokens_cached=cached)
    return total


def _tokens_in(usage: dict[str, object]) -> int:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(int(v) for k in keys if isinstance(v := usage.get(k), int))


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


# --------------------------------------------------------------------------- failures
# What claude printed when its vendor said no, read into one Failure (agents/failure.py).
# Seen with claude 2.1.332 against the scripted server (tests/realcli/test_faults_real.py):
# every API failure ends in a `result` with `is_error: true` (subtype "success"), exit 1,
# `api_error_status` (401, 429, 529; null for a cut or a timeout) and `api_error_type` or
# `api_error` ("connection_failed"); each retry of its own is an `api_retry` event whose
# `retry_delay_ms` follows the vendor's retry-after. A subscription login adds
# `rate_limit_event`s (`rate_limit_info.status` "rejected", `resetsAt`, `rateLimitType`) and
# answers in words: "You've hit your session limit · resets 3:50pm (Asia/Tokyo)" (bundle).
import re as _re  # noqa: E402
from dataclasses import replace as _replace  # noqa: E402
from datetime import datetime as _datetime  # noqa: E402
from datetime import tzinfo as _tzinfo  # noqa: E402

from council.agents.failure import Failure, Kind, epoch, one_line, resets, try_again_in  # noqa: E402

SUBSCRIPTION_LIMIT = _re.compile(r"You(?:'|’)ve hit your (?:(session|weekly|monthly spend|"
                                 r"monthly|fast|Opus|Sonnet) )?limit|usage limit reached", _re.I)
OLD_LIMIT = _re.compile(r"Claude AI usage limit reached\|(\d+)")
WINDOWS = {"session": "five_hour", "weekly": "seven_day", "monthly": "month",
           "monthly spend": "month"}
CREDIT = _re.compile(r"credit balance is too low|out of (?:extra usage|credits)", _re.I)
CLAUDE_AUTH = _re.compile(r"Invalid API key|/login|OAuth token (?:has )?expired|"
                          r"authentication_(?:error|failed)|permission_error", _re.I)
# The API-key form of a plan's limit: a 429 whose retry-after (9000 s) claude will not wait.
ACCOUNT_LIMIT = "your account's rate limit"


def classify(events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
             now: _datetime, tz: _tzinfo | None = None) -> Failure | None:
    """The failure claude's stream-json `events`, `stderr` and exit code say, or None when the
    process did not fail. `now` and `tz` (default: now's) read a reset's clock time."""
    seen = list(events)
    results = [e for e in seen if e.get("type") == "result"]
    result = results[-1] if results else {}
    if not result.get("is_error") and returncode in (0, None):
        return None
    said = [e for e in seen if e.get("type") == "assistant" and e.get("is_api_error_message")]
    said_last = said[-1] if said else {}
    retries = [e for e in seen if e.get("type") == "system" and e.get("subtype") == "api_retry"]
    limits = [e.get("rate_limit_info") if isinstance(e.get("rate_limit_info"), dict) else e
              for e in seen if e.get("type") == "rate_limit_event"]
    errors = result.get("errors") or []
    text = str(result.get("result") or "; ".join(map(str, errors)) or _said_text(said_last)
               or _last_line(stderr) or f"claude exited with code {returncode}")
    status = _first_int(result.get("api_error_status"), said_last.get("api_error_status"),
                        retries[-1].get("error_status") if retries else None)
    kinds = " ".join(str(v) for v in (result.get("api_error_type"), result.get("api_error"),
                                      said_last.get("api_error_type"),
                                      said_last.get("api_error"), said_last.get("error"))
                     if v)
    base = Failure(Kind.CRASH, one_line(text), status=status,
                   models=tuple(answered_models(seen)))
    rejected = [x for x in limits if isinstance(x, dict) and x.get("status") == "rejected"]
    if rejected:
        limit = rejected[-1]
        window = limit.get("rateLimitType")
        return _replace(base, kind=Kind.PLAN_LIMIT, resets_at=epoch(limit.get("resetsAt")),
                       window=str(window) if window else None)
    if SUBSCRIPTION_LIMIT.search(text):
        old = OLD_LIMIT.search(text)
        word = SUBSCRIPTION_LIMIT.search(text)
        window = WINDOWS.get((word.group(1) or "").lower()) if word else None
        return _replace(base, kind=Kind.PLAN_LIMIT,
                       resets_at=epoch(old.group(1)) if old else resets(text, now, tz),
                       window=window)
    if CREDIT.search(text):
        return _replace(base, kind=Kind.QUOTA)
    if status in (401, 403) or CLAUDE_AUTH.search(f"{kinds} {text}"):
        return _replace(base, kind=Kind.AUTH)
    if status == 429 or "rate_limit" in kinds:
        if ACCOUNT_LIMIT in text:
            return _replace(base, kind=Kind.PLAN_LIMIT)
        delays = [r.get("retry_delay_ms") for r in retries if r.get("error_status") == 429]
        wait = try_again_in(text)
        if wait is None and delays and isinstance(delays[-1], int | float):
            wait = round(float(delays[-1]) / 1000, 1)
        return _replace(base, kind=Kind.RATE_LIMIT, wait=wait)
    if (status is not None and status >= 500) or "overloaded" in kinds or \
            _re.search(r"\b5\d\d\b|Overloaded|server-side issue", text):
        return _replace(base, kind=Kind.OVERLOADED)
    if "connection_failed" in kinds or _re.search(
            r"Connection to the API was lost|ECONNRESET|socket (?:hang up|closed)", text):
        return _replace(base, kind=Kind.STREAM_CUT)
    if _re.search(r"Request timed out|timed? ?out|Unable to connect to API", text, _re.I):
        return _replace(base, kind=Kind.NO_ANSWER)
    return base


def answered_models(events: Iterable[dict[str, Any]]) -> list[str]:
    """The models that answered, in the order claude first names them: each result's
    `modelUsage` (and `model_usage_since_last_result`), by its `canonicalModel` where given;
    before any result, the assistant messages' models (not claude's own `<synthetic>` ones)."""
    named: dict[str, None] = {}
    fallback: dict[str, None] = {}
    for event in events:
        if event.get("type") == "result":
            for key in ("modelUsage", "model_usage_since_last_result"):
                usage = event.get(key)
                for model, figures in (usage.items() if isinstance(usage, dict) else ()):
                    canonical = figures.get("canonicalModel") if isinstance(figures, dict) \
                        else None
                    named[str(canonical or model)] = None
        elif event.get("type") == "assistant":
            message = event.get("message") or {}
            model = message.get("model") if isinstance(message, dict) else None
            if isinstance(model, str) and model and not model.startswith("<"):
                fallback[model] = None
    return list(named or fallback)


def _said_text(event: dict[str, Any]) -> str:
    message = event.get("message") or {}
    blocks = message.get("content") if isinstance(message, dict) else None
    return " ".join(str(b.get("text")) for b in blocks or []
                    if isinstance(b, dict) and b.get("text"))


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _first_int(*values: object) -> int | None:
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool)), None)
