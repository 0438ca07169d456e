"""Gemini CLI: one process looping through an AfterAgent hook in the seat's workspace
`.gemini/settings.json`. The workspace must be trusted or the hook is silently ignored.

A trusted gemini (0.61) loads the first `.gemini/.env` or `.env` it finds walking up from its
cwd to `/`, then `~/.gemini/.env` or `~/.env`, into its own environment, which its hooks and
tools inherit: a cloned repository's `.env` would reach the agent and council's hook past the
allow-list. An empty `.gemini/.env` in the workspace is found first and ends that walk.

gemini runs a command hook as `bash -c COMMAND` with a socket on stdin; bash takes that for a
remote shell and, as a top-level shell (SHLVL unset: the allow-list drops it), sources
/etc/bash.bashrc and ~/.bashrc; whatever they print lands before the hook's JSON, which gemini
then reads as plain text: an "allow" that ended the loop after one turn. The hook's own `env`
settles that (hook_env)."""

from __future__ import annotations

import json
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
from council.agents.mcp import gemini_core, gemini_servers, names
from council.agents.toolsets import gemini_settings
from council.evidence.ledger import Usage, estimate
from council.runoptions import McpServer
from council.store import agentfs

# `-o json/stream-json` exit with the HTTP status modulo 256.
HTTP_EXIT_CODES = {244: "server error (HTTP 500)", 173: "rate limited (HTTP 429)",
                   144: "bad request (HTTP 400)", 145: "unauthorised (HTTP 401)",
                   147: "forbidden (HTTP 403)", 41: "no valid authentication configured",
                   55: "workspace not trusted", 42: "invalid session to resume",
                   53: "turn limit exceeded"}


# A seat's effort as gemini's thinking settings. Gemini 3 models take a level, 2.5 models a
# token budget (kept within every 2.5 model's maximum); gemini has no flag for either. Only
# LOW and HIGH are accepted by every Gemini 3 model (MINIMAL and MEDIUM not by all Pro ones).
THINKING_LEVEL = {"minimal": "LOW", "low": "LOW", "medium": "HIGH", "high": "HIGH",
                  "xhigh": "HIGH", "max": "HIGH"}
THINKING_BUDGET = {"minimal": 512, "low": 1024, "medium": 8192, "high": 16384, "xhigh": 24576,
                   "max": 24576}


def thinking(effort: str) -> dict[str, Any]:
    """`modelConfigs` for the seat's workspace settings: it redefines the built-in aliases
    every chat model extends (chat-base-3, chat-base-2.5), whatever `-m` resolves to, and
    leaves the side calls (router, web search) alone. Verified against gemini 0.61.0: the
    main requests' `generationConfig.thinkingConfig` follows it."""
    def alias(config: dict[str, Any]) -> dict[str, Any]:
        return {"extends": "chat-base",
                "modelConfig": {"generateContentConfig": {"thinkingConfig": config}}}

    return {"customAliases": {
        "chat-base-3": alias({"thinkingLevel": THINKING_LEVEL[effort]}),
        "chat-base-2.5": alias({"thinkingBudget": THINKING_BUDGET[effort]}),
    }}


# The one MCP server name a council gemini allows (`--allowed-mcp-server-names`); no config
# names a server so, so gemini starts none. gemini 0.61 checks the list before it starts a
# server (McpClientManager.isBlockedBySettings), for the user's, the system's, the
# workspace's, `mcp.serverCommand`'s and an extension's servers alike. On the command line it
# replaces every settings file's `mcp.allowed` and `mcp.excluded`; a workspace `mcp.allowed`
# would not do: gemini intersects it with the user's, and an empty intersection allows all.
# An empty name (gemini's own "allow none" idiom) crashes 0.61's policy engine at start.
NO_MCP_SERVER = "council-allows-no-mcp-server"


