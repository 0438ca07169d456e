"""Is council set up in each host? `HostSetup` is what `council doctor` shows of one host:
its state in a short phrase, whether it is ready and the one line that fixes it. Each host
reads its own files to fill it in (hosts/<name>/install.py, collected by
hosts/setup.check_hosts); doctor is handed the findings and only shows them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostSetup:
    host: str
    state: str  # one short phrase: "ready", "not installed", "hooks not trusted", …
    ready: bool
    fix: str | None = None  # one line: what to do
