"""Before a run: does each self-hosted seat's server answer, serve the seat's model, with a
window the CLI can work in? A seat with `base_url` needs no vendor login; this is its check.

In about a second: one short request per listing, the seats in parallel, and only to the URL
the user configured (no proxy, no other host). Where the server lists its models (the OpenAI
`GET /v1/models`, Ollama's `GET /api/tags`, the Gemini API's `GET /v1beta/models`), the
seat's model must be among them; a server that lists none there (404) is taken at its word
when the run starts. A window the listing states (LM Studio's, vLLM's, llama.cpp's fields)
must hold the seat's context_window. council never asks a server to pull or load a model.

The decisions (`listing_urls`, `listed`, `served_window`, `problems`) are pure; `ask` is the
one I/O edge."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from council.agents import selfhosted
from council.runoptions import Seat

TIMEOUT = 1.0  # seconds per request: a local server answers in milliseconds
MAX_BYTES = 4 << 20  # of a listing: a server with thousands of models sends a few hundred KB
# Where a listing entry states the window it serves a model with.
WINDOW_FIELDS = ("loaded_context_length", "max_context_length", "context_length",
                 "max_model_len", "n_ctx", "inputTokenLimit")


@dataclass(frozen=True)
class Answer:
    """What one listing URL said: a status (None: no answer at all), its JSON, or why not."""

    url: str
    status: int | None
    body: Any = None
    error: str | None = None


def listing_urls(seat: Seat) -> list[str]:
    """Where the seat's server may list its models, in the order asked."""
    root = selfhosted.root(seat)
    if seat.cli == "gemini":
        return [f"{root}/v1beta/models"]
    v1 = root if root.endswith("/v1") else f"{root}/v1"
    return [f"{v1}/models", f"{root.removesuffix('/v1')}/api/tags"]


def _entries(body: Any) -> list[Mapping[str, Any]]:
    if not isinstance(body, Mapping):
        return []
    found = [*(body.get("data") or []), *(body.get("models") or [])]
    return [e for e in found if isinstance(e, Mapping)]


def _names(entry: Mapping[str, Any]) -> set[str]:
    names = {str(entry[k]) for k in ("id", "name", "model") if isinstance(entry.get(k), str)}
    return {n.removeprefix("models/") for n in names}


def listed(body: Any) -> set[str] | None:
    """The model names a listing holds, or None when it is not a listing."""
    if not isinstance(body, Mapping) or not ({"data", "models"} & set(body)):
        return None
    return set().union(*(_names(e) for e in _entries(body)))


def matches(model: str, names: set[str]) -> bool:
    """Ollama lists `qwen3:latest` for a model asked for as `qwen3`."""
    return model in names or f"{model}:latest" in names


def served_window(body: Any, model: str) -> int | None:
    """The window a listing says it serves `model` with, where it says one."""
    for entry in _entries(body):
        if not matches(model, _names(entry)):
            continue
        places = [entry, entry.get("meta") or {}]
        for place in places:
            for key in WINDOW_FIELDS:
                value = place.get(key) if isinstance(place, Mapping) else None
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def problems(seat: Seat, answers: Sequence[Answer]) -> list[str]:
    """One line per problem with the seat's server, each naming the seat and its endpoint."""
    where = f"{seat.name} ({seat.cli} at {seat.base_url})"
    model = str(seat.model)
    lines = []
    floor = selfhosted.MIN_WINDOW[seat.cli]
    if seat.context_window is not None and seat.context_window < floor:
        lines.append(f"{where}: context_window {seat.context_window} is below the {floor} "
                     f"tokens {seat.cli} needs: serve {model} with a larger window "
                     f"({selfhosted.RECOMMENDED_WINDOW} recommended) and set it")
    if seat.api_key_env and not _key_set(seat):
        lines.append(f"{where}: api_key_env names {seat.api_key_env}, which is not set")
    if not answers or all(a.status is None for a in answers):
        why = answers[0].error if answers else "no URL"
        return [f"{where}: the server does not answer ({why}): start it, or fix base_url",
                *lines]
    for answer in answers:
        if answer.status in (401, 403):
            return [f"{where}: the server refused council's key ({answer.status}): "
                    "set api_key_env to the variable that holds its key", *lines]
        names = listed(answer.body) if answer.status == 200 else None
        if names is None:
            continue  # it does not list models here
        if not matches(model, names):
            some = ", ".join(sorted(names)[:5]) or "none"
            lines.append(f"{where}: model {model} is not among the models it serves "
                         f"({some}); council never pulls one: load or pull it yourself")
            break
        served = served_window(answer.body, model)
        if served is not None and served < max(floor, seat.context_window or 0):
            lines.append(f"{where}: the server gives {model} a window of {served} tokens, "
                         f"below {max(floor, seat.context_window or 0)}: raise it on the "
                         "server (Ollama: num_ctx / OLLAMA_CONTEXT_LENGTH)")
        break
    return lines


def notes(seat: Seat) -> list[str]:
    """What is not a problem but the user should know."""
    if seat.context_window is None:
        return [f"{seat.name}: no context_window set; running {seat.cli} as if the server "
                f"gives {seat.model} {selfhosted.DEFAULT_WINDOW} tokens"]
    return []


def _key_set(seat: Seat) -> bool:
    import os

    return bool(seat.api_key_env and os.environ.get(seat.api_key_env))


def ask(url: str, key: str | None, timeout: float = TIMEOUT) -> Answer:
    """GET `url` directly (no proxy: only the user's server is contacted), bounded."""
    headers = {"accept": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
        headers["x-goog-api-key"] = key
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    if not url.startswith(("http://", "https://")):  # Seat.validate checked it; never file:
        return Answer(url, None, error="not an http(s) URL")
    request = urllib.request.Request(url, headers=headers, method="GET")  # noqa: S310
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read(MAX_BYTES)
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        return Answer(url, exc.code)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Answer(url, None, error=str(reason) or type(exc).__name__)
    try:
        return Answer(url, status, json.loads(raw))
    except ValueError:
        return Answer(url, status)


def _answers(seat: Seat, timeout: float) -> list[Answer]:
    """The seat's listings, asked in turn until one answers 200 or none answers at all."""
    import os

    key = os.environ.get(seat.api_key_env) if seat.api_key_env else None
    answers = []
    for url in listing_urls(seat):
        answer = ask(url, key, timeout)
        answers.append(answer)
        if answer.status is None or answer.status == 200:
            break
    return answers


def check(seats: Sequence[Seat], timeout: float = TIMEOUT) -> tuple[list[str], list[str]]:
    """The problems and the notes of every self-hosted seat among `seats`, asked in
    parallel."""
    hosted = [s for s in seats if s.self_hosted]
    if not hosted:
        return [], []
    with ThreadPoolExecutor(max_workers=len(hosted)) as pool:
        found = list(pool.map(lambda s: _answers(s, timeout), hosted))
    lines = [p for seat, answers in zip(hosted, found, strict=True)
             for p in problems(seat, answers)]
    return lines, [n for seat in hosted for n in notes(seat)]