def mcp_args(servers: Sequence[McpServer] = ()) -> list[str]:
    """gemini starts no MCP server of the user's, only the seat's own `servers` (defined in
    its workspace settings, which replace a user's server of the same name; a seat's
    extra_args may allow more)."""
    return ["--allowed-mcp-server-names", ",".join(names(servers)) or NO_MCP_SERVER]


def hook_env(home: Path) -> dict[str, str]:
    """What gemini merges into the hook shell's environment (the hook's `env`, read in 0.61's
    hook runner): an empty HOME of council's, with no ~/.bashrc in it; SHLVL=1, so bash counts
    itself a nested shell (level 2) and skips the remote-shell start-up altogether,
    /etc/bash.bashrc included; and no BASH_ENV file to source."""
    return {"HOME": str(home), "SHLVL": "1", "BASH_ENV": ""}


def write_workspace(folder: Path, settings: dict[str, Any]) -> None:
    """`folder`'s `.gemini`: made afresh (whatever an agent left there, a link included, is
    removed unfollowed), with council's settings and an empty `.env` that ends gemini's .env
    search. Also used for doctor's live check."""
    agentfs.fresh_dir(folder, ".gemini")
    agentfs.write(folder, ".gemini/.env", b"")
    agentfs.write(folder, ".gemini/settings.json", json.dumps(settings, indent=2))


class GeminiAdapter:
    cli = "gemini"
    native_loop = True
    # `--resume` of a session that used tools re-sends each function response twice, which
    # the API rejects (400); an interrupted gemini starts a fresh session on its partial report.
    resumes_sessions = False

    def lost_session(self, said: str) -> bool:
        return "Invalid session identifier" in said  # exit 42 (never resumed: see above)

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        home = job.hook_home()
        settings: dict[str, Any] = {
            # The default 10 attempts with backoff turn a dead or rate-limiting endpoint
            # into ~5 minutes of silence per request.
            "general": {"maxAttempts": 3},
            # Only the tools the phase needs (no invoke_agent, enter_plan_mode…), and the
            # tools of the seat's own MCP servers (gemini_core).
            "tools": gemini_settings(job.tools, gemini_core(job.seat.mcp_servers)),
            # The whole loop runs in this one process: every request of it counts, the ones
            # after each AfterAgent continuation too (base.turn_cap). Past the cap gemini
            # makes no more requests and exits 53 ("turn limit exceeded"); met at a
            # continuation, it answers nothing and council's hook ends the loop at its cap.
            "model": {"maxSessionTurns": turn_cap(job.max_iterations)},
            "hooks": {
                "AfterAgent": [
                    {"matcher": "*",
                     "hooks": [{"name": "council-loop", "type": "command",
                                "command": job.hook_command(self.cli, home), "timeout": 120000,
                                "env": hook_env(home)}]}
                ]
            }
        }
        if job.seat.effort:
            settings["modelConfigs"] = thinking(job.seat.effort)
        if job.seat.self_hosted:
            local = selfhosted.gemini_workspace(job.seat)
            configs = settings.setdefault("modelConfigs", {"customAliases": {}})
            configs["customAliases"] = {**local["aliases"], **configs["customAliases"]}
            settings["model"]["compressionThreshold"] = local["compressionThreshold"]
        env = {
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            # One process instead of a relaunched child whose parent ignores SIGTERM.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            # council's instructions instead of gemini's coding-agent system prompt.
            "GEMINI_SYSTEM_MD": str(job.system_prompt()),
        }
        if job.seat.self_hosted and job.home is not None:
            # A GEMINI_CLI_HOME of the seat's own: no login of the user's, API-key auth.
            job.home.mkdir(parents=True, exist_ok=True)
            agentfs.write(job.home, ".gemini/settings.json",
                          json.dumps(selfhosted.GEMINI_USER_SETTINGS, indent=2))
            env.update(selfhosted.gemini_env(job.seat, str(job.home)))
        if job.seat.mcp_servers:
            # A server is started without every variable gemini has: the ones it is given,
            # the ones above, and GEMINI_CLI, which gemini sets for its children.
            settings["mcpServers"] = gemini_servers(job.seat.mcp_servers, [
                *agent_env(self.cli, extra=job.seat.env), *env, "GEMINI_CLI"])
        write_workspace(job.cwd, settings)
        argv = [
            "gemini",
            *model_args("-m", job.seat),
            # No extensions: council's own (extensions/gemini) would see this agent's prompts
            # and stops too, and a user's extension has no business in a research seat.
            "-e", "none",
            *mcp_args(job.seat.mcp_servers),
            # auto_edit offers write_file and replace but no shell.
            "--approval-mode", "auto_edit",
            "-o", "stream-json",
            *job.seat.extra_args,
        ]
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

    def usage_counter(self, model: str | None) -> GeminiUsage:
        return GeminiUsage(model)

    def requests(self, events: Iterable[dict[str, Any]]) -> int | None:
        """None: the stream-json `result` stats hold tokens and tool calls, not requests."""
        return None


