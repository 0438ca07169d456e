"""The cli/<claude|codex|gemini> judge: a headless CLI call with no tools, the allow-listed
environment and the prompt on stdin; its answer, usage and failures read with the CLI's
adapter."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest
from fakes import FAKES_BIN
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, ModelOutput

from council.agents import adapter_for
from council.agents.environment import agent_env
from council.agents.gemini import NO_MCP_SERVER
from council.evaluation import judge, judging
from council.evaluation.questions import Criterion

from .conftest import JUDGE_BIN


def argv(cli: str, model: str | None, folder: Path) -> list[str]:
    """The judge's command line: the adapter's one-shot call."""
    return list(adapter_for(cli).one_shot(folder, folder / "prompt.md", model).argv)


def environment(cli: str, folder: Path) -> dict[str, str]:
    """The judge's environment: the allow-list and what the one-shot call adds."""
    return {**agent_env(cli), **adapter_for(cli).one_shot(folder, folder / "prompt.md").env}


def test_no_cli_is_offered_a_tool(tmp_path: Path) -> None:
    claude = argv("claude", "opus", tmp_path)
    assert claude[claude.index("--tools") + 1] == ""
    assert "--allowedTools" not in claude
    assert json.loads(claude[claude.index("--settings") + 1]) == {"disableAllHooks": True}
    assert claude[-2:] == ["--model", "opus"]
    codex = argv("codex", None, tmp_path)
    assert "web_search=disabled" in codex
    assert codex[-1] == "-"  # the prompt on stdin, never on the argv
    assert any("default_permissions" in a or "workspace-write" in a for a in codex)
    gemini = argv("gemini", "flash", tmp_path)
    assert "--approval-mode" not in gemini  # headless default: no tool that asks
    assert gemini[-2:] == ["-m", "flash"]
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["tools"]["core"] == []  # an empty allow-list: no built-in tool at all
    assert (tmp_path / ".gemini" / ".env").read_text() == ""


def test_no_judge_starts_a_users_mcp_server(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """As a seat: claude only --mcp-config's servers, codex each configured one turned off and
    no project's config, gemini a server list that names none of the user's."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('[mcp_servers."github.main"]\ncommand = "gh-mcp"\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert "--strict-mcp-config" in argv("claude", None, tmp_path)
    codex = argv("codex", None, tmp_path)
    overrides = [codex[i + 1] for i, a in enumerate(codex) if a == "-c"]
    assert 'mcp_servers={"github.main"={enabled=false}}' in overrides
    assert "project_root_markers=[]" in overrides
    gemini = argv("gemini", None, tmp_path)
    assert gemini[gemini.index("--allowed-mcp-server-names") + 1] == NO_MCP_SERVER


def test_each_cli_gets_only_its_own_variables(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    env = environment("claude", tmp_path)
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-x"
    assert "OPENAI_API_KEY" not in env
    assert "GITHUB_TOKEN" not in env
    codex = environment("codex", tmp_path)
    assert codex["HOME"] == str(tmp_path / "home")
    assert "ANTHROPIC_API_KEY" not in codex


def test_the_answer_from_each_clis_events(tmp_path: Path) -> None:
    def log(*events: object) -> Path:
        path = tmp_path / "out.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        return path

    assert adapter_for("claude").answer(log({"type": "system"}, {"type": "result",
                                                                "result": "A"})) == "A"
    assert adapter_for("codex").answer(log(
        {"type": "item.completed", "item": {"type": "reasoning", "text": "hmm"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "B"}})) == "B"
    assert adapter_for("gemini").answer(log(
        {"type": "message", "role": "user", "content": "Q"},
        {"type": "message", "role": "assistant", "content": "C", "delta": True},
        {"type": "message", "role": "assistant", "content": "D", "delta": True})) == "CD"


def test_a_conversation_becomes_one_prompt() -> None:
    assert judge.transcript([ChatMessageUser(content="only")]) == "only"
    assert judge.transcript([ChatMessageSystem(content="s"), ChatMessageUser(content="u")]) \
        == "[system]\ns\n\n[user]\nu"


@pytest.fixture
def judge_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PATH", f"{JUDGE_BIN}:{FAKES_BIN}:{os.environ['PATH']}")
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "fake-key")
    log = tmp_path / "judge-log.jsonl"
    monkeypatch.setenv("COUNCIL_FAKE_JUDGE_LOG", str(log))
    return log


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_judgement_through_each_cli(judge_path: Path, cli: str) -> None:
    prompt = judging.rubric_prompt("Q?", "a report", [Criterion("x"), Criterion("y")])
    model = judge.CliJudge(cli)

    async def ask() -> ModelOutput:
        return await model.generate([ChatMessageUser(content=prompt)], [], "auto",
                                    GenerateConfig())

    output = anyio.run(ask)
    met = judging.parse_rubric(output.completion, 2)
    assert met["c1"].met
    assert output.usage is not None
    assert output.usage.input_tokens > 0
    (call,) = [json.loads(line) for line in judge_path.read_text().splitlines()]
    assert (call["cli"], call["kind"]) == (cli, "rubric")


def test_each_call_works_in_a_folder_of_councils_not_in_tmpdir(
        judge_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In $TMPDIR another local user's /tmp/.git and /tmp/GEMINI.md (or AGENTS.md) became the
    judge's project and its instructions: each call now works in a folder under council's
    own 0700 cache folder, whose `.git` ends gemini's and codex's walk up."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = judge.CliJudge("codex")

    async def ask() -> object:
        return await model.generate([ChatMessageUser(content="Q")], [], "auto",
                                    GenerateConfig())

    anyio.run(ask)
    (call,) = [json.loads(line) for line in judge_path.read_text().splitlines()]
    folder = Path(call["argv"][call["argv"].index("-C") + 1])  # codex's working folder
    root = tmp_path / "cache" / "council" / "judge"
    assert folder.parent == root  # not $TMPDIR (main's tempfile.TemporaryDirectory())
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert (root / ".git").is_dir()
    assert not folder.exists()  # removed after the call
    assert [p.name for p in root.iterdir()] == [".git"]


def test_the_judges_folder_must_be_this_users(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "council" / "judge"
    root.mkdir(parents=True, mode=0o755)
    root.chmod(0o755)
    assert judge.call_root() == root
    assert stat.S_IMODE(root.stat().st_mode) == 0o700  # made private again
    (root / ".git").rmdir()
    root.rmdir()
    other = tmp_path / "someone-elses"
    other.mkdir()
    root.symlink_to(other)  # never worked in through a link
    with pytest.raises(judge.JudgeError, match="not a folder of this user's"):
        judge.call_root()
    assert not (other / ".git").exists()


def test_a_failing_judge_says_why(judge_path: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"fail": True}))
    monkeypatch.setenv("COUNCIL_FAKE_JUDGE", str(script))
    model = judge.CliJudge("claude")

    async def ask() -> object:
        return await model.generate([ChatMessageUser(content="Q")], [], "auto",
                                    GenerateConfig())

    with pytest.raises(judge.JudgeError, match="judge cli:claude: claude exited with code 1"):
        anyio.run(ask)


def test_a_judge_that_cannot_run_here_is_named(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(judge.JudgeError, match="codex is not installed: npm install -g"):
        judge.CliJudge("codex")
    with pytest.raises(judge.JudgeError,
                       match=r"^judge cli:llama: the cli judge is one of .* not cli:llama$"):
        judge.CliJudge("llama")
