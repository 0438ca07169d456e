"""A seat on a server the user runs (a seat with `base_url`): what each CLI needs besides the
URL, from /work/shared/notes/self-hosted.md and the CLIs' own docs.

A URL alone is not enough, and each CLI fails its own way without the rest: claude assumes a
200K window and sends side calls to its small/fast model; codex needs a model provider of its
own (`wire_api = "responses"`, the only one 0.171 accepts) and the window; gemini routes its
utility calls (compression, loop checks, edit fixes) to flash models a local server lacks.

Such a seat gets none of its vendor's variables (environment.agent_env, `vendor_vars`) and a
private CLI home with no vendor login in it: no key or token of the user's reaches a CLI that
talks to another server. The server's key, where it wants one, comes from the variable the
seat's `api_key_env` names, else a placeholder (the CLIs refuse to start without some key).
Pure: the adapters write what these return into the seat's private home."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from council.runoptions import Seat

# The smallest window each CLI's research loop fits in (users report 32K at least, 64K
# recommended; Ollama's default 4,096 ends a claude session on its second turn). Checked by
# the preflight against the seat's context_window and what the server says it serves.
MIN_WINDOW = {"claude": 32_768, "codex": 32_768, "gemini": 32_768}
RECOMMENDED_WINDOW = 65_536
# A key the CLIs send when the server wants none: each refuses to start with no key at all.
PLACEHOLDER_KEY = "council-self-hosted"
# What a seat without context_window is run with: the floor (the preflight says so).
DEFAULT_WINDOW = 32_768

# gemini 0.61's built-in aliases for its side calls (docs/reference/configuration.md of the
# package): each is redefined to the seat's model, or gemini asks the server for
# gemini-3-flash-preview, flash-lite and others it does not serve.
GEMINI_UTILITY_ALIASES = (
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
GEMINI_ASSUMED_WINDOW = 1_048_576
COMPACT_AT = 0.8  # of the window: where codex and gemini compact a self-hosted seat's history


def window(seat: Seat) -> int:
    return seat.context_window or DEFAULT_WINDOW


def server_key(seat: Seat, environ: Mapping[str, str] | None = None) -> str:
    """The server's key (the value of the variable api_key_env names), else the placeholder."""
    environ = os.environ if environ is None else environ
    value = environ.get(seat.api_key_env) if seat.api_key_env else None
    return value or PLACEHOLDER_KEY


def root(seat: Seat) -> str:
    """The server's address as given, without a trailing slash."""
    assert seat.base_url is not None
    return seat.base_url.rstrip("/")


def claude_env(seat: Seat, home: str, environ: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """claude's variables for the seat: the server, a bearer token (ANTHROPIC_API_KEY empty,
    so no x-api-key of the user's), the small/fast model and the window, a private HOME, and
    none of the traffic to Anthropic's own hosts (updates, telemetry, error reports)."""
    model = str(seat.model)
    return {
        "HOME": home,
        "ANTHROPIC_BASE_URL": root(seat),
        "ANTHROPIC_AUTH_TOKEN": server_key(seat, environ),
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_SMALL_FAST_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(window(seat)),
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS": str(window(seat)),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def codex_provider(seat: Seat) -> str:
    """The seat's model provider id: never a built-in one (`openai`, `ollama`…), which codex
    refuses to redefine."""
    return f"council-{seat.name}"


def codex_base_url(seat: Seat) -> str:
    """codex POSTs to `{base_url}/responses`: the server's `/v1`."""
    url = root(seat)
    return url if url.endswith("/v1") else url + "/v1"


def codex_config(seat: Seat) -> str:
    """The seat's private CODEX_HOME config.toml: its own provider and window, no update
    check, analytics or feedback. JSON strings are TOML basic strings."""
    provider = codex_provider(seat)
    lines = [
        f"model = {json.dumps(seat.model)}",
        f"model_provider = {json.dumps(provider)}",
        f"model_context_window = {window(seat)}",
        f"model_auto_compact_token_limit = {int(window(seat) * COMPACT_AT)}",
        "check_for_update_on_startup = false",
        "",
        f"[model_providers.{json.dumps(provider)}]",
        f"name = {json.dumps(provider)}",
        f"base_url = {json.dumps(codex_base_url(seat))}",
        'wire_api = "responses"',
        *([f"env_key = {json.dumps(seat.api_key_env)}"] if seat.api_key_env else []),
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
    ]
    return "\n".join(lines)


def codex_env(seat: Seat, home: str, codex_home: str,
              environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A private HOME and CODEX_HOME (no login of the user's), and the server's key under the
    name the provider's env_key gives."""
    env = {"HOME": home, "CODEX_HOME": codex_home}
    if seat.api_key_env:
        env[seat.api_key_env] = server_key(seat, environ)
    return env


GEMINI_USER_SETTINGS: dict[str, Any] = {
    # Without it GOOGLE_GEMINI_BASE_URL selects the "gateway" auth type, which headless
    # gemini 0.61 refuses (exit 41).
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def gemini_env(seat: Seat, home: str, environ: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """The server, its key, and a private GEMINI_CLI_HOME (GEMINI_USER_SETTINGS in it)."""
    return {"GEMINI_CLI_HOME": home, "GOOGLE_GEMINI_BASE_URL": root(seat),
            "GEMINI_API_KEY": server_key(seat, environ)}


def gemini_workspace(seat: Seat) -> dict[str, Any]:
    """The workspace settings a self-hosted gemini seat adds: every utility alias on the
    seat's model, and compression at COMPACT_AT of the seat's window."""
    model = str(seat.model)
    return {
        "aliases": {name: {"extends": "base", "modelConfig": {"model": model}}
                    for name in GEMINI_UTILITY_ALIASES},
        "compressionThreshold": round(min(0.5, window(seat) * COMPACT_AT
                                          / GEMINI_ASSUMED_WINDOW), 4),
    }