class GeminiUsage:
    """The `result` event's stats, once per process (gemini reports nothing before)."""

    def __init__(self, model: str | None) -> None:
        self.model, self.sum = model, Usage()

    def add(self, event: dict[str, Any]) -> None:
        if event.get("type") == "result" and isinstance(event.get("stats"), dict):
            stats = event["stats"]
            tokens_in = stats.get("input_tokens") or stats.get("input") or 0
            tokens_out = stats.get("output_tokens") or 0
            cached = stats.get("cached") or 0
            self.sum = self.sum + estimate("gemini", self.model, int(tokens_in), int(tokens_out),
                                           int(cached))

    def total(self) -> Usage:
        return self.sum


# --------------------------------------------------------------------------- failures
# What gemini printed when its vendor said no, read into one Failure (agents/failure.py).
# Seen with gemini 0.61.0 against the scripted server (tests/realcli/test_faults_real.py):
# `-o stream-json` ends with a `result` of `status: "error"` whose `error.message` is
# "[API Error: …]", and exits with the HTTP status modulo 256 (173 for 429, 247 for 503, 145
# for 401); stderr names the error's class (TerminalQuotaError for a daily quota,
# RetryableQuotaError for a per-minute one, with "Suggested retry after 60s"). A cut stream
# is "[API Error: terminated]" and a request that never answers "[API Error: exception
# TypeError: fetch failed sending request]" after about 60 s, both exit 1. A seat on a model
# of a chain (flash-lite) out of quota answers on the next one and exits 0: `stats.models`.
import re as _re  # noqa: E402
from dataclasses import replace as _replace  # noqa: E402
from datetime import datetime as _datetime  # noqa: E402
from datetime import tzinfo as _tzinfo  # noqa: E402

from council.agents.failure import (  # noqa: E402
    Failure,
    Kind,
    next_pacific_midnight,
    one_line,
    try_again_in,
)

# The HTTP status each `-o stream-json` exit code stands for (HTTP_EXIT_CODES' words).
EXIT_STATUS = {173: 429, 247: 503, 244: 500, 145: 401, 147: 403, 144: 400}
GEMINI_AUTH = _re.compile(r"UNAUTHENTICATED|PERMISSION_DENIED|ACCESS_TOKEN_EXPIRED|"
                          r"API key not valid|API_KEY_INVALID|invalid authentication|"
                          r"Invalid auth method", _re.I)
DAILY = _re.compile(r"exhausted your daily quota|PerDay|Daily", _re.I)
GEMINI_QUOTA = _re.compile(r"limit:\s*0(?![\d.])|INSUFFICIENT_G1_CREDITS_BALANCE|"
                           r"QUOTA_EXHAUSTED|TerminalQuotaError", _re.I)
CAPACITY = _re.compile(r"exhausted your capacity|capacity exceeded|MODEL_CAPACITY_EXHAUSTED|"
                       r"MODEL_CAPACITY_EXCEEDED", _re.I)
