"""Before a run: does each self-hosted seat's server answer, serve the seat's model, with a
window the CLI can work in? A seat with `base_url` needs no vendor login; this is its check.

In about a second (BUDGET per seat, the seats in parallel): short requests, only to the URL
the user configured (no proxy, no other host). Where the server lists its models (the OpenAI
`GET /v1/models`, Ollama's `GET /api/tags`, the Gemini API's `GET /v1beta/models`), the
seat's model must be among them; a server that lists none there (404) is taken at its word
when the run starts. council never asks a server to pull or load a model.

The window: a listing rarely states the one the server will use (Ollama's and LM Studio's
/v1/models state none; llama.cpp's states the model's trained length), so each server's own
place for it is asked, in turn, until one states it (`PROBES`): llama.cpp's `GET /props`
(`default_generation_settings.n_ctx`, the window of one request's slot), LM Studio's
`GET /api/v1/models` (a loaded instance's `config.context_length`), Ollama's `GET /api/ps`
(a loaded model's `context_length`) and, once /api/ps showed the server is Ollama,
`POST /api/show` (a `num_ctx` its Modelfile sets). A stated window below what the CLI is run
with is a problem; none stated is a note (Ollama's default, 4,096 tokens on a small GPU, is
not stated until the model is loaded).

The decisions (`listing_urls`, `listed`, `served_window`, `stated_window`, `problems`,
`notes`) are pure; `ask` is the one I/O edge."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from council import clis
from council.agents import selfhosted
from council.runoptions import Seat

TIMEOUT = 1.0  # seconds per request: a local server answers in milliseconds
BUDGET = 1.2  # seconds for all of one seat's requests (the seats are asked in parallel)
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


@dataclass(frozen=True)
class Probe:
    """One server's own place for the window it serves a model with."""

    server: str  # the server's name, as the user knows it
    method: str
    path: str  # under the server's root (base_url without a trailing /v1)
    fix: str  # how to raise the window on that server ({need}: the tokens needed)


PROBES = (
    Probe("llama.cpp", "GET", "/props",
          "restart llama-server with --ctx-size {need} or more (-c; it is shared among its "
          "--parallel slots)"),
    Probe("LM Studio", "GET", "/api/v1/models",
          "load it with a larger context: lms load {model} --context-length {need}"),
    Probe("Ollama", "GET", "/api/ps",
          "set OLLAMA_CONTEXT_LENGTH={need} for the server (or `PARAMETER num_ctx {need}` in "
          "the model's Modelfile) and reload the model (ollama stop {model})"),
    Probe("Ollama", "POST", "/api/show",
          "set `PARAMETER num_ctx {need}` in the model's Modelfile (or OLLAMA_CONTEXT_LENGTH="
          "{need} for the server)"),
)


@dataclass(frozen=True)
class Served:
    """The window a server states it will use for the seat's model, and who said so."""

    tokens: int
    server: str
    fix: str


