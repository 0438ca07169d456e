"""No secret of council's environment in a file council writes: the rules, the chunked scrub
of large files, and a whole run whose agents' reports carry a secret."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Council

from council import redact

TOKEN = "ghp_planted-0f9e8d7c6b5a"


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("GITHUB_TOKEN", TOKEN, True),
    ("OPENAI_API_KEY", "sk-live-abcdefgh", True),
    ("aws_secret_access_key", "abcdefgh12", True),  # names are matched in any case
    ("DB_PASSWORD", "hunter2hunter2", True),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/home/u/creds.json", True),
    ("SSH_PRIVATE_KEY_PATH", "/home/u/.ssh/id", True),
    ("ANTHROPIC_API_KEY", "dummy", False),  # too short to be a secret, too common to replace
    ("HOME", "/home/someone", False),
    ("PATH", "/usr/bin:/bin", False),
])
def test_which_variables_are_secrets(name: str, value: str, secret: bool) -> None:
    assert (redact.secrets({name: value}) == [(name, value)]) is secret


def test_text_names_what_it_replaced_and_the_longest_value_goes_first() -> None:
    found = redact.secrets({"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more"})
    out, names = redact.text("x abcdefgh-and-more y abcdefgh", found)
    assert out == "x REDACTED:B_TOKEN y REDACTED:A_TOKEN"
    assert names == ["B_TOKEN", "A_TOKEN"]
    assert redact.text("nothing here", found) == ("nothing here", [])


def test_a_large_file_is_scrubbed_in_chunks_even_across_a_chunk_boundary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact, "_CHUNK", 64)
    found = redact.secrets({"GITHUB_TOKEN": TOKEN})
    path = tmp_path / "log.jsonl"
    # The token at every offset against the 64-byte chunks, and non-ASCII text around it.
    text = "".join(f"{'é' * n}{TOKEN}\n" for n in range(70))
    path.write_text(text, encoding="utf-8")
    assert redact.scrub_file(path, found) == ["GITHUB_TOKEN"]
    assert path.read_text(encoding="utf-8") == text.replace(TOKEN, "REDACTED:GITHUB_TOKEN")
    before = path.stat().st_mtime_ns
    assert redact.scrub_file(path, found) == []  # nothing left: the file is only read
    assert path.stat().st_mtime_ns == before
    assert redact.scrub_file(tmp_path / "gone", found) == []


def test_no_file_of_a_run_keeps_a_secret_an_agent_wrote(council: Council) -> None:
    """Each agent's report quotes a token from council's environment (as if a page had
    handed it over): the published reports, the final report, report.html, the logs, state
    and progress hold `REDACTED:GITHUB_TOKEN` instead, and progress.log names each agent."""
    council.env["GITHUB_TOKEN"] = TOKEN
    leak = f"# Report\n\nFound a token: {TOKEN}\n\nSource: https://example.org/?t={TOKEN}\n"
    council.script({"*": {"finish_after": 1, "content": leak}})
    proc = council.run("run", "--test", "--agents", "claude,codex,gemini", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    holding = [str(p.relative_to(run)) for p in run.rglob("*")
               if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert holding == []
    assert "REDACTED:GITHUB_TOKEN" in (run / "final-report.md").read_text()
    assert TOKEN not in proc.stdout + proc.stderr
    log = (run / "progress.log").read_text()
    for seat in ("claude", "codex", "gemini"):
        assert f"research {seat} warning: its report held the value of GITHUB_TOKEN; " \
               "redacted" in log


def test_state_yaml_is_redacted_in_its_data_so_it_reads_back_the_same_shape(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret at the start of a value, redacted in the text, would read back as a YAML
    list; and the owner compares the file with what it wrote to spot another writer."""
    import yaml

    from council.state import AgentPhase, AgentRecord, RunState, dump, load_state, owned

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    state = RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z", options={},
                     agents={"codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                         status="failed", error=f"{TOKEN} was refused")})})
    text = dump(state)
    assert TOKEN not in text
    error = yaml.safe_load(text)["agents"]["codex"]["phases"]["research"]["error"]
    assert error == "REDACTED:GITHUB_TOKEN was refused"

    run = tmp_path / "run"
    run.mkdir()
    from council.state import create_state, update_state
    create_state(run, RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z",
                               options={}))
    with owned(run):
        def fail(s: RunState) -> None:
            s.error = f"{TOKEN} leaked"
        update_state(run, fail, now=True)
        update_state(run, fail, now=True)
    assert load_state(run).error == "REDACTED:GITHUB_TOKEN leaked"
    progress = run / "progress.log"
    assert not progress.exists() or "changed by another process" not in progress.read_text()


def test_a_file_that_cannot_be_rewritten_raises_and_leaves_no_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner then empties the file and fails the seat, rather than publish it."""
    import os

    folder = tmp_path / "agent"
    folder.mkdir()
    path = folder / "report.md"
    path.write_text(f"token {TOKEN}\n")

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        redact.scrub_file(path, redact.secrets({"GITHUB_TOKEN": TOKEN}))
    assert sorted(p.name for p in folder.iterdir()) == ["report.md"]
