"""Claude Code: `claude -p` looping through a Stop hook given with `--settings`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import council.agents.selfhosted as selfhosted
from council import clis
from council.agents.allowlist import visible
from council.agents.base import (
    AgentJob,
    Invocation,
    Outcome,
    failure,
    json_events,
    model_args,
    page_url,
    turn_cap,
)
from council.agents.failure import Failure, Kind, epoch, one_line, resets, try_again_in
from council.agents.mcp import given, reference, stdio
from council.agents.toolsets import Instructions, asks
from council.domains import Policy
from council.evidence.ledger import Usage, estimate
from council.graph import EDIT, FILES, WEB
from council.runoptions import McpServer, Seat
from council.store import agentfs

# Containment: `--permission-mode acceptEdits` lets Read/Write/Edit/Glob/Grep work inside the
# agent's cwd (its own folder) and refuses them everywhere else. Naming a file tool in the
# allow list would lift that limit for every path (a bare `Write` overrides acceptEdits' cwd
# rule: seen writing into the user's project and over state.yaml), so only the web tools are
# pre-approved. Research never needs a shell.
ALLOWED_TOOLS = "WebSearch,WebFetch"
DENIED_TOOLS = "Bash"

# claude's `--tools`: the built-in set offered at all (its permission rules only approve).
# No Agent: a seat that starts subagents multiplies tokens out of the budget's sight.
# Grep's definition alone is 3.3 KB; Glob and Read find and read a seat's few files.
TOOLS = {FILES: ("Read", "Write", "Edit", "Glob"), EDIT: ("Read", "Edit", "Glob"),
         WEB: ("Read", "Write", "Edit", "Glob", "WebSearch", "WebFetch")}
INSTRUCTIONS = Instructions(
    TOOLS,
    how_to_write="Write files with Write (a new file) and Edit (a change to one), by their "
                 "path in your folder;\nRead and Glob read and find files. You have no shell "
                 "and start no other agents.",
    how_to_search="Search the web with WebSearch and read a page with WebFetch.")
FETCH_TOOL = "WebFetch"


def tool_args(toolset: str, extra_args: Sequence[str], system: Path | None) -> list[str]:
    """Only the tools the phase needs (no Agent, no Workflow…), and council's own
    instructions instead of Claude Code's, unless the seat's extra_args name their own
    `--tools` or `--system-prompt…`."""
    args: list[str] = []
    if not asks(extra_args, "--tools"):
        args += ["--tools", ",".join(TOOLS[toolset])]
    if system is not None and not asks(extra_args, "--system-prompt", "--system-prompt-file"):
        args += ["--system-prompt-file", str(system)]
    return args


def webfetch_rules(policy: Policy) -> tuple[list[str], list[str]]:
    """claude's permission rules for WebFetch: (allow, deny). claude 2.1.332 matches
    `domain:example.com` to that hostname only and `domain:*.example.com` to its
    subdomains (read from its rule matcher), so each domain gives both. With an allow
    list, only its domains are pre-approved: a fetch elsewhere needs an approval no one
    can give in print mode, so it is refused. A deny rule wins over every allow rule."""
    def both(domain: str) -> list[str]:
        return [f"WebFetch(domain:{domain})", f"WebFetch(domain:*.{domain})"]
    return ([r for d in policy.allow for r in both(d)], [r for d in policy.deny for r in both(d)])


def permission_args(policy: Policy, servers: Sequence[str] = ()) -> list[str]:
    """`--allowedTools` and `--disallowedTools`, with the run's source policy as WebFetch
    domain rules: an allow list pre-approves WebFetch on its domains only (elsewhere the
    fetch needs an approval print mode cannot give: refused), a deny list refuses its
    domains whatever else allows them. WebSearch's permission rules name queries, not
    domains: its results are judged afterwards, in the ledger. `servers`: the allow rules of
    the seat's own MCP servers (mcp_allowed)."""
    allow, deny = webfetch_rules(policy)
    allowed = ["WebSearch", *allow] if policy.allow else ALLOWED_TOOLS.split(",")
    allowed += servers
    return ["--allowedTools", ",".join(allowed),
            "--disallowedTools", ",".join([DENIED_TOOLS, *deny])]


