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
import os
import posixpath
import re
import stat
import sys
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
from council.agents.failure import Failure, Kind, next_pacific_midnight, one_line, try_again_in
from council.agents.mcp import given, names, reference, stdio
from council.agents.toolsets import Instructions
from council.evidence.ledger import Usage, estimate
from council.graph import EDIT, FILES, WEB
from council.runoptions import McpServer, Seat
from council.store import agentfs, logins

# `tools.core` in the seat's workspace settings: the only tools registered. auto_edit already
# leaves the shell out; this drops invoke_agent, enter_plan_mode, update_topic.
TOOLS = {FILES: ("read_file", "write_file", "replace", "glob", "grep_search",
                 "list_directory"),
         EDIT: ("read_file", "replace", "glob", "grep_search", "list_directory"),
         WEB: ("read_file", "write_file", "replace", "glob", "grep_search",
               "list_directory", "web_fetch", "google_web_search")}
INSTRUCTIONS = Instructions(
    TOOLS,
    how_to_write="Write files with write_file (the whole file) and replace (a change to one), "
                 "by their path in\nyour folder; read_file, list_directory, glob and "
                 "grep_search read and find files. You have no\nshell.",
    how_to_search="Search the web with google_web_search and read a page with web_fetch.")
FETCH_TOOL = "web_fetch"

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


def mcp_servers(servers: Sequence[McpServer], cli_env: Iterable[str]) -> dict[str, Any]:
    """The workspace settings' `mcpServers`. `trust: true`: the user named the server, and
    headless gemini refuses a tool call that would need a confirmation. A server's `env`
    says `${COUNCIL_VAR}`, which gemini expands from its own environment when it reads its
    settings (mcp.given puts the value there): the workspace's file holds no value."""
    table: dict[str, Any] = {}
    for server in servers:
        if server.url is not None:
            table[server.name] = {"httpUrl": server.url, "trust": True}
            continue
        command, args = stdio(server, cli_env)
        table[server.name] = {
            "command": command, "args": args, "trust": True,
            "env": {name: reference(source) for name, source in server.env}}
    return table


def mcp_core(servers: Sequence[McpServer]) -> list[str]:
    """The `tools.core` entries that let gemini offer the servers' tools (`mcp_<server>_*`):
    a `tools.core` list denies every tool it does not name, at a priority above a trusted
    server's allow (gemini 0.61's policy: "Core Tools Allowlist Enforcement"), so without
    them the model is offered none ("Tool mcp_web_search not found")."""
    return [f"mcp_{server.name}_*" for server in servers]


# gemini 0.61's built-in aliases for its side calls (docs/reference/configuration.md of the
# package): on a self-hosted seat each is redefined to the seat's model, or gemini asks the
# server for gemini-3-flash-preview, flash-lite and others it does not serve.
UTILITY_ALIASES = (
    "classifier", "prompt-completion", "fast-ack-helper", "edit-corrector",
    "summarizer-default", "summarizer-shell", "web-search", "web-fetch", "web-fetch-fallback",
    "loop-detection", "loop-detection-double-check", "llm-edit-fixer", "next-speaker-checker",
    "context-snapshotter", "chat-compression-3-pro", "chat-compression-3-flash",
    "chat-compression-3.1-flash-lite", "chat-compression-2.5-pro",
    "chat-compression-2.5-flash", "chat-compression-2.5-flash-lite",
    "chat-compression-default", "agent-history-provider-summarizer",
    "gemini-2.5-flash-base", "gemini-3-flash-base", "gemini-3.5-flash-base",
)
# gemini takes an unknown model's window to be 1,048,576 tokens (tokenLimit) and compresses
# at compressionThreshold of it; the seat's window sets the fraction instead.
ASSUMED_WINDOW = 1_048_576
# A self-hosted seat's private GEMINI_CLI_HOME settings.
SELF_HOSTED_USER_SETTINGS: dict[str, Any] = {
    # Without it GOOGLE_GEMINI_BASE_URL selects the "gateway" auth type, which headless
    # gemini 0.61 refuses (exit 41).
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def self_hosted_env(seat: Seat, home: str, environ: Mapping[str, str] | None = None
                    ) -> dict[str, str]:
    """A self-hosted seat's server, its key, and a private GEMINI_CLI_HOME
    (SELF_HOSTED_USER_SETTINGS in it): agents/selfhosted.py."""
    return {"GEMINI_CLI_HOME": home, "GOOGLE_GEMINI_BASE_URL": selfhosted.root(seat),
            "GEMINI_API_KEY": selfhosted.server_key(seat, environ)}


def self_hosted_workspace(seat: Seat) -> dict[str, Any]:
    """The workspace settings a self-hosted seat adds: every utility alias on the seat's
    model, and compression at COMPACT_AT of the seat's window."""
    model = str(seat.model)
    return {
        "aliases": {name: {"extends": "base", "modelConfig": {"model": model}}
                    for name in UTILITY_ALIASES},
        "compressionThreshold": round(min(0.5, selfhosted.window(seat) * selfhosted.COMPACT_AT
                                          / ASSUMED_WINDOW), 4),
    }


# What council keeps in .gemini/ of an agent's folder (clis.GEMINI.kept): the workspace
# settings `prepare` rewrites at every start, and an empty .env.
SETTINGS = ".gemini/settings.json"
# gemini 0.61 also loads, at every level GEMINI.md is looked for, each name in the
# `context.fileName` setting (a name or a list) of every settings file it merges: the
# system defaults, the user's, the workspace's and the system's.
SETTINGS_LIMIT = 1 << 20  # a settings file is a few KB; read no more than this of one
_JSON_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)


