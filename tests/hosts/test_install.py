"""What `council setup HOST` decides to do from what each host has on disk (laid out as
Claude Code 2.1.197, Gemini CLI 0.61 and Codex 0.169 write it), and how it records codex's
hook trust without touching the rest of the user's config.toml. The commands themselves run
against the real CLIs in tests/realcli/test_wheel_hosts_real.py."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from council.hosts import install, setup
from council.hosts.claude import install as claude
from council.hosts.codex import install as codex
from council.hosts.gemini import install as gemini
from council.hosts.install import Step

ROOT = Path(__file__).resolve().parents[2]
FILES = Path("/opt/venv/site-packages/council/hostfiles")


def claude_plugin(enabled: bool) -> claude.Plugin:
    return claude.Plugin("council@council", "0.1.0", Path("/c"), enabled, str(FILES))


def test_claude_adds_the_marketplace_then_installs() -> None:
    plan = claude.decide(None, {}, FILES)
    assert [s.argv for s in plan.steps] == [
        ("claude", "plugin", "marketplace", "add", str(FILES)),
        ("claude", "plugin", "install", "council@council", "--scope", "user")]
    ours = {"council": {"source": {"source": "directory", "path": str(FILES)}}}
    assert [s.argv[:3] for s in claude.decide(None, ours, FILES).steps] == [
        ("claude", "plugin", "install")]


def test_claude_never_replaces_a_marketplace_of_the_same_name() -> None:
    """claude itself would swap the source silently (seen with 2.1.197)."""
    theirs = {"council": {"source": {"source": "github", "repo": "someone/council"}}}
    with pytest.raises(install.SetupError, match=r"from someone/council: .*"
                       r"`claude plugin marketplace remove council`"):
        claude.decide(None, theirs, FILES)


def test_claude_installed_is_left_alone_and_a_disabled_one_enabled() -> None:
    assert claude.decide(claude_plugin(True), {}, FILES).steps == ()
    assert [s.argv for s in claude.decide(claude_plugin(False), {}, FILES).steps] == [
        ("claude", "plugin", "enable", "council@council")]


def test_gemini_links_from_the_extensions_own_folder(tmp_path: Path) -> None:
    """--consent trusts the folder gemini runs in: the extension's, never the user's."""
    (step,) = gemini.decide(None, FILES).steps
    extension = FILES / "extensions" / "gemini"
    assert step == install.Step(("gemini", "extensions", "link", str(extension), "--consent"),
                                cwd=extension, env={"GEMINI_CLI_NO_RELAUNCH": "true"})
    linked = tmp_path / "ext"
    linked.mkdir()
    (linked / "gemini-extension.json").write_text("{}")
    assert gemini.decide({"type": "link", "source": str(linked)}, FILES).steps == ()
    assert gemini.decide({}, FILES).steps == ()  # a copy gemini installed itself
    with pytest.raises(install.SetupError, match=r"linked to a missing folder .*"
                       r"`gemini extensions uninstall council`"):
        gemini.decide({"type": "link", "source": str(tmp_path / "gone")}, FILES)


def test_codex_installs_then_leaves_an_identical_copy_alone() -> None:
    files = ROOT  # a checkout: its .agents marketplace and extensions/codex
    plan = codex.decide({}, None, files)
    assert [s.argv for s in plan.steps] == [
        ("codex", "plugin", "marketplace", "add", str(files)),
        ("codex", "plugin", "add", "council@council")]
    config = {"marketplaces": {"council": {"source": str(files)}},
              "plugins": {"council@council": {"enabled": True}}}
    same = codex.bundle_hash(files / "extensions" / "codex")
    assert codex.decide(config, same, files).steps == ()
    # an upgraded council: codex's copy is older, so it is copied again
    assert [s.argv for s in codex.decide(config, "sha256:old", files).steps] == [
        ("codex", "plugin", "add", "council@council")]


def test_codex_choices_of_the_user_are_named_not_changed() -> None:
    with pytest.raises(install.SetupError, match=r"plugins are off .*set it to true"):
        codex.decide({"features": {"plugins": False}}, None, ROOT)
    with pytest.raises(install.SetupError, match=r"council@council is disabled"):
        codex.decide({"plugins": {"council@council": {"enabled": False}}}, "h", ROOT)
    elsewhere: dict[str, Any] = {"marketplaces": {"council": {"source": "/src/other"}}}
    with pytest.raises(install.SetupError, match=r"from /src/other: .*"
                       r"`codex plugin marketplace remove council`"):
        codex.decide(elsewhere, None, ROOT)
    # installed from that other marketplace: its copy is theirs to update
    elsewhere["plugins"] = {"council@council": {"enabled": True}}
    assert codex.decide(elsewhere, "sha256:other", ROOT).steps == ()


USER_CONFIG = """\
model = "gpt-5.5"  # mine
[features]
plugins = true