def mcp_config(servers: Sequence[McpServer], cli_env: Iterable[str]) -> dict[str, Any]:
    """The `--mcp-config` file's content: `{"mcpServers": {name: …}}`. A server's `env`
    says `${COUNCIL_VAR}`, which claude expands from its own environment (mcp.given puts
    the value there): no value is written."""
    table: dict[str, Any] = {}
    for server in servers:
        if server.url is not None:
            table[server.name] = {"type": "http", "url": server.url}
            continue
        command, args = stdio(server, cli_env)
        table[server.name] = {"type": "stdio", "command": command, "args": args,
                              "env": {name: reference(source) for name, source in server.env}}
    return {"mcpServers": table}


def mcp_allowed(servers: Sequence[McpServer]) -> list[str]:
    """The `--allowedTools` rules that let claude call every tool of the seat's servers
    (`mcp__<server>`): in `-p` a tool with no allow rule is refused, not asked about."""
    return [f"mcp__{server.name}" for server in servers]



def self_hosted_env(seat: Seat, home: str, environ: Mapping[str, str] | None = None
                    ) -> dict[str, str]:
    """claude's variables for a seat on a server the user runs (agents/selfhosted.py): the
    server, a bearer token (ANTHROPIC_API_KEY empty, so no x-api-key of the user's), the
    small/fast model and the window, a private HOME, and none of the traffic to Anthropic's
    own hosts (updates, telemetry, error reports)."""
    model = str(seat.model)
    return {
        "HOME": home,
        "ANTHROPIC_BASE_URL": selfhosted.root(seat),
        "ANTHROPIC_AUTH_TOKEN": selfhosted.server_key(seat, environ),
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_SMALL_FAST_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(selfhosted.window(seat)),
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS": str(selfhosted.window(seat)),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


CLAUDE_RETRIES = "6"
# 120 s: far above an answer's first bytes (headers come at once; a thinking model streams
# its thinking, and Anthropic sends pings in between), far below claude's ~360 s.
NO_ANSWER_MS = "120000"
NO_ANSWER_ENV = {"API_TIMEOUT_MS": NO_ANSWER_MS, "CLAUDE_ENABLE_BYTE_WATCHDOG": "1",
                 "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": NO_ANSWER_MS}


class ClaudeAdapter:
    cli = "claude"
    facts = clis.CLAUDE
    native_loop = True
    resumes_sessions = True
    instructions = INSTRUCTIONS
    private_home = False  # its file tools stay in the agent's folder (acceptEdits)

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        env = self._env(job)
        servers = job.seat.mcp_servers
        argv = [
            "claude", "-p",
            "--settings", str(self._settings(job)),
            # The user's own settings and council's, never a project's or a local one from
            # the agent's folder: another CLI that once worked there (a seat's fallback) could
            # have left a .claude/settings.local.json whose hooks would run as the user (seen:
            # claude 2.1.197 runs them, and keeps --settings' hooks with this flag).
            "--setting-sources", "user",
            # MCP servers only from a --mcp-config a seat's extra_args names: a .mcp.json an
            # agent or a cloned project left in the folder starts no server as the user.
            "--strict-mcp-config",
            # The seat's own servers (mcp_servers), and with the flag above no other.
            *self._mcp_args(job, env),
            # Every model request of the process counts, the ones after each Stop-hook block
            # too (base.turn_cap); past it claude exits 1 with "error_max_turns".
            "--max-turns", str(turn_cap(job.max_iterations)),
            # bypassPermissions exits 1 as root; acceptEdits allows writes inside cwd.
            "--permission-mode", "acceptEdits",
            *permission_args(job.sources, mcp_allowed(servers)),
            # Only the tools the phase needs (no Agent, no Workflow…), and council's own
            # instructions instead of Claude Code's: both are sent with every request.
            *tool_args(job.tools, job.seat.extra_args, job.system_prompt(self.instructions)),
            # stream-json writes each event as it happens (json buffers until the end).
            "--output-format", "stream-json", "--verbose",
            *model_args("--model", job.seat),
            *(["--resume", session_id] if session_id else []),
            *job.seat.extra_args,
        ]
        return Invocation(tuple(argv), job.cwd, env, stdin_file=job.prompt_file)

    def _settings(self, job: AgentJob) -> Path:
        """The `--settings` file with the Stop hook, in council's own folder, not the
        agent's: an agent that can write its cwd could otherwise rewrite the hook that loops
        it before its next phase or resume."""
        # claude runs a hook with `/bin/sh -c` (seen), which reads no start-up file when not
        # interactive: the command's own HOME=… is all the hook needs.
        command = job.hook_command(self.cli, job.hook_home())
        settings = {
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 120}]}]
            }
        }
        name = f"{job.seat.name}-{job.tag}-claude-settings.json"
        agentfs.write(job.council_dir(), name, json.dumps(settings, indent=2))
        return job.council_dir() / name

    def _env(self, job: AgentJob) -> dict[str, str]:
        env = {
            # Claude Code ends a turn after 8 blocks in a row without a tool call; council's
            # hook enforces the real cap, so keep the CLI's above it.
            "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": str(job.max_iterations + 2),
            # claude's own retries, counted with council's (seat/failover.py): 6 ride out
            # about a minute of 529s in one process (its pauses double from 0.5 s to 32 s)
            # and honour a short retry-after; a plan's limit (retry-after 9000) is not
            # retried by claude, and a refused login is stopped by council at its first
            # retry (ClaudeAdapter.fatal). The default of 10 is about 3 minutes.
            "CLAUDE_CODE_MAX_RETRIES": os.environ.get("CLAUDE_CODE_MAX_RETRIES",
                                                      CLAUDE_RETRIES),
        }
        if not job.seat.self_hosted:
            # A request that never answers: given up on by claude itself after NO_ANSWER_MS
            # (no headers) or NO_ANSWER_MS of a silent stream, then retried, instead of
            # the ~6 minutes claude waits by default (docs/faults.md). A self-hosted server
            # may take longer than that to read a long prompt: claude's defaults stay.
            for name, value in NO_ANSWER_ENV.items():
                env[name] = os.environ.get(name, value)
        if job.seat.effort:
            env["CLAUDE_CODE_EFFORT_LEVEL"] = job.seat.effort
        if job.seat.self_hosted and job.home is not None:
            # A private HOME: no login of the user's; the server's URL, key and window.
            job.home.mkdir(parents=True, exist_ok=True)
            env.update(self_hosted_env(job.seat, str(job.home)))
        return env

    def _mcp_args(self, job: AgentJob, env: dict[str, str]) -> list[str]:
        """`--mcp-config` with the seat's own servers, or nothing. The variables their
        `env` reads go in claude's environment (`env`), read from council's now."""
        if not job.seat.mcp_servers:
            return []
        env.update(given(job.seat.mcp_servers, os.environ, job.seat.name))
        # Beside the settings, where no agent can rewrite the servers it is given.
        config_name = f"{job.seat.name}-{job.tag}-claude-mcp.json"
        # Started without the variables claude has that it is not given: the
        # user's keys, and a self-hosted seat's server key among claude's own (env).
        config = mcp_config(job.seat.mcp_servers,
                            [*visible(self.facts, os.environ, job.seat.env), *env])
        agentfs.write(job.council_dir(), config_name, json.dumps(config, indent=2))
        return ["--mcp-config", str(job.council_dir() / config_name)]

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        raise NotImplementedError("claude loops in one process through its Stop hook")

    def one_shot(self, folder: Path, prompt: Path, model: str | None = None) -> Invocation:
        """No tools (`--tools ""`), no hook, no session kept, no server of the user's."""
        argv = ["claude", "-p", "--output-format", "stream-json", "--verbose",
                "--tools", "", "--setting-sources", "user", "--strict-mcp-config",
                "--no-session-persistence",
                "--settings", json.dumps({"disableAllHooks": True}),
                *(["--model", model] if model else [])]
        env = {"CLAUDE_CODE_MAX_RETRIES": os.environ.get("CLAUDE_CODE_MAX_RETRIES", "4")}
        return Invocation(tuple(argv), folder, env, stdin_file=prompt)

    def answer(self, log: Path) -> str:
        """The last `result` event's text."""
        text = ""
        for event in json_events(log):
            if event.get("type") == "result" and isinstance(event.get("result"), str):
                text = event["result"]
        return text

    def own_variables(self, environ: Mapping[str, str]) -> set[str]:
        return set()  # its facts' prefixes and names are all it reads

    def memory_files(self, folder: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (*self.facts.memory_files, *self.facts.config_entries), self.facts.nested_memory

    def login_elsewhere(self, config_dir: Path, env: Mapping[str, str]) -> str | None:
        """An `apiKeyHelper` in its settings.json: a program that prints the key."""
        settings = config_dir / "settings.json"
        try:
            data = json.loads(settings.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return f"apiKeyHelper in {settings}" if isinstance(data, dict) and \
            data.get("apiKeyHelper") else None

    def stranded_key(self, env: Mapping[str, str], home: Path) -> str | None:
        return None  # claude reads no key from a file council keeps from its agents

    def fetches(self, event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
        """WebFetch's calls and results, in its stream-json's assistant and user messages."""
        if event.get("type") not in ("assistant", "user"):
            return
        message = event.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == FETCH_TOOL:
                url = page_url(block.get("input"))
                if url:
                    yield str(block.get("id")), url, None
            elif block.get("type") == "tool_result":
                text = _text_of(block.get("content"))
                if text:
                    yield str(block.get("tool_use_id")), None, text

    def doctor_notes(self) -> list[str]:
        return []  # nothing of the user's config changes its containment

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

    def classify(self, events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
                 now: datetime, tz: tzinfo | None = None) -> Failure | None:
        return classify(events, stderr, returncode, now, tz)

    def answered_models(self, events: Iterable[dict[str, Any]]) -> list[str]:
        return answered_models(events)

    def own_retry(self, event: dict[str, Any]) -> bool:
        return event.get("type") == "system" and event.get("subtype") == "api_retry"

    def fatal(self, event: dict[str, Any]) -> Failure | None:
        """An api_retry of a refused login: claude retries a 401 ten times (about 177 s)
        before it says so; the login will not start working in between."""
        if not self.own_retry(event):
            return None
        status = event.get("error_status")
        if event.get("error") != "authentication_failed" and status not in (401, 403):
            return None
        return Failure(Kind.AUTH, f"claude's login was refused (HTTP {status or 401}, "
                       f"{event.get('error') or 'authentication_failed'}): council stopped "
                       "its retries", status=status if isinstance(status, int) else 401)

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
    the earlier process's totals. When a result has it, council adds that instead.

    A process stopped before its result (a killed supervisor's orphan, ended by the resume)
    states nothing: its messages' estimate is kept when the next process starts (its `init`
    event), or the resumed seat's ledger would drop them (seen on 2.1.332: the resumed
    process's since-last figures are its own, its `total_cost_usd` carries the stopped one's
    cost; tests/realcli/test_resumed_usage_real.py)."""

    def __init__(self, model: str | None) -> None:
        self.model, self.seen = model, None
        self.done = Usage()  # processes finished, and every `since` part stated so far
        self.latest = Usage()  # the current process's running total, from its last result
        self.live: dict[str, dict[str, object]] = {}

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            # A new process: the one before it is over, counted by its result or estimated.
            self.done, self.latest, self.live = self.done + self.latest + self._live(), \
                Usage(), {}
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
        return self.done + self.latest + self._live()

    def _live(self) -> Usage:
        """The estimate of the messages no result has stated yet."""
        if not self.live:
            return Usage()
        tokens_in = sum(_tokens_in(u) for u in self.live.values())
        tokens_out = sum(_int(u.get("output_tokens")) for u in self.live.values())
        cached = sum(_int(u.get("cache_read_input_tokens")) for u in self.live.values())
        # The model claude says it runs (its init event) before the seat's alias, which
        # each claude version resolves its own way (opus: claude-opus-4-8, then -5-5).
        return estimate("claude", self.seen or self.model, tokens_in, tokens_out, cached)


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


def _text_of(content: Any) -> str | None:
    """A tool result's text: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        text = "\n".join(p for p in parts if isinstance(p, str))
        return text or None
    return None


# --------------------------------------------------------------------------- failures
# What claude printed when its vendor said no, read into one Failure (agents/failure.py).
# Seen with claude 2.1.332 against the scripted server (tests/realcli/test_faults_real.py):
# every API failure ends in a `result` with `is_error: true` (subtype "success"), exit 1,
# `api_error_status` (401, 429, 529; null for a cut or a timeout) and `api_error_type` or
# `api_error` ("connection_failed"); each retry of its own is an `api_retry` event whose
# `retry_delay_ms` follows the vendor's retry-after. A subscription login adds
# `rate_limit_event`s (`rate_limit_info.status` "rejected", `resetsAt`, `rateLimitType`) and
# answers in words: "You've hit your session limit · resets 3:50pm (Asia/Tokyo)" (bundle).
SUBSCRIPTION_LIMIT = re.compile(r"You(?:'|’)ve hit your (?:(session|weekly|monthly spend|"
                                 r"monthly|fast|Opus|Sonnet) )?limit|usage limit reached", re.I)
OLD_LIMIT = re.compile(r"Claude AI usage limit reached\|(\d+)")
WINDOWS = {"session": "five_hour", "weekly": "seven_day", "monthly": "month",
           "monthly spend": "month"}
CREDIT = re.compile(r"credit balance is too low|out of (?:extra usage|credits)", re.I)
CLAUDE_AUTH = re.compile(r"Invalid API key|/login|OAuth token (?:has )?expired|"
                          r"authentication_(?:error|failed)|permission_error", re.I)
# The API-key form of a plan's limit: a 429 whose retry-after (9000 s) claude will not wait.
ACCOUNT_LIMIT = "your account's rate limit"


def classify(events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
             now: datetime, tz: tzinfo | None = None) -> Failure | None:
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
        return replace(base, kind=Kind.PLAN_LIMIT, resets_at=epoch(limit.get("resetsAt")),
                       window=str(window) if window else None)
    if SUBSCRIPTION_LIMIT.search(text):
        old = OLD_LIMIT.search(text)
        word = SUBSCRIPTION_LIMIT.search(text)
        window = WINDOWS.get((word.group(1) or "").lower()) if word else None
        return replace(base, kind=Kind.PLAN_LIMIT,
                       resets_at=epoch(old.group(1)) if old else resets(text, now, tz),
                       window=window)
    if CREDIT.search(text):
        return replace(base, kind=Kind.QUOTA)
    if status in (401, 403) or CLAUDE_AUTH.search(f"{kinds} {text}"):
        return replace(base, kind=Kind.AUTH)
    if status == 429 or "rate_limit" in kinds:
        if ACCOUNT_LIMIT in text:
            return replace(base, kind=Kind.PLAN_LIMIT)
        delays = [r.get("retry_delay_ms") for r in retries if r.get("error_status") == 429]
        wait = try_again_in(text)
        if wait is None and delays and isinstance(delays[-1], int | float):
            wait = round(float(delays[-1]) / 1000, 1)
        return replace(base, kind=Kind.RATE_LIMIT, wait=wait)
    if (status is not None and status >= 500) or "overloaded" in kinds or \
            re.search(r"\b5\d\d\b|Overloaded|server-side issue", text):
        return replace(base, kind=Kind.OVERLOADED)
    if "connection_failed" in kinds or re.search(
            r"Connection to the API was lost|ECONNRESET|socket (?:hang up|closed)", text):
        return replace(base, kind=Kind.STREAM_CUT)
    if re.search(r"Request timed out|timed? ?out|Unable to connect to API", text, re.I):
        return replace(base, kind=Kind.NO_ANSWER)
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
