"""`council doctor --json` and `council list --json`: the same findings as the tables, as data
with the stable keys their --help names, for scripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import Council

from council import cli
from council.commands.doctor import CLI_JSON_KEYS, JSON_KEYS
from council.commands.runs import LIST_JSON_KEYS
from council.readiness.setup import HostSetup


def council_json(council: Council, *args: str, **env: str) -> tuple[int, object, str]:
    proc = subprocess.run([sys.executable, "-m", "council", *args], env={**council.env, **env},
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout), proc.stdout


def test_doctor_json_holds_what_the_table_says_with_the_documented_keys(
        council: Council) -> None:
    code, found, _ = council_json(council, "doctor", "--json", GITHUB_TOKEN="ghp-planted")
    text = subprocess.run([sys.executable, "-m", "council", "doctor"], env=council.env,
                          capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert code == 0
    assert isinstance(found, dict)
    assert tuple(found) == JSON_KEYS
    assert found["ok"] is True
    assert [tuple(c) for c in found["clis"]] == [CLI_JSON_KEYS] * 3
    table = {line.split()[0]: line.split() for line in text[1:4]}
    for one in found["clis"]:
        row = table[one["cli"]]
        assert (one["path"], one["version"], one["credentials"]) == (row[1], row[2], row[-1])
        assert one["tested"] is (row[3] == "yes")
        assert one["ready"] is True
        assert one["problem"] is None
        assert one["live"] is None
    host_keys = tuple(HostSetup.__dataclass_fields__)
    assert found["hosts"]
    assert all(tuple(h) == host_keys for h in found["hosts"])
    assert list(found["environment"]) == ["claude", "codex", "gemini"]
    assert "ANTHROPIC_API_KEY" in found["environment"]["claude"]
    assert "GITHUB_TOKEN" not in json.dumps(found)  # names what agents get, nothing else

    code, found, _ = council_json(council, "doctor", "--json", PATH="/nonexistent")
    assert code == 1
    assert isinstance(found, dict)
    assert found["ok"] is False
    assert all(c["path"] is None and c["problem"] for c in found["clis"])


def test_every_json_key_is_named_in_the_help() -> None:
    runner = CliRunner()
    doctor_help = " ".join(runner.invoke(cli.main, ["doctor", "--help"]).output.split())
    for key in (*JSON_KEYS, *CLI_JSON_KEYS, *HostSetup.__dataclass_fields__):
        assert key in doctor_help, key
    list_help = " ".join(runner.invoke(cli.main, ["list", "--help"]).output.split())
    assert all(key in list_help for key in LIST_JSON_KEYS)


def test_list_json_is_every_run_with_the_same_keys(council: Council, tmp_path: Path) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "a topic\nover two lines").returncode == 0
    broken = council.research / "20260101-000000-abcdef"
    broken.mkdir()
    (broken / "state.yaml").write_text("{not yaml")
    code, runs, _ = council_json(council, "list", "--json")
    assert code == 0
    assert isinstance(runs, list)
    assert len(runs) == 2
    assert all(tuple(r) == LIST_JSON_KEYS for r in runs)
    old, done = runs  # oldest first
    assert old["id"] == broken.name
    assert old["error"]
    assert old["phase"] is None
    assert old["own"] is False  # not made by council here
    assert (council.research / done["id"] / "state.yaml").is_file()
    assert (done["phase"], done["state_phase"], done["own"], done["error"]) == (
        "done", "done", True, None)
    assert done["topic"] == "a topic\nover two lines"  # whole, not cut for a table
    assert isinstance(done["duration_s"], int)
    assert done["cost_usd"] is not None
    assert done["final_report"] == str(council.research / done["id"] / "final-report.md")

    empty = tmp_path / "nothing"
    code, runs, _ = council_json(council, "list", "--json", "--research-dir", str(empty))
    assert (code, runs) == (0, [])


def test_doctor_names_a_workers_non_rotating_key_and_never_shows_it(council: Council) -> None:
    """A headless worker logs in with `claude setup-token`'s CLAUDE_CODE_OAUTH_TOKEN and
    codex's CODEX_API_KEY (docs/eval.md): doctor and doctor --json name each as the CLI's
    credentials, and no value reaches either output."""
    env = {k: v for k, v in council.env.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")}
    keys = {"claude": "CLAUDE_CODE_OAUTH_TOKEN", "codex": "CODEX_API_KEY",
            "gemini": "GEMINI_API_KEY"}
    values = {name: f"planted-{name.lower()}-0c4e9a" for name in keys.values()}
    env.update(values)
    table = subprocess.run([sys.executable, "-m", "council", "doctor"], env=env,
                           capture_output=True, text=True, timeout=60)
    found = subprocess.run([sys.executable, "-m", "council", "doctor", "--json"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    assert found.returncode == 0, found.stderr
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[1:4]}
    clis = {c["cli"]: c for c in json.loads(found.stdout)["clis"]}
    for one, name in keys.items():
        assert rows[one][-1] == name
        assert clis[one]["credentials"] == name
        assert clis[one]["ready"] is True
    for out in (table.stdout, table.stderr, found.stdout, found.stderr):
        assert not [v for v in values.values() if v in out]
