"""What a run sends its models (`benchmarks/run.py --only volume`): the real, pinned claude,
codex and gemini run `council run --test` offline against the scripted model server
(tests/realcli/server.py), which logs the size of every request; the figures are requests,
bytes per CLI and per phase, mean request, and each run's bytes over a single agent's.

The three depths side by side, each with its checks on (`--depth quick|standard|deep
--verify`: 3 agents, loops of 2 turns), after one agent (`--agents claude --no-verify --debate
off`), the baseline every ratio is to, and three agents with research, refinement and
synthesis only (`--no-verify --debate off`). Without the pinned CLIs it says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("one agent", ("--agents", "claude", "--no-verify", "--debate", "off")),
    ("--no-verify --debate off", ("--no-verify", "--debate", "off")),
    ("depth quick", ("--depth", "quick", "--verify")),
    ("depth standard", ("--depth", "standard", "--verify")),
    ("depth deep", ("--depth", "deep", "--verify")),
)
API_CLI = {"anthropic": "claude", "openai": "codex", "gemini": "gemini"}
SEATS = ("claude", "codex", "gemini")


@dataclass
class Volume:
    """One run's requests to the model: count and bytes per CLI and per phase."""

    requests: Counter[str] = field(default_factory=Counter)
    sent: Counter[str] = field(default_factory=Counter)
    phase_sent: Counter[str] = field(default_factory=Counter)
    phase_requests: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.sent.values())

    @property
    def count(self) -> int:
        return sum(self.requests.values())

    def mean(self, cli: str) -> float:
        return self.sent[cli] / self.requests[cli] if self.requests[cli] else 0.0


def phase_of(report_path: str | None) -> str:
    """The phase a request belongs to, by the file its conversation is writing (each phase's
    output is named in graph.py); side calls (titles, routing) are "other"."""
    from council.graph import GRAPH

    if not report_path:
        return "other"
    name = Path(report_path).name
    for phase in GRAPH:
        if any(name == phase.file(seat) for seat in SEATS):
            return phase.name
    return "other"


def volume(records: Iterable[Mapping[str, Any]]) -> Volume:
    """Pure: the scripted server's log lines summed."""
    out = Volume()
    for record in records:
        cli = API_CLI.get(str(record.get("api")))
        if cli is None or record.get("method") != "POST" or "bytes" not in record:
            continue
        size = int(record["bytes"])
        out.requests[cli] += 1
        out.sent[cli] += size
        phase = phase_of(record.get("report_path"))
        out.phase_sent[phase] += size
        out.phase_requests[phase] += 1
    return out


def clis_present() -> str | None:
    """Why the real CLIs cannot run here, or None."""
    from realcli.helpers import CLIS, ENABLE, cli_cache, locate

    found = locate(cli_cache(Path.home()) / "bin", os.environ.get("PATH", ""))
    if missing := [cli for cli in CLIS if cli not in found]:
        return f"the real {', '.join(missing)} not found: {ENABLE}"
    return None


def cli_env(work: Path, url: str) -> dict[str, str]:
    """The environment tests/realcli/conftest.py's cli_env gives the CLIs, for a benchmark."""
    from realcli.conftest import GEMINI_USER_SETTINGS, PASSTHROUGH, codex_config
    from realcli.helpers import cli_cache, locate

    # The CLIs the realcli tests would use (the pinned cache, else PATH), linked in one dir.
    bin_dir = work / "clis"
    bin_dir.mkdir(parents=True)
    for cli, (exe, _) in locate(cli_cache(Path.home()) / "bin",
                                os.environ.get("PATH", "")).items():
        (bin_dir / cli).symlink_to(exe)
    home, codex_home, gemini_home, tmp = (work / "home", work / "codex-home",
                                          work / "gemini-home", work / "tmp")
    for folder in (home, codex_home, gemini_home / ".gemini", tmp):
        folder.mkdir(parents=True)
    (codex_home / "config.toml").write_text(codex_config(url), encoding="utf-8")
    (gemini_home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_USER_SETTINGS))
    env = {name: os.environ[name] for name in PASSTHROUGH if name in os.environ}
    env.update({
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "/usr/bin")]),
        "HOME": str(home), "TMPDIR": str(tmp),
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "dummy", "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_MAX_RETRIES": "1",
        "CODEX_HOME": str(codex_home), "MOCK_API_KEY": "dummy",
        "GEMINI_CLI_HOME": str(gemini_home), "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "dummy",
        "COUNCIL_RESEARCH_DIR": str(work / "research"),
        "COUNCIL_OFFLINE": "1",  # the scripted sources are not fetched (issue 44)
    })
    return env


def measure(work: Path, options: tuple[str, ...]) -> Volume:
    """One `council run --test` with the real CLIs against a fresh scripted server."""
    from realcli.server import ScriptedServer

    work.mkdir(parents=True)
    log = work / "server.jsonl"
    with ScriptedServer({}, log) as srv:
        env = cli_env(work, srv.url)
        proc = subprocess.run(
            [sys.executable, "-m", "council", "run", "--test", *options,
             "How do attention mechanisms scale?"],
            env={**env, "PYTHONPATH": str(ROOT)}, cwd=work, capture_output=True, text=True,
            timeout=900, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise SystemExit(f"council run {' '.join(options)} failed: {proc.stderr[-2000:]}")
        return volume(srv.records())


def kb(n: float) -> str:
    return f"{n / 1000:.1f} KB" if n < 1e6 else f"{n / 1e6:.2f} MB"


def print_volumes(volumes: Mapping[str, Volume]) -> None:
    single = volumes.get("one agent")
    for label, v in volumes.items():
        ratio = f"{v.total / single.total:.1f}x one agent" if single and single.total else ""
        print(f"{label}: {v.count} requests, {kb(v.total)} sent, "
              f"mean {kb(v.total / max(v.count, 1))}  {ratio}")
        for cli in SEATS:
            if v.requests[cli]:
                print(f"  {cli:<8} {v.requests[cli]:>4} requests {kb(v.sent[cli]):>10}  "
                      f"mean {kb(v.mean(cli))}")
        phases = ", ".join(f"{p} {v.phase_requests[p]} requests {kb(n)}"
                           for p, n in v.phase_sent.most_common())
        print(f"  per phase: {phases}")


def depths_side_by_side(volumes: Mapping[str, Volume]) -> list[str]:
    """The three depths in one table: requests, bytes, and each over one agent's and deep's
    (the figures README.md's table of depths gives)."""
    single, deep = volumes.get("one agent"), volumes.get("depth deep")
    rows = ["depth     requests      sent  x one agent  of deep"]
    for label, v in volumes.items():
        if not label.startswith("depth "):
            continue
        times = f"{v.count / single.count:.1f}" if single and single.count else "-"
        share = f"{v.count / deep.count:.0%}" if deep and deep.count else "-"
        rows.append(f"{label[6:]:<9} {v.count:>8} {kb(v.total):>9} {times:>12} {share:>8}")
    return rows


def main(work: Path) -> None:
    why = clis_present()
    if why:
        print(f"volume: needs the pinned real CLIs ({why})")
        return
    volumes: dict[str, Volume] = defaultdict(Volume)
    for i, (label, options) in enumerate(RUNS):
        volumes[label] = measure(work / f"run{i}", options)
    print_volumes(volumes)
    print("\n".join(depths_side_by_side(volumes)))
