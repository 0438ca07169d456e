"""One way to start a run (council/run/prepare.py): `council run`, a host's prompt hook and
MCP's start_research hand their request to the same `prepare`, so the same request is
refused with the same line from each, and each only renders that line its own way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from council import cli
from council.errors import CouncilError, UsageError
from council.hosts import flow, host_for, mcptools
from council.readiness import preflight
from council.readiness.preflight import Readiness
from council.run import prepare
from council.runoptions import RunOptions
from council.store import provenance
from council.store.state import RunState, create_state, load_state
from council.trust import UntrustedConfig

CLAUDE = host_for("claude")


def _ready(clis: list[str]) -> dict[str, Readiness]:
    return {cli: Readiness(cli, f"/bin/{cli}", "1.0", "1.0", "KEY") for cli in clis}


def from_cli(*args: str) -> str:
    """The line `council run ARGS` fails with."""
    result = CliRunner().invoke(cli.main, ["run", *args])
    assert result.exit_code != 0, result.output
    (line,) = result.stderr.splitlines()
    return line.removeprefix("council: error: ")


def from_hook(args: str, cwd: Path) -> str:
    """The reason a host's prompt hook refuses `/council:deep-research ARGS` with."""
    reply = flow.on_prompt(CLAUDE, {"session_id": "s-1", "prompt_id": "p-1", "cwd": str(cwd),
                                    "prompt": f"/council:deep-research {args}"})
    assert reply.get("decision") == "block", reply
    return str(reply["reason"]).removeprefix("Research council not started: ")[:-1]


def from_mcp(base: Path, **arguments: Any) -> str:
    """The line start_research's tool call fails with."""
    args = mcptools.parse(mcptools.START_PARAMS, "start_research", arguments)
    with pytest.raises(CouncilError) as caught:
        mcptools.start(args, mcptools.Call(base, "test"))
    return mcptools.error_line(caught.value).removeprefix("council: error: ")


