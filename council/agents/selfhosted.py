"""A seat on a server the user runs (a seat with `base_url`): what every CLI's settings for one
share. What each CLI needs besides the URL is its adapter's (`self_hosted_…`).

A URL alone is not enough, and each CLI fails its own way without the rest: claude assumes a
200K window and sends side calls to its small/fast model; codex needs a model provider of its
own (`wire_api = "responses"`, the only one 0.171 accepts) and the window; gemini routes its
utility calls (compression, loop checks, edit fixes) to flash models a local server lacks.

Such a seat gets none of its vendor's variables (environment.agent_env, `vendor_vars`) and a
private CLI home with no vendor login in it: no key or token of the user's reaches a CLI that
talks to another server. The server's key, where it wants one, comes from the variable the
seat's `api_key_env` names, else a placeholder (the CLIs refuse to start without some key).
Pure: the adapters write what they make of these into the seat's private home."""

from __future__ import annotations

import os
from collections.abc import Mapping

from council.runoptions import Seat

# The smallest window each CLI's research loop fits in is its `min_window` (clis.py), checked
# by the preflight against the seat's context_window and what the server says it serves;
# users report 64K works well.
RECOMMENDED_WINDOW = 65_536
# A key the CLIs send when the server wants none: each refuses to start with no key at all.
PLACEHOLDER_KEY = "council-self-hosted"
# What a seat without context_window is run with: the floor (the preflight says so).
DEFAULT_WINDOW = 32_768

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