def context_files(folder: Path, environ: Mapping[str, str] | None = None
                  ) -> tuple[str, ...]:
    """The names gemini would load as context besides GEMINI.md: `context.fileName` of the
    system defaults, the user's settings ($GEMINI_CLI_HOME or ~, `.gemini/settings.json`),
    the settings in the agent's own `.gemini/` and the system settings. gemini joins each
    to every folder it looks in, so a leading `/` is dropped; a name that climbs out (`..`)
    or is empty is left out."""
    env = os.environ if environ is None else environ
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or (
        "/Library/Application Support/GeminiCli/settings.json" if sys.platform == "darwin"
        else "/etc/gemini-cli/settings.json")
    defaults = env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or str(
        Path(system).parent / "system-defaults.json")
    home = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home())
    settings = [_settings(defaults), _settings(home / SETTINGS), _settings(system)]
    if agentfs.describe(folder / ".gemini") == "a folder":  # its own: never through a link
        settings.append(_settings(folder / SETTINGS, follow_link=False))
    found: list[str] = []
    for data in settings:
        context = data.get("context")
        value = context.get("fileName") if isinstance(context, dict) else None
        for name in value if isinstance(value, list) else [value]:
            clean = _relative(name) if isinstance(name, str) else None
            if clean and clean not in found:
                found.append(clean)
    return tuple(found)


def _relative(name: str) -> str | None:
    """A context file name as gemini joins it to a folder (`path.join` keeps a leading `/`
    inside), or None for one that names no entry below it."""
    clean = posixpath.normpath(name.strip().lstrip("/") or ".")
    return None if clean == "." or clean == ".." or clean.startswith("../") else clean


def _settings(path: str | os.PathLike[str], follow_link: bool = True) -> dict[str, Any]:
    """A gemini settings file as a mapping ({} when missing, unreadable or not a JSON object;
    gemini allows comments in it). The user's and the system's are read through a link they
    made (once, bounded, never blocking); an agent's is not read through any."""
    try:
        raw = agentfs.read(os.path.realpath(path) if follow_link else path, SETTINGS_LIMIT)
        data = json.loads(_JSON_COMMENT.sub(lambda m: m.group(1) or "", raw.decode()))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def dotenv_names(path: Path, limit: int = 64 << 10) -> set[str]:
    """The variables a .env file sets to something (`NAME=value`, `export NAME=value`), from
    its first `limit` bytes of a plain file (a FIFO or a device is not waited on); the values
    are never kept."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return set()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return set()
        text = os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return set()
    finally:
        os.close(fd)
    found = set()
    for line in text.splitlines():
        head, sep, value = line.strip().partition("=")
        words = head.split()
        if words[:1] == ["export"]:
            words = words[1:]
        value = value.strip().strip("'\"").strip()
        if sep and len(words) == 1 and words[0].isidentifier() and value \
                and not value.startswith("#"):
            found.add(words[0])
    return found


def hook_env(home: Path) -> dict[str, str]:
    """What gemini merges into the hook shell's environment (the hook's `env`, read in 0.61's
    hook runner): an empty HOME of council's, with no ~/.bashrc in it; SHLVL=1, so bash counts
    itself a nested shell (level 2) and skips the remote-shell start-up altogether,
    /etc/bash.bashrc included; and no BASH_ENV file to source."""
    return {"HOME": str(home), "SHLVL": "1", "BASH_ENV": ""}


def write_workspace(folder: Path, settings: dict[str, Any]) -> None:
    """`folder`'s `.gemini`: made afresh (whatever an agent left there, a link included, is
    removed unfollowed), with council's settings and an empty `.env` that ends gemini's .env
    search. Also used for a one-shot call's folder."""
    agentfs.fresh_dir(folder, ".gemini")
    agentfs.write(folder, ".gemini/.env", b"")
    agentfs.write(folder, SETTINGS, json.dumps(settings, indent=2))