def _tokens(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def stated_window(probe: Probe, body: Any, model: str) -> int | None:
    """The window `probe`'s answer states the server will use for `model`, or None: a model
    not loaded yet (LM Studio, Ollama's ps) is loaded with a default that is not stated."""
    if not isinstance(body, Mapping):
        return None
    if probe.path == "/props":  # one model per llama-server: its slot's window
        settings = body.get("default_generation_settings")
        return _tokens(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    if probe.path == "/api/show":
        found = re.search(r"^num_ctx\s+(\d+)", str(body.get("parameters") or ""), re.M)
        if not found:
            return None
        info = body.get("model_info")
        trained = [t for k, v in (info.items() if isinstance(info, Mapping) else ())
                   if k.endswith(".context_length") and (t := _tokens(v))]
        return min([int(found.group(1)), *trained])  # Ollama caps num_ctx at the trained one
    windows = []
    for entry in _entries(body):
        if not matches(model, _names(entry) | {str(entry.get("key"))}):
            continue
        if probe.path == "/api/ps":
            windows.append(_tokens(entry.get("context_length")))
        instances = entry.get("loaded_instances")  # LM Studio's
        for instance in instances if isinstance(instances, list) else ():
            config = instance.get("config") if isinstance(instance, Mapping) else None
            windows.append(_tokens(config.get("context_length"))
                           if isinstance(config, Mapping) else None)
    known = [w for w in windows if w]
    return min(known) if known else None


def probe_url(seat: Seat, probe: Probe) -> str:
    return selfhosted.root(seat).removesuffix("/v1") + probe.path


def listing_urls(seat: Seat) -> list[str]:
    """Where the seat's server may list its models, in the order asked."""
    root = selfhosted.root(seat)
    v1 = root if root.endswith("/v1") else f"{root}/v1"
    return [listing.format(root=root, v1=v1, base=root.removesuffix("/v1"))
            for listing in clis.facts(seat.cli).listings]


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


def where(seat: Seat) -> str:
    """How a problem line names the seat and its endpoint."""
    return f"{seat.name} ({seat.cli} at {seat.base_url})"


def problems(seat: Seat, answers: Sequence[Answer], stated: Served | None = None) -> list[str]:
    """One line per problem with the seat's server, each naming the seat and its endpoint
    (`faults`, with `where`)."""
    return [f"{where(seat)}: {fault}" for fault in faults(seat, answers, stated)]


def faults(seat: Seat, answers: Sequence[Answer], stated: Served | None = None) -> list[str]:
    """Each problem with the seat's server. `stated`: the window the server's own place
    states (`PROBES`), which a listing's field does not override."""
    model = str(seat.model)
    lines = []
    floor = clis.facts(seat.cli).min_window
    if seat.context_window is not None and seat.context_window < floor:
        lines.append(f"context_window {seat.context_window} is below the {floor} "
                     f"tokens {seat.cli} needs: serve {model} with a larger window "
                     f"({selfhosted.RECOMMENDED_WINDOW} recommended) and set it")
    if seat.api_key_env and not _key_set(seat):
        lines.append(f"api_key_env names {seat.api_key_env}, which is not set")
    if not answers or all(a.status is None for a in answers):
        why = answers[0].error if answers else "no URL"
        return [f"the server does not answer ({why}): start it, or fix base_url",
                *lines]
    for answer in answers:
        if answer.status in (401, 403):
            return [f"the server refused council's key ({answer.status}): "
                    "set api_key_env to the variable that holds its key", *lines]
        names = listed(answer.body) if answer.status == 200 else None
        if names is None:
            continue  # it does not list models here
        if not matches(model, names):
            some = ", ".join(sorted(names)[:5]) or "none"
            lines.append(f"model {model} is not among the models it serves "
                         f"({some}); council never pulls one: load or pull it yourself")
            break
        listed_window = served_window(answer.body, model)
        if stated is None and listed_window is not None:
            stated = Served(listed_window, "the server",
                            "serve {model} with a window of {need} tokens or more")
        break
    need = max(floor, selfhosted.window(seat))
    if stated is not None and stated.tokens < need:
        fix = stated.fix.format(need=need, model=model)
        lines.append(f"{stated.server} gives {model} a window of {stated.tokens} "
                     f"tokens, below the {need} {seat.cli} is run with: {fix}")
    return lines


def notes(seat: Seat, answers: Sequence[Answer] = (), stated: Served | None = None,
          servers: Sequence[str] = ()) -> list[str]:
    """What is not a problem but the user should know: a window assumed, or not verified
    (the server answered but stated none; `servers`: the ones that answered a probe)."""
    return [*assumed(seat), *unverified(seat, answers, stated, servers)]


def assumed(seat: Seat) -> list[str]:
    """The window council assumes for a seat that sets none."""
    if seat.context_window is not None:
        return []
    return [f"{seat.name}: no context_window set; running {seat.cli} as if the "
            f"server gives {seat.model} {selfhosted.DEFAULT_WINDOW} tokens"]


def unverified(seat: Seat, answers: Sequence[Answer] = (), stated: Served | None = None,
               servers: Sequence[str] = ()) -> list[str]:
    """That the server answered but stated no window for the seat's model."""
    lines = []
    listed_window = next((w for a in answers if a.status == 200
                          and (w := served_window(a.body, str(seat.model)))), None)
    if stated is None and listed_window is None and any(a.status for a in answers):
        hint = (f"; Ollama's default may be 4096: set OLLAMA_CONTEXT_LENGTH="
                f"{selfhosted.window(seat)} for the server" if "Ollama" in servers else "")
        lines.append(f"{seat.name}: the window was not verified ({seat.base_url} states none "
                     f"for {seat.model}{' until it is loaded' if servers else ''}){hint}")
    return lines


def _key_set(seat: Seat) -> bool:
    import os

    return bool(seat.api_key_env and os.environ.get(seat.api_key_env))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed: urllib would resend the key's headers to wherever it
    points, and only the server the user configured is asked (its 3xx is its answer)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def ask(url: str, key: str | None, timeout: float = TIMEOUT,
        data: Mapping[str, Any] | None = None) -> Answer:
    """GET `url` (POST `data` as JSON, when given) directly (no proxy: only the user's
    server is contacted), bounded."""
    headers = {"accept": "application/json"}
    if data is not None:
        headers["content-type"] = "application/json"
    if key:
        headers["authorization"] = f"Bearer {key}"
        headers["x-goog-api-key"] = key
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
    if not url.startswith(("http://", "https://")):  # Seat.validate checked it; never file:
        return Answer(url, None, error="not an http(s) URL")
    request = urllib.request.Request(  # noqa: S310
        url, headers=headers, method="GET" if data is None else "POST",
        data=None if data is None else json.dumps(data).encode())
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


def _key(seat: Seat) -> str | None:
    import os

    return os.environ.get(seat.api_key_env) if seat.api_key_env else None


def _answers(seat: Seat, deadline: float) -> list[Answer]:
    """The seat's listings, asked in turn until one answers 200 or none answers at all."""
    answers = []
    for url in listing_urls(seat):
        answer = ask(url, _key(seat), _left(deadline))
        answers.append(answer)
        if answer.status is None or answer.status == 200:
            break
    return answers


def _left(deadline: float) -> float:
    return max(0.05, min(TIMEOUT, deadline - time.monotonic()))


def _stated(seat: Seat, deadline: float) -> tuple[Served | None, list[str]]:
    """The window the seat's server states in its own place (`PROBES`, in turn, stopping at
    the first that states one or when the seat's time is up), and the servers that answered
    a probe. None for a CLI whose server states its window in none of these (gemini's, a
    Gemini API gateway: clis.py's `window_probes`)."""
    if not clis.facts(seat.cli).window_probes:
        return None, []
    model, answered = str(seat.model), []
    for probe in PROBES:
        if time.monotonic() >= deadline:
            break
        if probe.method == "POST" and probe.server not in answered:
            continue  # a POST only to a server that showed it is the one that takes it
        data = {"model": model} if probe.method == "POST" else None
        answer = ask(probe_url(seat, probe), _key(seat), _left(deadline), data)
        if answer.status is None:
            break  # it stopped answering: the rest would only wait too
        if answer.status != 200:
            continue
        answered.append(probe.server)
        tokens = stated_window(probe, answer.body, model)
        if tokens is not None:
            return Served(tokens, probe.server, probe.fix), answered
    return None, answered


def _ask_all(seat: Seat, budget: float) -> tuple[list[Answer], Served | None, list[str]]:
    deadline = time.monotonic() + budget
    answers = _answers(seat, deadline)
    if not answers or answers[-1].status is None:
        return answers, None, []
    return (answers, *_stated(seat, deadline))


@dataclass(frozen=True)
class SeatCheck:
    """One self-hosted seat's server, as it answered: each problem (`faults`, without the
    seat's name), the window assumed and whether it went unverified (notes' lines)."""

    seat: Seat
    faults: tuple[str, ...]
    assumed: tuple[str, ...]
    unverified: tuple[str, ...]

    @property
    def problems(self) -> list[str]:
        return [f"{where(self.seat)}: {fault}" for fault in self.faults]

    @property
    def notes(self) -> list[str]:
        return [*self.assumed, *self.unverified]


def checks(seats: Sequence[Seat], budget: float = BUDGET) -> list[SeatCheck]:
    """Every self-hosted seat among `seats`, its server asked (in parallel, each within
    `budget` seconds)."""
    hosted = [s for s in seats if s.self_hosted]
    if not hosted:
        return []
    with ThreadPoolExecutor(max_workers=len(hosted)) as pool:
        found = list(pool.map(lambda s: _ask_all(s, budget), hosted))
    return [SeatCheck(seat, tuple(faults(seat, answers, stated)), tuple(assumed(seat)),
                      tuple(unverified(seat, answers, stated, servers)))
            for seat, (answers, stated, servers) in zip(hosted, found, strict=True)]


def check(seats: Sequence[Seat], budget: float = BUDGET) -> tuple[list[str], list[str]]:
    """The problems and the notes of every self-hosted seat among `seats` (`checks`)."""
    found = checks(seats, budget)
    return ([p for c in found for p in c.problems], [n for c in found for n in c.notes])