[hooks.state."someone@else:hooks/hooks.json:stop:0:0"]
trusted_hash = "sha256:theirs"
"""
WANTED = {
    "council@council:hooks/hooks.json:user_prompt_submit:0:0":
        {"trusted_hash": "sha256:a", "trusted_content_hash": "sha256:b"},
    "council@council:hooks/hooks.json:stop:0:0":
        {"trusted_hash": "sha256:c", "trusted_content_hash": "sha256:b"},
}


def test_trust_is_appended_and_the_users_text_kept() -> None:
    new = codex.with_trust(USER_CONFIG, WANTED)
    assert new.startswith(USER_CONFIG)
    states = tomllib.loads(new)["hooks"]["state"]
    assert codex.trust_verdict(states, WANTED) == "trusted"
    assert states["someone@else:hooks/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:theirs"}
    assert codex.with_trust(new, WANTED) == new  # a second run writes the same text
    assert tomllib.loads(codex.with_trust("a = 1", WANTED))["a"] == 1  # no final newline


def test_stale_trust_is_replaced_in_place_and_a_users_off_switch_kept() -> None:
    stale = USER_CONFIG + (
        '\n[hooks.state."council@council:hooks/hooks.json:stop:0:0"]\n'
        'enabled = false  # turned off in /hooks\n'
        'trusted_hash = "sha256:old"\ntrusted_content_hash = "sha256:old"\n\n[tail]\nx = 1\n')
    new = codex.with_trust(stale, WANTED)
    parsed = tomllib.loads(new)
    stop = parsed["hooks"]["state"]["council@council:hooks/hooks.json:stop:0:0"]
    assert stop == {"enabled": False, **WANTED["council@council:hooks/hooks.json:stop:0:0"]}
    assert "enabled = false  # turned off in /hooks" in new
    assert parsed["tail"] == {"x": 1}
    assert new.count("[hooks.state.\"council@council:hooks/hooks.json:stop:0:0\"]") == 1


def installed_codex(home: Path) -> Path:
    cache = home / "plugins" / "cache" / "council" / "council" / "0.1.0"
    shutil.copytree(ROOT / "extensions" / "codex", cache)
    return cache


def test_codex_trust_is_written_once_through_a_link(tmp_path: Path) -> None:
    """A dotfiles link stays a link; the file it points at gets the entries, keeps its mode,
    and a second run writes nothing."""
    home = tmp_path / "codex"
    cache = installed_codex(home)
    real = tmp_path / "dotfiles" / "codex.toml"
    real.parent.mkdir()
    real.write_text(USER_CONFIG)
    real.chmod(0o640)
    (home / "config.toml").symlink_to(real)
    assert codex.trust_hooks(home) is True
    assert (home / "config.toml").is_symlink()
    assert real.stat().st_mode & 0o777 == 0o640
    assert real.read_text().startswith(USER_CONFIG)
    assert codex.trust(home, "council@council") == "trusted"
    before = real.read_text()
    assert codex.trust_hooks(home) is False
    assert real.read_text() == before
    script = cache / "hooks" / "council-hook.sh"  # codex's copy changed: trust it again
    script.write_text(script.read_text() + "# changed\n")
    assert codex.trust_hooks(home) is True
    assert codex.trust(home, "council@council") == "trusted"


def test_a_config_setup_cannot_extend_is_left_as_it_is(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    installed_codex(home)
    odd = 'hooks = { state = {} }\n'  # an inline table: a [hooks.state."…"] table cannot follow
    (home / "config.toml").write_text(odd)
    with pytest.raises(install.SetupError, match="trust them in `codex`'s /hooks instead"):
        codex.trust_hooks(home)
    assert (home / "config.toml").read_text() == odd


def test_a_steps_own_variables_reach_its_command(tmp_path: Path) -> None:
    out = tmp_path / "seen"
    step = install.Step(("sh", "-c", f'printf %s "$ONLY_HERE" > {out}'), env={"ONLY_HERE": "1"})
    setup.run_step("gemini", step, {"PATH": "/usr/bin:/bin"})
    assert out.read_text() == "1"


def test_a_missing_or_failing_cli_is_one_line_with_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(install.SetupError, match=r"^codex is not installed or not on PATH: "
                       r"npm install -g @openai/codex, then run `council setup codex`$"):
        setup.run_step("codex", install.Step(("codex", "plugin", "list")),
                         {"PATH": str(tmp_path)})
    failing = install.Step(("sh", "-c", "echo working; echo 'no such marketplace' >&2; exit 3"))
    with pytest.raises(install.SetupError) as caught:
        setup.run_step("claude", failing, {"PATH": "/usr/bin:/bin"})
    assert str(caught.value) == ("`sh -c echo working; echo 'no such marketplace' >&2; exit 3` "
                                 "failed (exit 3: no such marketplace): run it yourself to see why")


def test_setup_runs_a_hosts_plan_then_its_finish_then_says_what_doctor_sees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`council setup codex` with codex's copy already council's: nothing to install, the
    hooks trusted after the plan, and doctor's line for the host last. A second run changes
    nothing."""
    home = tmp_path / "codex"
    installed_codex(home)
    (home / "config.toml").write_text(
        f'[marketplaces.council]\nsource = "{ROOT}"\n\n[plugins."council@council"]\n'
        'enabled = true\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setattr(setup, "hostfiles", lambda: ROOT)
    monkeypatch.setattr(install, "council_on_path", lambda: "/opt/council/bin/council")
    ran: list[Step] = []
    monkeypatch.setattr(setup, "run_step", lambda host, step, env: ran.append(step))
    assert setup.setup_host("codex") == [
        f"codex: trusted council's hooks in {home / 'config.toml'}, as codex's /hooks screen "
        "records it (review them there)",
        "codex: ready (plugin installed, hooks trusted)"]
    assert ran == []
    assert setup.setup_host("codex") == ["codex: already set up, nothing changed",
                                         "codex: ready (plugin installed, hooks trusted)"]


def test_setup_runs_the_plans_steps_in_order(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setattr(setup, "hostfiles", lambda: FILES)
    ran: list[tuple[str, Step]] = []
    monkeypatch.setattr(setup, "run_step", lambda host, step, env: ran.append((host, step)))
    lines = setup.setup_host("claude")
    assert [(host, step.argv[:4]) for host, step in ran] == [
        ("claude", ("claude", "plugin", "marketplace", "add")),
        ("claude", ("claude", "plugin", "install", "council@council"))]
    assert lines[0] == f"claude: installed plugin council@council from {FILES}"
    assert lines[1] == "claude: plugin not installed"  # the fake steps installed nothing


def test_setup_without_host_files_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup, "hostfiles", lambda: None)
    with pytest.raises(install.SetupError, match="reinstall council"):
        setup.setup_host("gemini")
