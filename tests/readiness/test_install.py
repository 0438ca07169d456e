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

from council.readiness import install, setup

ROOT = Path(__file__).resolve().parents[2]
FILES = Path("/opt/venv/site-packages/council/hostfiles")


def claude_plugin(enabled: bool) -> setup.ClaudePlugin:
    return setup.ClaudePlugin("council@council", "0.1.0", Path("/c"), enabled, str(FILES))


def test_claude_adds_the_marketplace_then_installs() -> None:
    plan = install.claude_plan(None, {}, FILES)
    assert [s.argv for s in plan.steps] == [
        ("claude", "plugin", "marketplace", "add", str(FILES)),
        ("claude", "plugin", "install", "council@council", "--scope", "user")]
    ours = {"council": {"source": {"source": "directory", "path": str(FILES)}}}
    assert [s.argv[:3] for s in install.claude_plan(None, ours, FILES).steps] == [
        ("claude", "plugin", "install")]


def test_claude_never_replaces_a_marketplace_of_the_same_name() -> None:
    """claude itself would swap the source silently (seen with 2.1.197)."""
    theirs = {"council": {"source": {"source": "github", "repo": "someone/council"}}}
    with pytest.raises(install.SetupError, match=r"from someone/council: .*"
                       r"`claude plugin marketplace remove council`"):
        install.claude_plan(None, theirs, FILES)


def test_claude_installed_is_left_alone_and_a_disabled_one_enabled() -> None:
    assert install.claude_plan(claude_plugin(True), {}, FILES).steps == ()
    assert [s.argv for s in install.claude_plan(claude_plugin(False), {}, FILES).steps] == [
        ("claude", "plugin", "enable", "council@council")]


def test_gemini_links_from_the_extensions_own_folder(tmp_path: Path) -> None:
    """--consent trusts the folder gemini runs in: the extension's, never the user's."""
    (step,) = install.gemini_plan(None, FILES).steps
    extension = FILES / "extensions" / "gemini"
    assert step == install.Step(("gemini", "extensions", "link", str(extension), "--consent"),
                                cwd=extension)
    linked = tmp_path / "ext"
    linked.mkdir()
    (linked / "gemini-extension.json").write_text("{}")
    assert install.gemini_plan({"type": "link", "source": str(linked)}, FILES).steps == ()
    assert install.gemini_plan({}, FILES).steps == ()  # a copy gemini installed itself
    with pytest.raises(install.SetupError, match=r"linked to a missing folder .*"
                       r"`gemini extensions uninstall council`"):
        install.gemini_plan({"type": "link", "source": str(tmp_path / "gone")}, FILES)


def test_codex_installs_then_leaves_an_identical_copy_alone() -> None:
    files = ROOT  # a checkout: its .agents marketplace and extensions/codex
    plan = install.codex_plan({}, None, files)
    assert [s.argv for s in plan.steps] == [
        ("codex", "plugin", "marketplace", "add", str(files)),
        ("codex", "plugin", "add", "council@council")]
    config = {"marketplaces": {"council": {"source": str(files)}},
              "plugins": {"council@council": {"enabled": True}}}
    same = setup.bundle_hash(files / "extensions" / "codex")
    assert install.codex_plan(config, same, files).steps == ()
    # an upgraded council: codex's copy is older, so it is copied again
    assert [s.argv for s in install.codex_plan(config, "sha256:old", files).steps] == [
        ("codex", "plugin", "add", "council@council")]


def test_codex_choices_of_the_user_are_named_not_changed() -> None:
    with pytest.raises(install.SetupError, match=r"plugins are off .*set it to true"):
        install.codex_plan({"features": {"plugins": False}}, None, ROOT)
    with pytest.raises(install.SetupError, match=r"council@council is disabled"):
        install.codex_plan({"plugins": {"council@council": {"enabled": False}}}, "h", ROOT)
    elsewhere: dict[str, Any] = {"marketplaces": {"council": {"source": "/src/other"}}}
    with pytest.raises(install.SetupError, match=r"from /src/other: .*"
                       r"`codex plugin marketplace remove council`"):
        install.codex_plan(elsewhere, None, ROOT)
    # installed from that other marketplace: its copy is theirs to update
    elsewhere["plugins"] = {"council@council": {"enabled": True}}
    assert install.codex_plan(elsewhere, "sha256:other", ROOT).steps == ()


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
    new = install.with_trust(USER_CONFIG, WANTED)
    assert new.startswith(USER_CONFIG)
    states = tomllib.loads(new)["hooks"]["state"]
    assert setup.trust_verdict(states, WANTED) == "trusted"
    assert states["someone@else:hooks/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:theirs"}
    assert install.with_trust(new, WANTED) == new  # a second run writes the same text
    assert tomllib.loads(install.with_trust("a = 1", WANTED))["a"] == 1  # no final newline


def test_stale_trust_is_replaced_in_place_and_a_users_off_switch_kept() -> None:
    stale = USER_CONFIG + (
        '\n[hooks.state."council@council:hooks/hooks.json:stop:0:0"]\n'
        'enabled = false  # turned off in /hooks\n'
        'trusted_hash = "sha256:old"\ntrusted_content_hash = "sha256:old"\n\n[tail]\nx = 1\n')
    new = install.with_trust(stale, WANTED)
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
    assert install.trust_codex_hooks(home) is True
    assert (home / "config.toml").is_symlink()
    assert real.stat().st_mode & 0o777 == 0o640
    assert real.read_text().startswith(USER_CONFIG)
    assert setup.codex_trust(home, "council@council") == "trusted"
    before = real.read_text()
    assert install.trust_codex_hooks(home) is False
    assert real.read_text() == before
    script = cache / "hooks" / "council-hook.sh"  # codex's copy changed: trust it again
    script.write_text(script.read_text() + "# changed\n")
    assert install.trust_codex_hooks(home) is True
    assert setup.codex_trust(home, "council@council") == "trusted"


def test_a_config_setup_cannot_extend_is_left_as_it_is(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    installed_codex(home)
    odd = 'hooks = { state = {} }\n'  # an inline table: a [hooks.state."…"] table cannot follow
    (home / "config.toml").write_text(odd)
    with pytest.raises(install.SetupError, match="trust them in `codex`'s /hooks instead"):
        install.trust_codex_hooks(home)
    assert (home / "config.toml").read_text() == odd


def test_a_missing_or_failing_cli_is_one_line_with_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(install.SetupError, match=r"^codex is not installed or not on PATH: "
                       r"npm install -g @openai/codex, then run `council setup codex`$"):
        install.run_step("codex", install.Step(("codex", "plugin", "list")),
                         {"PATH": str(tmp_path)})
    failing = install.Step(("sh", "-c", "echo working; echo 'no such marketplace' >&2; exit 3"))
    with pytest.raises(install.SetupError) as caught:
        install.run_step("claude", failing, {"PATH": "/usr/bin:/bin"})
    assert str(caught.value) == ("`sh -c echo working; echo 'no such marketplace' >&2; exit 3` "
                                 "failed (exit 3: no such marketplace): run it yourself to see why")