def test_the_three_entry_points_reach_the_one_prepare(
        isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[prepare.Request] = []

    def refuse(request: prepare.Request) -> prepare.Prepared:
        seen.append(request)
        raise UsageError("refused by the one prepare")

    monkeypatch.setattr(prepare, "prepare", refuse)
    base = isolated / "research"
    assert from_cli("--test", "--max-cost", "2", "Tides?") == "refused by the one prepare"
    assert from_hook("--test Tides?", isolated) == "refused by the one prepare"
    assert from_mcp(base, topic="Tides?", test=True,
                    max_cost=2) == "refused by the one prepare"
    cli_req, hook_req, mcp_req = seen
    assert [r.topic for r in seen] == ["Tides?"] * 3
    assert cli_req.given["max_cost"] == mcp_req.given["max_cost"] == 2
    assert all(r.given["test"] for r in seen)
    # Each entry point's own part: where the run goes, and the limits it must keep.
    assert (cli_req.base, cli_req.limits) == (base, None)
    assert (hook_req.base, hook_req.limits) == (None, flow.plugin_limits)
    assert (mcp_req.base, mcp_req.limits) == (base, mcptools.with_budget)
    assert not base.exists() or not [p for p in base.iterdir() if p.name[0].isdigit()]


def test_an_untrusted_config_is_one_refusal_rendered_by_each(isolated: Path) -> None:
    (isolated / "council.yaml").write_text("max_cost: 3\n")
    with pytest.raises(UntrustedConfig) as caught:
        prepare.prepare(prepare.Request("Tides?", "the test", {"test": True}))
    untrusted = caught.value
    assert from_cli("--test", "Tides?") == str(untrusted)
    # A model reads the hosts' and MCP's line: it asks for the user and names no command.
    assert from_hook("--test Tides?", isolated) == untrusted.for_model()
    assert from_mcp(isolated / "research", topic="Tides?",
                    test=True) == untrusted.for_model()
    assert "council trust" in str(untrusted)
    assert "council trust" not in untrusted.for_model()


def test_an_unknown_agent_is_the_same_line_from_each(isolated: Path) -> None:
    with pytest.raises(CouncilError) as caught:
        prepare.prepare(prepare.Request("Tides?", "the test", {"agents": ("gpt",)}))
    line = str(caught.value)
    assert line == "unknown agent 'gpt': this council has claude, codex, gemini"
    assert from_cli("--agents", "gpt", "Tides?") == line
    assert from_hook("--agents gpt Tides?", isolated) == line
    assert from_mcp(isolated / "research", topic="Tides?", agents=["gpt"]) == line


def test_a_request_is_checked_in_one_order(isolated: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The topic, the options, the CLIs, then the research folder: the first problem of a
    request is the one its user hears of, whichever entry point it came by."""
    blocked = isolated / "research"
    blocked.write_text("a file where the research folder should be")
    with pytest.raises(UsageError, match=r"^the topic from the test is empty$"):
        prepare.prepare(prepare.Request("  ", "the test", {"max_parallel": "two"}, blocked))
    with pytest.raises(CouncilError, match=r"^--max-parallel takes a whole number, not 'two'$"):
        prepare.prepare(prepare.Request("q", "the test", {"max_parallel": "two"}, blocked))
    monkeypatch.setattr(preflight, "check", lambda clis: {
        cli: Readiness(cli, None, None, "1.0", None) for cli in clis})
    with pytest.raises(UsageError, match=r"^no agent can run here\nclaude is not installed"):
        prepare.prepare(prepare.Request("q", "the test", {"test": True}, blocked))
    monkeypatch.setattr(preflight, "check", _ready)
    with pytest.raises(UsageError, match=r"^cannot create a run folder in "):
        prepare.prepare(prepare.Request("q", "the test", {"test": True}, blocked))


def test_a_prepared_run_has_its_limits_its_ready_seats_and_its_plan(
        isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "check", lambda clis: {
        **_ready(clis), "codex": Readiness("codex", None, None, "1.0", None)})
    base = isolated / "research"
    prepared = prepare.prepare(prepare.Request(" Tides? ", "the test", {"test": True}, base,
                                               limits=mcptools.with_budget))
    assert prepared.topic == "Tides?"
    assert [s.name for s in prepared.options.seats] == ["claude", "gemini"]
    assert prepared.notes[0].startswith("skipping codex: ")
    assert prepared.options.max_cost == mcptools.MCP_MAX_COST  # the entry point's limits
    assert (prepared.config_file, prepared.config_trust) == (None, None)
    assert prepared.plan == prepare.plan(prepared.options)
    assert "config: no config file, test profile" in prepared.plan
    assert any(line.startswith("limits: spend limit $10 ") for line in prepared.plan)
    assert not base.exists()  # checked where it would be made, and nothing made before start
    ws = prepare.start(prepared, base)
    assert ws.root.parent == base
    assert load_state(ws.root).topic == "Tides?"


def _finished(base: Path, run_id: str = "20261123-100000-abcdef", own: bool = True,
              report: bool = True) -> Path:
    """A finished run on disk, with a final report; council's own unless `own` is False."""
    root = base / run_id
    root.mkdir(parents=True)
    create_state(root, RunState(id=run_id, topic="Tides?", created_at="2026-11-23T10:00:00Z",
                                options=RunOptions(seats=()), phase="done"))
    if report:
        (root / "final-report.md").write_text("# Tides\n")
    if own:
        provenance.record(root)
    return root


def test_since_takes_the_earlier_runs_topic_and_id(isolated: Path) -> None:
    base = isolated / "research"
    _finished(base)
    assert prepare.since("20261123-100000-abcdef", base) == \
        prepare.Earlier("20261123-100000-abcdef", "Tides?")


def test_since_refuses_a_foreign_or_unfinished_run_in_one_actionable_line(isolated: Path) -> None:
    base = isolated / "research"
    _finished(base, "20261123-100000-aaaaaa", own=False)  # restored from a cache, say
    _finished(base, "20261123-100000-bbbbbb", report=False)
    with pytest.raises(CouncilError) as foreign:
        prepare.since("20261123-100000-aaaaaa", base)
    assert foreign.value.exit_code == 2
    assert "council adopt 20261123-100000-aaaaaa" in str(foreign.value)
    with pytest.raises(CouncilError) as unfinished:
        prepare.since("20261123-100000-bbbbbb", base)
    assert unfinished.value.exit_code == 2
    assert "no final report" in str(unfinished.value)
    with pytest.raises(CouncilError) as unknown:
        prepare.since("20261123-100000-cccccc", base)
    assert unknown.value.exit_code == 2
    assert "\n" not in str(unknown.value)


def test_since_with_no_verify_is_the_same_refusal_from_each(isolated: Path) -> None:
    """A --since run judges what changed on verified claims: an explicit "do not verify"
    with it is refused by prepare, so by each entry point that takes --since, before the
    earlier run is looked up."""
    with pytest.raises(UsageError) as caught:
        prepare.prepare(prepare.Request(None, "the test", {"since": "latest", "verify": False}))
    line = str(caught.value)
    assert line.startswith("--since with --no-verify")
    assert from_cli("--since", "latest", "--no-verify") == line
    # (the hosts' grammar takes no --since)
    assert from_mcp(isolated / "research", topic="Tides?", since="latest",
                    verify=False) == line
