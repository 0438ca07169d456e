"""`council run` end to end, with fake claude/codex/gemini executables on PATH that speak the
real CLIs' protocols (tests/fakes/)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import Council

from council.store.loop import MARKER

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S+ .+$")


def state_of(run: Path) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def statuses(run: Path, phase: str) -> dict[str, str]:
    return {name: rec["phases"][phase]["status"]
            for name, rec in state_of(run)["agents"].items() if phase in rec["phases"]}


def test_full_run_three_agents_in_parallel(council: Council) -> None:
    council.script({"*": {"finish_after": 2}})
    proc = council.run("run", "--test", "How do transformer attention mechanisms scale?")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    state = state_of(run)
    assert state["phase"] == "done"
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", run.name)
    for phase in ("research", "refinement"):
        assert statuses(run, phase) == dict.fromkeys(("claude", "codex", "gemini"), "complete")
        for seat in ("claude", "codex", "gemini"):
            rec = state["agents"][seat]["phases"][phase]
            assert rec["iteration"] == 2
            assert rec["exit_code"] == 0
            assert rec["session_id"]
            assert rec["started_at"]
            assert rec["ended_at"]
            suffix = "report" if phase == "research" else "refined"
            assert MARKER in (run / f"{seat}-{suffix}.md").read_text()
    final = (run / "final-report.md").read_text()
    assert "3 of 3 agents contributed (claude, codex, gemini)" in final
    assert state["synthesizer"] == "claude"

    log = (run / "progress.log").read_text().splitlines()
    assert all(LINE.match(line) for line in log), log
    for seat in ("claude", "codex", "gemini"):
        assert any(line.endswith(f"research {seat} iteration 2/2") for line in log)
    assert log[-1].endswith(f"run done: {run / 'final-report.md'}")
    # events.jsonl as a script reads it: one JSON object per progress line, same order, and
    # every event of an agent names it and its phase.
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    assert [f"{e['time']} {e['scope']} {e['agent'] + ' ' if e['agent'] else ''}{e['message']}"
            for e in events] == log
    by_agent = [e for e in events if e["message"].startswith(("started (", "iteration "))]
    assert {(e["scope"], e["agent"]) for e in by_agent} >= {
        (phase, seat) for phase in ("research", "refinement", "synthesis")
        for seat in ("claude",)}
    assert all(e["agent"] for e in by_agent)

    # The three research agents really ran at the same time.
    starts = [e for e in council.fake_log() if e["event"] == "start"]
    assert {e["cli"] for e in starts} >= {"claude", "codex", "gemini"}


def _turns(council: Council, cli: str) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in council.fake_log() if e["cli"] == cli and e["event"] == "turn"]


def test_codex_loop_resumes_the_same_thread(council: Council) -> None:
    council.script({"*": {"finish_after": 3}})
    proc = council.run("run", "--agents", "codex", "--synthesizer", "codex",
                       "--max-iterations", "5", "q")
    assert proc.returncode == 0, proc.stderr
    starts = [e for e in council.fake_log() if e["cli"] == "codex" and e["event"] == "start"]
    research = [e["argv"] for e in starts][:3]  # research runs first: turns 1, 2, 3
    assert research[0][:2] == ["exec", "--json"]
    assert "resume" not in research[0]
    thread = state_of(council.only_run())["agents"]["codex"]["phases"]["research"]["session_id"]
    for argv in research[1:]:
        i = argv.index("resume")
        assert argv[argv.index("-C") + 1].endswith("agents/codex")
        # resume does not remember the sandbox: the permission profile comes again
        assert argv.index('default_permissions="council"') < i
        assert "--last" not in argv
        assert thread in argv[i:]
    assert state_of(council.only_run())["agents"]["codex"]["phases"]["research"][
        "iteration"] == 3


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_each_loop_ends_on_the_marker(council: Council, cli: str) -> None:
    council.script({"*": {"finish_after": 3}})
    proc = council.run("run", "--agents", cli, "--synthesizer", cli, "--max-iterations", "6",
                       "q")
    assert proc.returncode == 0, proc.stderr
    rec = state_of(council.only_run())["agents"][cli]["phases"]["research"]
    assert (rec["status"], rec["iteration"]) == ("complete", 3)


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_each_loop_ends_on_the_cap(council: Council, cli: str) -> None:
    council.script({"*": {"never_finish": True}})
    proc = council.run("run", "--agents", cli, "--synthesizer", cli, "--max-iterations", "3",
                       "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    rec = state_of(run)["agents"][cli]["phases"]["research"]
    assert (rec["status"], rec["iteration"]) == ("capped", 3)
    assert f"research {cli} reached its cap of 3 iterations" in (run / "progress.log").read_text()
    assert len([t for t in _turns(council, cli)]) >= 3


def test_claude_block_cap_is_raised_above_the_iteration_cap(council: Council) -> None:
    # Text-only turns: Claude Code would end the loop after 8 blocks unless council raises
    # CLAUDE_CODE_STOP_HOOK_BLOCK_CAP.
    council.script({"*": {"never_finish": True, "text_only": True}})
    proc = council.run("run", "--agents", "claude", "--max-iterations", "12", "q")
    assert proc.returncode == 0, proc.stderr
    rec = state_of(council.only_run())["agents"]["claude"]["phases"]["research"]
    assert (rec["status"], rec["iteration"]) == ("capped", 12)


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ({"gemini": {"crash": True}}, "gemini exited with code 244 (server error (HTTP 500))"),
        ({"gemini": {"write_nothing": True}}, "exited without writing its report"),
        ({"gemini": {"hang": True}}, "timed out after 5 s"),
        ({"gemini": {"hang_after_turn": 1}}, "no output or report change for 2 s"),
    ],
)
def test_one_failing_agent_degrades_the_run(
    council: Council, script: dict[str, dict[str, object]], error: str
) -> None:
    council.script(script)
    idle = ["--idle-timeout", "2"] if "hang_after_turn" in script["gemini"] else []
    proc = council.run("run", "--test", "--timeout", "5", *idle, "q")
    # Finished without a seat it started with: exit 3, the seat and why on stderr.
    assert proc.returncode == 3, proc.stderr
    run = council.only_run()
    assert "council: finished without gemini: " in proc.stderr
    assert f"council resume {run.name}" in proc.stderr
    rec = state_of(run)["agents"]["gemini"]["phases"]["research"]
    assert rec["status"] == "failed"
    assert error in rec["error"]
    assert rec["failure"] == {"crash": "overloaded", "write_nothing": "no_report",
                              "hang": "timeout",
                              "hang_after_turn": "no_answer"}[next(iter(script["gemini"]))]
    # A stuck agent with a turn on disk: its report is published as partial, not used.
    assert rec["partial"] is ("hang_after_turn" in script["gemini"])
    assert "refinement" not in state_of(run)["agents"]["gemini"]["phases"]
    assert statuses(run, "refinement") == {"claude": "complete", "codex": "complete"}
    final = (run / "final-report.md").read_text()
    why = {"crash": "vendor overloaded", "write_nothing": "wrote no report", "hang": "timed out",
           "hang_after_turn": "no answer"}[next(iter(script["gemini"]))]
    assert f"2 of 3 agents contributed (claude, codex); gemini: {why} ·" in final
    log = (run / "progress.log").read_text()
    assert "research gemini failed" in log
    assert f"run finished without gemini: {why}" in log
    if "hang_after_turn" in script["gemini"]:  # said every quarter of the idle limit
        for silent in ("0.5", "1", "1.5"):
            assert f"research gemini no output for {silent} s (gives up at 2 s)" in log


def test_a_bad_setup_is_named_before_any_run_starts(council: Council, tmp_path: Path) -> None:
    # Only claude and codex on PATH, and codex logged in nowhere.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for cli in ("claude", "codex"):
        (bin_dir / cli).symlink_to(Path(__file__).parent / "fakes" / "bin" / cli)
    council.env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    del council.env["OPENAI_API_KEY"]
    # Asked for by name: each problem is one line with its fix, exit 2, nothing created.
    asked = council.run("run", "--test", "--agents", "claude,codex,gemini", "q")
    assert asked.returncode == 2
    assert asked.stderr.splitlines() == [
        "council: error: an agent you asked for cannot run here",
        "codex has no credentials: log in with `codex login`, or set OPENAI_API_KEY",
        "gemini is not installed: npm install -g @google/gemini-cli@0.61.0 (Node 20 or newer)",
    ]
    assert not council.research.exists()
    assert not council.fake_log()
    # The default council: the ready CLIs run, and the skipped ones are named.
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 0, proc.stderr
    assert "council: skipping codex, gemini: codex has no credentials" in proc.stderr
    st = state_of(council.only_run())
    assert set(st["agents"]) == {"claude"}
    assert st["phase"] == "done"


def test_no_ready_cli_fails_fast_with_the_fixes(council: Council) -> None:
    council.env["PATH"] = "/usr/bin:/bin"
    proc = council.run("run", "q")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == "council: error: no agent can run here"
    assert len(proc.stderr.splitlines()) == 4  # one line per CLI, each naming its fix
    assert not council.research.exists()


def test_failed_synthesizer_is_replaced(council: Council) -> None:
    council.script({"claude": {"crash": True, "crash_kind": "bad_request"}})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 3, proc.stderr  # without claude
    run = council.only_run()
    assert state_of(run)["synthesizer"] == "codex"
    assert "synthesised by codex" in (run / "final-report.md").read_text()


def test_single_survivor_skips_refinement(council: Council) -> None:
    bad = {"crash": True, "crash_kind": "bad_request"}
    council.script({"codex": bad, "gemini": bad})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 3, proc.stderr
    run = council.only_run()
    assert "refinement skipped" in (run / "progress.log").read_text()
    assert "1 of 3 agents contributed (claude)" in (run / "final-report.md").read_text()
    # its own rule skipped it at a depth that runs it: the header says so
    assert "· depth standard: research → (refinement skipped) → synthesis ·" in \
        (run / "final-report.md").read_text().splitlines()[0]


def test_every_agent_failing_fails_the_phase_and_keeps_files(council: Council) -> None:
    council.script({"*": {"crash": True, "crash_kind": "bad_request"}})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("council: every agent failed in "
                                                           "research")
    run = council.only_run()
    assert state_of(run)["phase"] == "failed"
    assert (run / "progress.log").is_file()
    assert (run / "logs" / "claude-research.jsonl").stat().st_size > 0


def test_synthesis_failure_is_a_failed_run(council: Council) -> None:
    council.script({"claude:synthesis": {"crash": True, "crash_kind": "bad_request"}})
    proc = council.run("run", "--test", "q")
    assert proc.returncode == 1
    run = council.only_run()
    assert state_of(run)["phase"] == "failed"
    assert (run / "claude-refined.md").is_file()
    assert not (run / "final-report.md").exists()


def test_hostile_topic_is_only_data(council: Council, tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    topic = (f"$(touch {canary}) `touch {canary}`; touch {canary} | & 'single' \"double\" "
             "{{ 7*7 }} {% raise %} \\n ../../etc/passwd\nsecond line")
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", topic)
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    assert not canary.exists()
    assert state_of(run)["topic"] == topic
    prompt = (run / "agents" / "claude" / "research-prompt.md").read_text()
    assert topic in prompt  # verbatim: "{{ 7*7 }}" was not evaluated
    for start in (e for e in council.fake_log() if e["event"] == "start"):
        assert all("touch" not in arg for arg in start["argv"])


def test_topic_from_stdin(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--agents", "claude", "--topic-file", "-",
                       input=b"A topic from stdin\n")
    assert proc.returncode == 0, proc.stderr
    assert state_of(council.only_run())["topic"] == "A topic from stdin"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", ""], "is empty"),
        (["run", "--agents", "gpt", "q"], "unknown agent 'gpt'"),
        (["run", "--agents", ",", "q"], "at least one agent"),
        (["run", "--timeout", "0", "q"], "--timeout must be a positive number of seconds"),
        (["run", "--max-iterations", "999", "q"], "max_iterations must be between"),
        (["run", "--synthesizer", "bard", "q"], "synthesizer 'bard'"),
        (["run"], "no topic"),
        (["status", "../../etc"], "is not a run id"),
        (["status"], "no council runs"),
        (["status", "20990101-000000-abcdef"], "no run 20990101-000000-abcdef"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(council: Council, args: list[str],
                                           message: str) -> None:
    proc = council.run(*args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not council.research.exists() or not any(council.research.iterdir())


def test_status_shows_each_agent(council: Council) -> None:
    council.script({"gemini": {"crash": True, "crash_kind": "bad_request"}})
    assert council.run("run", "--test", "q").returncode == 3  # without gemini
    proc = council.run("status")
    assert proc.returncode == 0
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line}
    assert "done" in lines["phase"]
    assert "failed" in lines["gemini"]
    assert "research" in lines["gemini"]
    assert "2/2" in lines["codex"]
    data = json.loads(council.run("status", "--json", council.only_run().name).stdout)
    assert data["phase"] == "done"
    by_agent = {a["agent"]: a for a in data["agents"]}
    assert by_agent["gemini"]["status"] == "failed"
    assert by_agent["claude"]["output_bytes"] > 0
    # where the money went: each agent at each phase, input (of it cached), output, cost
    used = {(u["agent"], u["phase"]): u for u in data["usage"]}
    research = used[("claude", "research")]
    assert research["tokens_in"] > 0
    assert research["tokens_out"] > 0
    assert {"tokens_cached", "cost_usd", "estimated", "cli"} <= set(research)
    assert ("gemini", "synthesis") not in used


def test_a_megabyte_topic_never_reaches_an_argv(council: Council) -> None:
    topic = ("Why? " * 200_000)[:999_000]
    (council.root / "topic.txt").write_text(topic)
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--topic-file", "topic.txt")
    assert proc.returncode == 0, proc.stderr
    assert state_of(council.only_run())["topic"] == topic.strip()
    for start in (e for e in council.fake_log() if e["event"] == "start"):
        assert all(len(arg) < 10_000 for arg in start["argv"])


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\xff\xfe not utf-8", "not valid UTF-8"), (b"a\x00b", "NUL byte"), (b" \n", "empty")],
)
def test_bad_topic_files(council: Council, content: bytes, message: str) -> None:
    (council.root / "topic.txt").write_bytes(content)
    proc = council.run("run", "--topic-file", "topic.txt")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_corrupt_state_is_one_line_not_a_traceback(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude", "q").returncode == 0
    run = council.only_run()
    original = (run / "state.yaml").read_text()
    (run / "state.yaml").write_text(original.replace("schema_version: 1", "schema_version: 7"))
    for args in (["status"], ["resume", run.name], ["cancel", run.name]):
        proc = council.run(*args)
        assert proc.returncode == 1
        assert "schema_version 7 is not 1" in proc.stderr
        assert "Traceback" not in proc.stderr