class GeminiAdapter:
    cli = "gemini"
    facts = clis.GEMINI
    native_loop = True
    # `--resume` of a session that used tools re-sends each function response twice, which
    # the API rejects (400); an interrupted gemini starts a fresh session on its partial report.
    resumes_sessions = False
    instructions = INSTRUCTIONS
    private_home = False  # auto_edit offers no shell; its file tools stay in the workspace

    def lost_session(self, said: str) -> bool:
        return "Invalid session identifier" in said  # exit 42 (never resumed: see above)

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        settings = self._settings(job)
        env = {
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            # One process instead of a relaunched child whose parent ignores SIGTERM.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            # council's instructions instead of gemini's coding-agent system prompt.
            "GEMINI_SYSTEM_MD": str(job.system_prompt(self.instructions)),
        }
        if job.seat.self_hosted and job.home is not None:
            # A GEMINI_CLI_HOME of the seat's own: no login of the user's, API-key auth.
            job.home.mkdir(parents=True, exist_ok=True)
            agentfs.write(job.home, SETTINGS, json.dumps(SELF_HOSTED_USER_SETTINGS, indent=2))
            env.update(self_hosted_env(job.seat, str(job.home)))
        if job.seat.mcp_servers:
            # The variables the servers' env reads, from council's environment, now.
            env.update(given(job.seat.mcp_servers, os.environ, job.seat.name))
            # A server is started without every variable gemini has: the ones it is given,
            # the ones above, and GEMINI_CLI, which gemini sets for its children.
            settings["mcpServers"] = mcp_servers(job.seat.mcp_servers, [
                *visible(self.facts, os.environ, job.seat.env), *env, "GEMINI_CLI"])
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

    def _settings(self, job: AgentJob) -> dict[str, Any]:
        """The seat's workspace settings, with the AfterAgent hook that loops it."""
        home = job.hook_home()
        settings: dict[str, Any] = {
            # The default 10 attempts with backoff turn a dead or rate-limiting endpoint
            # into ~5 minutes of silence per request.
            "general": {"maxAttempts": 3},
            # Only the tools the phase needs (no invoke_agent, enter_plan_mode…), and the
            # tools of the seat's own MCP servers (mcp_core).
            "tools": {"core": [*TOOLS[job.tools], *mcp_core(job.seat.mcp_servers)]},
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
            local = self_hosted_workspace(job.seat)
            configs = settings.setdefault("modelConfigs", {"customAliases": {}})
            configs["customAliases"] = {**local["aliases"], **configs["customAliases"]}
            settings["model"]["compressionThreshold"] = local["compressionThreshold"]
        return settings

    def one_shot(self, folder: Path, prompt: Path, model: str | None = None) -> Invocation:
        """No built-in tool at all (an empty `tools.core`), few retries, no extension or
        server of the user's; the folder is council's own, so it is trusted, and its empty
        .env ends gemini's search for one in the folders above."""
        write_workspace(folder, {"tools": {"core": []}, "general": {"maxAttempts": 3}})
        argv = ["gemini", "-e", "none", *mcp_args(), "-o", "stream-json",
                *(["-m", model] if model else [])]
        env = {"GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"}
        return Invocation(tuple(argv), folder, env, stdin_file=prompt)

    def answer(self, log: Path) -> str:
        """The assistant's messages after the last user message, joined."""
        parts: list[str] = []
        for event in json_events(log):
            if event.get("type") != "message":
                continue
            if event.get("role") == "assistant" and isinstance(event.get("content"), str):
                parts.append(event["content"])
            elif event.get("role") == "user":
                parts = []
        return "".join(parts)

    def own_variables(self, environ: Mapping[str, str]) -> set[str]:
        return set()  # its facts' prefixes and names are all it reads

    def memory_files(self, folder: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Its facts' files, and the context files its settings name (context_files), at
        the top and at any depth."""
        context = context_files(folder)
        return ((*self.facts.memory_files, *self.facts.config_entries, *context),
                (*self.facts.nested_memory, *context))

    def login_elsewhere(self, config_dir: Path, env: Mapping[str, str]) -> str | None:
        return None  # its keys and its login file are all

    def stranded_key(self, env: Mapping[str, str], home: Path) -> str | None:
        """gemini on its own reads a key from ~/.gemini/.env or ~/.env (its home:
        GEMINI_CLI_HOME, else HOME) when no `.env` is nearer its folder; council ends that
        search in each agent's workspace (an empty .gemini/.env), so a key kept only there
        never reaches an agent. Which key, in which file: names only, never a value."""
        folder = Path(logins.config_dir(self.cli, env, str(home)))
        for path in (folder / ".env", folder.parent / ".env"):
            found = dotenv_names(path)
            for name in self.facts.keys:
                if name in found:
                    return f"{name} is set in {path}"
        return None

    def fetches(self, event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
        """web_fetch's calls (`tool_use`) and every tool's results (`tool_result`)."""
        kind = event.get("type")
        if kind == "tool_use" and event.get("tool_name") == FETCH_TOOL:
            url = page_url(event.get("parameters"))
            if url:
                yield str(event.get("tool_id")), url, None
        elif kind == "tool_result" and isinstance(event.get("output"), str):
            yield str(event.get("tool_id")), None, event["output"]

    def doctor_notes(self) -> list[str]:
        return []  # nothing of the user's config changes its containment

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

    def classify(self, events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
                 now: datetime, tz: tzinfo | None = None) -> Failure | None:
        return classify(events, stderr, returncode, now, tz)

    def answered_models(self, events: Iterable[dict[str, Any]]) -> list[str]:
        return answered_models(events)

    def own_retry(self, event: dict[str, Any]) -> bool:
        return False  # its stream-json shows none of its retries (stderr says some)

    def fatal(self, event: dict[str, Any]) -> Failure | None:
        return None  # it does not retry a refused login

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
        """Each model in `stats.models` at its own price (gemini may answer a flash-lite seat
        on flash: the asked model is listed with no tokens); the totals at the seat's model
        where the CLI names none."""
        if event.get("type") == "result" and isinstance(event.get("stats"), dict):
            stats = event["stats"]
            models = stats.get("models")
            parts = [(str(name), figures) for name, figures in models.items()
                     if isinstance(figures, dict)] if isinstance(models, dict) else []
            if not any(_tokens(figures) for _, figures in parts):
                parts = [(self.model or "", stats)]
            for name, figures in parts:
                tokens_in = figures.get("input_tokens") or figures.get("input") or 0
                tokens_out = figures.get("output_tokens") or 0
                cached = figures.get("cached") or 0
                if not (tokens_in or tokens_out):
                    continue
                self.sum = self.sum + estimate("gemini", name or None, int(tokens_in),
                                               int(tokens_out), int(cached))

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
# The HTTP status each `-o stream-json` exit code stands for (HTTP_EXIT_CODES' words).
EXIT_STATUS = {173: 429, 247: 503, 244: 500, 145: 401, 147: 403, 144: 400}
GEMINI_AUTH = re.compile(r"UNAUTHENTICATED|PERMISSION_DENIED|ACCESS_TOKEN_EXPIRED|"
                          r"API key not valid|API_KEY_INVALID|invalid authentication|"
                          r"Invalid auth method", re.I)
DAILY = re.compile(r"exhausted your daily quota|PerDay|Daily", re.I)
GEMINI_QUOTA = re.compile(r"limit:\s*0(?![\d.])|INSUFFICIENT_G1_CREDITS_BALANCE|"
                           r"QUOTA_EXHAUSTED|TerminalQuotaError", re.I)
CAPACITY = re.compile(r"exhausted your capacity|capacity exceeded|MODEL_CAPACITY_EXHAUSTED|"
                       r"MODEL_CAPACITY_EXCEEDED", re.I)
RETRY_DELAY_MS = re.compile(r"retryDelayMs:\s*(\d+)")
GEMINI_STATUS = re.compile(r"\"code\":\s*(\d{3})|\bstatus:\s*(\d{3})\b")


def classify(events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
             now: datetime, tz: tzinfo | None = None) -> Failure | None:
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
        return replace(base, kind=Kind.OVERLOADED, wait=wait)
    if DAILY.search(text) or ("TerminalQuotaError" in said and DAILY.search(said)):
        return replace(base, kind=Kind.QUOTA, window="day",
                        resets_at=next_pacific_midnight(now))
    if GEMINI_QUOTA.search(said):
        return replace(base, kind=Kind.QUOTA, wait=wait)
    if status in (401, 403) or returncode == 41 or GEMINI_AUTH.search(said):
        return replace(base, kind=Kind.AUTH)
    # gemini throws a 503 as a RetryableQuotaError too: the status decides first.
    if (status is not None and status >= 500) or re.search(
            r"overloaded|UNAVAILABLE|INTERNAL", text):
        return replace(base, kind=Kind.OVERLOADED, wait=wait)
    if status == 429 or re.search(r"RESOURCE_EXHAUSTED|exceeded your current quota|"
                                   r"RetryableQuotaError", said):
        return replace(base, kind=Kind.RATE_LIMIT, wait=wait, window="minute")
    if re.search(r"\bterminated\b|other side closed|ECONNRESET|premature close", said):
        return replace(base, kind=Kind.STREAM_CUT)
    if re.search(r"fetch failed|ETIMEDOUT|timed? ?out|ECONNREFUSED|INVALID_STREAM", said,
                  re.I) or (isinstance(error, dict) and error.get("type") == "INVALID_STREAM"):
        return replace(base, kind=Kind.NO_ANSWER)
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
