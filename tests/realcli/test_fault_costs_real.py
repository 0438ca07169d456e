"""What each vendor refusal costs a seat in a whole `council run` of the real, pinned claude,
codex and gemini (issue 42, "what each kind costs"; docs/faults.md): the scripted server
answers with each vendor's own error bodies and headers (server.FAULTS) from a chosen request
or turn on, and the run's state.yaml, progress.log, final report, the machine's limits.json
and the server's request log say what it cost.

The CLIs run with council's own retry settings, not the fixtures' shortened ones: claude's
CLAUDE_CODE_MAX_RETRIES is council's (6), codex's request and stream retries its defaults,
gemini's maxAttempts council's (3). The vendors' waits are short (a few seconds) so that the
tests stay as fast as they are honest; the overload lasts the 30 s the issue names."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from council.evidence.ledger import price

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

APIS = {"claude": "anthropic", "codex": "openai", "gemini": "gemini"}


@dataclass
class Outcome:
    proc: subprocess.CompletedProcess[str]
    run: Path
    state: dict[str, Any]
    log: str
    seconds: float

    def final(self) -> str:
        path = self.run / "final-report.md"
        return path.read_text() if path.exists() else ""

    def record(self, seat: str, phase: str = "research") -> dict[str, Any]:
        return self.state["agents"][seat]["phases"][phase]  # type: ignore[no-any-return]

    def describe(self) -> str:
        return f"exit {self.proc.returncode}\n{self.proc.stderr[-2000:]}\n{self.log[-6000:]}"


def council_env(cli_env: dict[str, str]) -> dict[str, str]:
    """The fixtures' environment with council's own CLI retries: no CLAUDE_CODE_MAX_RETRIES
    of the tests' (council then sets its 6), and codex's default request and stream retries
    (the fixtures' config.toml lowers them to 1)."""
    env = {k: v for k, v in cli_env.items() if k != "CLAUDE_CODE_MAX_RETRIES"}
    config = Path(env["CODEX_HOME"]) / "config.toml"
    lines = [line for line in config.read_text().splitlines()
             if not line.startswith(("request_max_retries", "stream_max_retries"))]
    config.write_text("\n".join(lines) + "\n")
    return env


def council(env: dict[str, str], tmp_path: Path, *args: str,
            timeout: float = 600) -> Outcome:
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", *args],
        env={**env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - began
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    state = yaml.safe_load((run / "state.yaml").read_text())
    log = (run / "progress.log").read_text()
    return Outcome(proc, run, state, log, seconds)


def refused(server: ScriptedServer, api: str) -> int:
    """The requests of `api` the server refused (its fault answers)."""
    return sum(1 for r in server.records(api) if str(r.get("answer", "")).startswith("fault "))


def limits(env: dict[str, str]) -> list[dict[str, Any]]:
    path = Path(env["HOME"]) / ".local" / "state" / "council" / "limits.json"
    data = json.loads(path.read_text())
    return list(data["limits"] if isinstance(data, dict) else data)


def own_retries(run: Path, seat: str, phase: str = "research") -> list[dict[str, Any]]:
    """The CLI's own retries in the seat's log (claude's api_retry, codex's Reconnecting)."""
    found = []
    for log in run.glob(f"logs/{seat}-{phase}*"):
        for line in log.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("subtype") == "api_retry" or str(
                    event.get("message") or "").startswith("Reconnecting..."):
                found.append(event)
    return found


def retried(out: Outcome, seat: str) -> list[str]:
    """progress.log's lines naming a retry of the seat and its wait: council's own
    (`… retrying in N s …`) or its CLI's (`… retries on its own …`). gemini's own retries
    show in no event of its stream-json (only on stderr): where it rode a fault out by
    itself, moving its flash-lite seat down its chain, the line that says so stands in."""
    return [line for line in out.log.splitlines() if f"research {seat} " in line
            and ("retrying in " in line or "retries on its own" in line
                 or (seat == "gemini" and "answered by " in line))]


def test_a_30_s_overload_from_each_vendor_costs_time_not_the_seat(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """Anthropic 529, OpenAI 503, Google 503 on every request for 30 s from the first."""
    fault = {"name": "overloaded", "seconds": 30}
    server.script = {api: {"finish_after": 1, "fault": fault} for api in APIS.values()}
    out = council(council_env(cli_env), tmp_path, "--test", "Tides?")
    assert out.proc.returncode == 0, out.describe()
    assert "3 of 3 agents contributed" in out.final(), out.describe()
    assert not out.state.get("dropped"), out.describe()
    for seat, api in APIS.items():
        assert refused(server, api) >= 2, f"{seat}\n{out.describe()}"
        assert out.record(seat)["status"] == "complete", f"{seat}\n{out.describe()}"
        assert retried(out, seat), f"{seat}\n{out.describe()}"
    print(f"overload run: {out.seconds:.0f} s")


def test_one_cut_stream_per_vendor_costs_a_retry_not_the_seat(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    fault = {"name": "cut", "count": 1}
    server.script = {api: {"finish_after": 1, "fault": fault} for api in APIS.values()}
    out = council(council_env(cli_env), tmp_path, "--test", "Tides?")
    assert out.proc.returncode == 0, out.describe()
    assert "3 of 3 agents contributed" in out.final(), out.describe()
    for seat, api in APIS.items():
        assert refused(server, api) == 1, f"{seat}\n{out.describe()}"
        assert out.record(seat)["status"] == "complete", f"{seat}\n{out.describe()}"
        assert retried(out, seat), f"{seat}\n{out.describe()}"
    print(f"cut run: {out.seconds:.0f} s")


def test_hard_limits_cost_one_request_and_a_minute_quota_is_waited_out(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """A claude plan limit and a codex usage limit: one refused request each, the seat
    dropped, the limit recorded machine-wide; gemini's per-minute 429 costs it time only."""
    server.script = {
        "anthropic": {"finish_after": 1, "fault": {"name": "plan_limit", "resets_in": 9000}},
        "openai": {"finish_after": 1, "fault": {"name": "usage_limit", "resets_in": 9000}},
        "gemini": {"finish_after": 1, "fault": {"name": "minute_quota", "retry_delay": "4s",
                                                "count": 3}},
    }
    env = council_env(cli_env)
    out = council(env, tmp_path, "--test", "Tides?")
    assert refused(server, "anthropic") == 1, out.describe()
    assert refused(server, "openai") == 1, out.describe()
    assert set(out.state.get("dropped") or {}) == {"claude", "codex"}, out.describe()
    for seat, kind in (("claude", "plan_limit"), ("codex", "plan_limit")):
        assert out.record(seat)["failure"] == kind, out.describe()
        assert f"research {seat} plan limit: {seat} is limited until " in out.log, out.describe()
    recorded = {limit["cli"]: limit for limit in limits(env)}
    assert set(recorded) == {"claude", "codex"}
    # gemini: its own attempts (3) met the 429 on flash-lite; it answered on the next model
    # of its chain (as the test profile's flash-lite seat does), and the seat contributes.
    assert refused(server, "gemini") == 3, out.describe()
    assert out.record("gemini")["status"] == "complete", out.describe()
    assert "1 of 3 agents contributed (gemini)" in out.final(), out.describe()
    print(f"hard limits run: {out.seconds:.0f} s")


def test_a_daily_quota_drops_the_gemini_seat_and_is_recorded(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {"anthropic": {"finish_after": 1}, "openai": {"finish_after": 1},
                     "gemini": {"finish_after": 1, "fault": {"name": "daily_quota"}}}
    env = council_env(cli_env)
    out = council(env, tmp_path, "--test", "Tides?")
    assert out.proc.returncode in (0, 3), out.describe()
    rec = out.record("gemini")
    assert (rec["status"], rec["failure"]) == ("failed", "quota"), out.describe()
    assert "gemini" in (out.state.get("dropped") or {}), out.describe()
    assert "research gemini quota spent: gemini is limited until " in out.log, out.describe()
    assert "dropped for the rest of the run" in out.log
    (limit,) = limits(env)
    assert (limit["cli"], limit["kind"]) == ("gemini", "quota")
    assert "2 of 3 agents contributed (claude, codex)" in out.final(), out.describe()
    print(f"daily quota run: {out.seconds:.0f} s")


def test_a_refused_login_at_turn_3_keeps_two_turns_and_stops_at_once(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """claude and codex get a 401 from their third report turn on (gemini answers): each
    seat's two finished turns are published as partial, and its CLI's retries of the refused
    login are cut short (claude retries a 401 ten times, codex five, on their own)."""
    fault = {"name": "auth", "from_turn": 3}
    server.script = {"anthropic": {"finish_after": 4, "fault": fault},
                     "openai": {"finish_after": 4, "fault": fault},
                     "gemini": {"finish_after": 1}}
    (tmp_path / "council.yaml").write_text(
        "agents:\n  claude: {cli: claude, model: haiku, max_iterations: 4}\n"
        "  codex: {cli: codex, model: gpt-5.5, max_iterations: 4}\n"
        "  gemini: {cli: gemini, model: flash-lite, max_iterations: 4}\n")
    out = council(council_env(cli_env), tmp_path, "--test", "--config", "council.yaml",
                  "--max-iterations", "4", "Tides?")
    # Each is stopped at its CLI's first own retry of the refused login (claude's api_retry
    # 0.5 s before its next request, codex's "Reconnecting... 1/5" 0.2 s before): one
    # refused request, two at most, of the 7 and 6 they would make on their own.
    for seat, api in (("claude", "anthropic"), ("codex", "openai")):
        assert refused(server, api) <= 2, f"{seat}: {refused(server, api)}\n{out.describe()}"
        rec = out.record(seat)
        assert (rec["status"], rec["failure"], rec["partial"]) == ("failed", "auth", True), \
            f"{seat}: {rec}\n{out.describe()}"
        published = (out.run / rec["output"]).read_text()
        assert "## Turn 2" in published, published
        assert "## Turn 3" not in published, published
        assert "## Turn 1" in published
        assert f"research {seat} dropped for the rest of the run (auth: " in out.log
    print(f"auth run: {out.seconds:.0f} s")


def test_gemini_answering_on_another_model_is_recorded_and_priced_so(
        cli_env: dict[str, str], tmp_path: Path) -> None:
    """A flash-lite seat whose model is out of its daily quota: gemini answers on flash."""
    (tmp_path / "council.yaml").write_text(
        "synthesizer: g\nagents:\n  g: {cli: gemini, model: flash-lite, max_iterations: 1}\n")
    script = {"gemini": {"finish_after": 1, "fault": {
        "name": "daily_quota", "models": ["gemini-3.5-flash-lite"]}}}
    with ScriptedServer(script, tmp_path / "server-log.jsonl") as srv:
        env = {**council_env(cli_env), "GOOGLE_GEMINI_BASE_URL": srv.url}
        out = council(env, tmp_path, "--config", "council.yaml", "Tides?")
        assert refused(srv, "gemini") >= 1
    assert out.proc.returncode == 0, out.describe()
    rec = out.record("g")
    assert rec["status"] == "complete", out.describe()
    assert rec["models"] == ["gemini-3.8-flash"], rec
    assert "research g answered by gemini-3.8-flash (asked for flash-lite)" in out.log
    usage = rec["usage"]
    tokens_in, tokens_out, cost = usage["tokens_in"], usage["tokens_out"], usage["cost_usd"]
    assert tokens_in > 0
    cached = usage.get("tokens_cached") or 0
    rates = json.loads((Path(__file__).parents[2] / "council" / "prices.json").read_text())
    flash = rates["models"]["gemini-3.8-flash"]
    lite = rates["models"]["gemini-3.5-flash-lite"]
    assert cached == 0, usage
    at_flash = (tokens_in * flash["input"] + tokens_out * flash["output"]) / 1e6
    at_lite = (tokens_in * lite["input"] + tokens_out * lite["output"]) / 1e6
    assert cost == pytest.approx(at_flash, abs=2e-6), (usage, at_flash, at_lite)
    assert cost != pytest.approx(at_lite, abs=2e-6)
    assert price("gemini", "gemini-3.8-flash", tokens_in, tokens_out) == pytest.approx(at_flash)
    print(f"model switch run: {out.seconds:.0f} s")


def test_gemini_waits_out_a_per_minute_quota(cli_env: dict[str, str], tmp_path: Path) -> None:
    """A pro seat (no chain to move down) meets Google's per-minute 429 (RetryInfo 4 s) on
    each of its own 3 attempts: council waits the vendor's 4 s, retries, and the seat
    contributes."""
    (tmp_path / "council.yaml").write_text(
        "synthesizer: g\nagents:\n  g: {cli: gemini, model: pro, max_iterations: 1}\n")
    script = {"gemini": {"finish_after": 1, "fault": {
        "name": "minute_quota", "retry_delay": "4s", "count": 3}}}
    with ScriptedServer(script, tmp_path / "server-log.jsonl") as srv:
        env = {**council_env(cli_env), "GOOGLE_GEMINI_BASE_URL": srv.url}
        out = council(env, tmp_path, "--config", "council.yaml", "Tides?")
        assert refused(srv, "gemini") == 3, out.describe()
    assert out.proc.returncode == 0, out.describe()
    assert "research g rate limited by the vendor: retrying in 4 s (the vendor asked for 4 s)" \
        in out.log, out.describe()
    rec = out.record("g")
    assert (rec["status"], rec["failure"]) == ("complete", None), rec
    assert out.final(), out.describe()
    print(f"minute quota run: {out.seconds:.0f} s")