RETRY_DELAY_MS = _re.compile(r"retryDelayMs:\s*(\d+)")
GEMINI_STATUS = _re.compile(r"\"code\":\s*(\d{3})|\bstatus:\s*(\d{3})\b")


def classify(events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
             now: _datetime, tz: _tzinfo | None = None) -> Failure | None:
    """The failure gemini's stream-json `events`, `stderr` and exit code say, or None when
    the process did not fail (it may still have answered on another model: answered_models).
    `now` dates a daily quota's reset (midnight Pacific, Google's); `tz` is unused."""
    seen = list(events)
    results = [e for e in seen if e.get("type") == "result"]
    result = results[-1] if results else {}
    error = result.get("error") if result.get("status") == "error" else None
    if error is None and returncode in (0, None):
        return None
    message = str(error.get("message") if isinstance(error, dict) else error or "")
    errors = [line for line in (stderr or "").splitlines() if "Error" in line]
    text = message or (errors[-1] if errors else "") or f"gemini exited with code {returncode}"
    said = f"{text}\n{stderr or ''}"
    found = GEMINI_STATUS.search(said)
    status = EXIT_STATUS.get(returncode or 0) or (
        int(found.group(1) or found.group(2)) if found else None)
    base = Failure(Kind.CRASH, one_line(text), status=status,
                   models=tuple(answered_models(seen)))
    wait = try_again_in(said)
    if wait is None and (delay := RETRY_DELAY_MS.search(said)):
        wait = int(delay.group(1)) / 1000
    if CAPACITY.search(said):
        return _replace(base, kind=Kind.OVERLOADED, wait=wait)
    if DAILY.search(text) or ("TerminalQuotaError" in said and DAILY.search(said)):
        return _replace(base, kind=Kind.QUOTA, window="day",
                        resets_at=next_pacific_midnight(now))
    if GEMINI_QUOTA.search(said):
        return _replace(base, kind=Kind.QUOTA, wait=wait)
    if status in (401, 403) or returncode == 41 or GEMINI_AUTH.search(said):
        return _replace(base, kind=Kind.AUTH)
    # gemini throws a 503 as a RetryableQuotaError too: the status decides first.
    if (status is not None and status >= 500) or _re.search(
            r"overloaded|UNAVAILABLE|INTERNAL", text):
        return _replace(base, kind=Kind.OVERLOADED, wait=wait)
    if status == 429 or _re.search(r"RESOURCE_EXHAUSTED|exceeded your current quota|"
                                   r"RetryableQuotaError", said):
        return _replace(base, kind=Kind.RATE_LIMIT, wait=wait, window="minute")
    if _re.search(r"\bterminated\b|other side closed|ECONNRESET|premature close", said):
        return _replace(base, kind=Kind.STREAM_CUT)
    if _re.search(r"fetch failed|ETIMEDOUT|timed? ?out|ECONNREFUSED|INVALID_STREAM", said,
                  _re.I) or (isinstance(error, dict) and error.get("type") == "INVALID_STREAM"):
        return _replace(base, kind=Kind.NO_ANSWER)
    return base


def answered_models(events: Iterable[dict[str, Any]]) -> list[str]:
    """The models that answered: each `result`'s `stats.models` with tokens to its name
    (gemini lists the asked model with none when another one answered in its place), in
    order. `-o json`'s shape (`tokens.total`) is read too."""
    named: dict[str, None] = {}
    for event in events:
        stats = event.get("stats") if event.get("type") in ("result", None) else None
        models = stats.get("models") if isinstance(stats, dict) else None
        for model, figures in (models.items() if isinstance(models, dict) else ()):
            if isinstance(figures, dict) and _tokens(figures) > 0:
                named[str(model)] = None
    return list(named)


def _tokens(figures: dict[str, Any]) -> int:
    nested = figures.get("tokens")
    total = (nested.get("total") if isinstance(nested, dict) else None) \
        or figures.get("total_tokens") or figures.get("input_tokens") or 0
    return total if isinstance(total, int) else 0
