"""A scripted self-hosted model server on 127.0.0.1 for the preflight's endpoint checks: it
answers each (method, path) it is given with a status and JSON, anything else with 404, and
keeps every request it was asked, so a test sees what council asked and in what order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The paths a server "hangs" on until the test ends: a slow server, without a sleep.
HANG = -1


@dataclass
class LocalServer:
    url: str
    routes: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    asked: list[tuple[str, str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _ in self.asked]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _answer(self, method: str) -> None:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        state = self.server.state
        state.asked.append((method, self.path, json.loads(raw) if raw else None))
        status, body = state.routes.get((method, self.path), (404, {"error": "not found"}))
        if status == HANG:
            state.release.wait(30)
            return
        data = json.dumps(body).encode()
        self.send_response(status)
        if 300 <= status < 400:  # a redirect: its body names where to
            self.send_header("location", str(body["location"]))
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: LocalServer


@contextmanager
def serving() -> Iterator[LocalServer]:
    """The server, running until the block ends (a test module's fixture wraps it)."""
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.state = LocalServer(f"http://127.0.0.1:{httpd.server_address[1]}")
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.state
    finally:
        httpd.state.release.set()
        httpd.shutdown()
        httpd.server_close()
