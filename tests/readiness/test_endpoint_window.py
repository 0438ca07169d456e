"""The preflight's window check asks each server where it states the window it will really
use, not only its /v1/models listing: Ollama and LM Studio list none there and llama.cpp lists
the model's trained length, so Ollama's default 4,096-token window would otherwise pass."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from local_server import HANG, LocalServer, serving

from council.readiness import endpoint
from council.runoptions import Seat


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    with serving() as server:
        yield server


LISTING = {"object": "list", "data": [{"id": "qwen3", "object": "model"}]}


def seat(url: str, cli: str = "claude", **more: object) -> Seat:
    return Seat.from_dict(cli, {"cli": cli, "model": "qwen3", "base_url": url,
                                "context_window": 65536, **more}, "t")


def serve(server: LocalServer, **routes: tuple[int, object]) -> None:
    server.routes[("GET", "/v1/models")] = (200, LISTING)
    for key, answer in routes.items():
        method, _, path = key.partition("_")
        server.routes[(method.upper(), "/" + path.replace("__", "/"))] = answer


def test_ollamas_loaded_window_below_the_seats_is_one_error_line(
        local_server: LocalServer) -> None:
    serve(local_server, get_api__ps=(200, {"models": [
        {"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 4096}]}))
    problems, notes = endpoint.check([seat(local_server.url)])
    (line,) = problems
    assert line.startswith(f"claude (claude at {local_server.url}): Ollama gives qwen3 a "
                           "window of 4096 tokens, below the 65536 claude is run with")
    assert "OLLAMA_CONTEXT_LENGTH=65536" in line
    assert not [n for n in notes if "not verified" in n]
    # Stopped at the first server that stated it: Ollama's /api/show was not asked.
    assert local_server.paths() == ["GET /v1/models", "GET /props", "GET /api/v1/models",
                                    "GET /api/ps"]


def test_ollamas_loaded_window_that_holds_the_seats_passes(local_server: LocalServer) -> None:
    serve(local_server, get_api__ps=(200, {"models": [
        {"name": "qwen3:latest", "context_length": 65536}]}))
    assert endpoint.check([seat(local_server.url)]) == ([], [])


def test_ollamas_modelfile_num_ctx_is_read_with_a_post_to_api_show(
        local_server: LocalServer) -> None:
    serve(local_server, get_api__ps=(200, {"models": []}), post_api__show=(200, {
        "parameters": 'stop                           "<|im_end|>"\n'
                      "num_ctx                        8192",
        "model_info": {"qwen3.context_length": 40960}}))
    (line,) = endpoint.check([seat(local_server.url, "codex")])[0]
    assert "Ollama gives qwen3 a window of 8192 tokens, below the 65536 codex" in line
    assert "num_ctx 65536" in line
    (show,) = [body for method, path, body in local_server.asked if method == "POST"]
    assert show == {"model": "qwen3"}


def test_ollama_with_nothing_stated_is_a_note_not_an_error(local_server: LocalServer) -> None:
    serve(local_server, get_api__ps=(200, {"models": []}),
          post_api__show=(200, {"parameters": "", "model_info": {}}))
    problems, notes = endpoint.check([seat(local_server.url)])
    assert problems == []
    (note,) = notes
    assert note.startswith("claude: the window was not verified")
    assert "OLLAMA_CONTEXT_LENGTH=65536" in note


def test_lm_studios_loaded_instance_states_the_window(local_server: LocalServer) -> None:
    serve(local_server, get_api__v1__models=(200, {"models": [
        {"type": "llm", "key": "qwen3", "max_context_length": 131072,
         "loaded_instances": [{"id": "qwen3", "config": {"context_length": 4096}}]}]}))
    (line,) = endpoint.check([seat(local_server.url)])[0]
    assert "LM Studio gives qwen3 a window of 4096 tokens, below the 65536" in line
    assert "lms load qwen3 --context-length 65536" in line
    assert "POST /api/show" not in local_server.paths()  # not an Ollama: no POST to it


def test_llama_cpps_props_state_the_slots_window(local_server: LocalServer) -> None:
    # Its listing states the trained length, which is not the window it serves with.
    local_server.routes[("GET", "/v1/models")] = (200, {"data": [
        {"id": "qwen3", "meta": {"n_ctx_train": 131072}}]})
    local_server.routes[("GET", "/props")] = (200, {
        "default_generation_settings": {"n_ctx": 4096}, "total_slots": 1})
    (line,) = endpoint.check([seat(local_server.url)])[0]
    assert "llama.cpp gives qwen3 a window of 4096 tokens, below the 65536" in line
    assert "--ctx-size 65536" in line
    assert local_server.paths() == ["GET /v1/models", "GET /props"]


def test_a_server_that_states_no_window_anywhere_is_one_note(
        local_server: LocalServer) -> None:
    serve(local_server)
    problems, notes = endpoint.check([seat(local_server.url)])
    assert problems == []
    assert notes == [f"claude: the window was not verified ({local_server.url} states none "
                     "for qwen3)"]


def test_a_server_slow_to_answer_a_probe_keeps_the_check_within_about_a_second(
        local_server: LocalServer) -> None:
    serve(local_server, get_props=(HANG, None))
    began = time.monotonic()
    problems, notes = endpoint.check([seat(local_server.url)])
    assert time.monotonic() - began < endpoint.BUDGET + 0.5
    assert problems == []
    assert [n for n in notes if "not verified" in n]


def test_a_redirect_is_not_followed_with_the_key(local_server: LocalServer) -> None:
    """Only the server the user configured is asked: a 3xx pointing elsewhere (here another
    path, standing for another host) is not followed, so the key's headers stay put."""
    answer = endpoint.ask(f"{local_server.url}/v1/models", "the-key")
    assert local_server.paths() == ["GET /v1/models"]  # 404: nothing was scripted
    local_server.routes[("GET", "/v1/models")] = (
        302, {"location": f"{local_server.url}/stolen"})
    answer = endpoint.ask(f"{local_server.url}/v1/models", "the-key")
    assert answer.status == 302
    assert "GET /stolen" not in local_server.paths()
