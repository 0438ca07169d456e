"""Each CLI offers a seat only the tools its phase needs, with council's instructions in place
of the CLI's coding-agent prompt (council/agents/toolsets.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from council.agents import adapter_for
from council.agents.base import AgentJob
from council.graph import BY_NAME, FILES, GRAPH, WEB
from council.runoptions import Seat
from council.store import loop


def job(tmp_path: Path, cli: str, tools: str, *extra: str) -> AgentJob:
    cwd, private = tmp_path / "agent", tmp_path / "loops"
    cwd.mkdir(exist_ok=True)
    private.mkdir(exist_ok=True)
    prompt = tmp_path / "prompt.md"
    prompt.write_text("p")
    return AgentJob(seat=Seat(cli, cli, extra_args=extra), tag="research", cwd=cwd,
                    prompt_file=prompt, hook_args=(), max_iterations=2, private_dir=private,
                    tools=tools)


def value(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_json_steps_whose_inputs_are_given_offer_no_web() -> None:
    assert {p.name for p in GRAPH if p.tools == FILES} == {"scope", "claims", "recheck"}
    # verification opens the sources the claims cite
    assert BY_NAME["verification"].tools == WEB


def test_claude_offers_only_the_phase_s_tools_and_no_agent(tmp_path: Path) -> None:
    for tools, web in ((WEB, True), (FILES, False)):
        argv = adapter_for("claude").prepare(job(tmp_path, "claude", tools)).argv
        offered = value(argv, "--tools").split(",")
        assert "Agent" not in offered
        assert "Bash" not in offered
        assert {"Read", "Write", "Edit"} <= set(offered)
        assert ("WebSearch" in offered) is web
        assert ("WebFetch" in offered) is web
        system = Path(value(argv, "--system-prompt-file"))
        assert system.parent == tmp_path / "loops"  # council's folder, not the agent's
        assert loop.MARKER in system.read_text()
        assert ("WebSearch" in system.read_text()) is web
        # containment is unchanged
        assert value(argv, "--permission-mode") == "acceptEdits"
        assert value(argv, "--disallowedTools") == "Bash"


def test_a_claude_seat_that_asks_for_its_own_tools_gets_them(tmp_path: Path) -> None:
    argv = adapter_for("claude").prepare(
        job(tmp_path, "claude", WEB, "--tools", "default", "--system-prompt", "x")).argv
    assert argv.count("--tools") == 1
    assert value(argv, "--tools") == "default"
    assert "--system-prompt-file" not in argv


def test_codex_switches_off_what_research_never_uses(tmp_path: Path) -> None:
    for tools, search in ((WEB, "live"), (FILES, "disabled")):
        argv = adapter_for("codex").prepare(job(tmp_path, "codex", tools)).argv
        pairs = list(itertools.pairwise(argv))
        assert ("-c", f"web_search={search}") in pairs
        for feature in ("goals", "apps", "multi_agent"):
            assert ("--disable", feature) in pairs
        (instructions,) = [b for a, b in pairs if a == "-c" and "model_instructions_file" in b]
        path = Path(json.loads(instructions.split("=", 1)[1]))
        assert "apply_patch" in path.read_text()
        assert path.parent == tmp_path / "loops"
        # the permission profile is still there
        assert any(a.startswith("default_permissions=") for a in argv)
    resumed = adapter_for("codex").resume(job(tmp_path, "codex", WEB), "T", "go on").argv
    assert any("model_instructions_file" in a for a in resumed)


def test_gemini_tools_and_system_prompt(tmp_path: Path) -> None:
    for tools, web in ((WEB, True), (FILES, False)):
        j = job(tmp_path, "gemini", tools)
        inv = adapter_for("gemini").prepare(j)
        settings = json.loads((j.cwd / ".gemini" / "settings.json").read_text())
        core = settings["tools"]["core"]
        assert "write_file" in core
        assert "invoke_agent" not in core
        assert "run_shell_command" not in core
        assert ("google_web_search" in core) is web
        system = Path(inv.env["GEMINI_SYSTEM_MD"])
        assert "write_file" in system.read_text()
        assert system.parent == tmp_path / "loops"
        assert value(inv.argv, "--approval-mode") == "auto_edit"


def test_every_toolset_renders_for_every_cli() -> None:
    for cli in ("claude", "codex", "gemini"):
        for tools in (WEB, FILES):
            names = adapter_for(cli).instructions.tools[tools]
            assert names
            assert all(isinstance(n, str) for n in names)
