"""What `council doctor` says about each host's setup, from the hosts' own files (laid out as
Gemini CLI 0.61 and Codex 0.169 write them)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from council.hosts import install, setup
from council.hosts.claude import install as claude
from council.hosts.codex import install as codex
from council.hosts.gemini import install as gemini
from council.readiness.setup import HostSetup

ROOT = Path(__file__).resolve().parents[2]
CODEX_PLUGIN = ROOT / "extensions" / "codex"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini"))
    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE",
                 "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "codex").mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setattr(install, "council_on_path", lambda: "/opt/council/bin/council")
    monkeypatch.setattr(setup, "cli_on_path", lambda cli: True)
    return tmp_path


def test_codex_identity_hash_is_the_one_codex_stored() -> None:
    """Recorded from a CODEX_HOME whose hooks were trusted in the real codex 0.169 TUI."""
    hooks = json.loads((CODEX_PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert codex.hook_identity("UserPromptSubmit", hooks["UserPromptSubmit"][0]["hooks"][0]) \
        == "sha256:b31a3cd30a0ebaf3c042018dc5113018a8d1587bcad6c9a80c4bce3dc4345a9f"
    assert codex.hook_identity("Stop", hooks["Stop"][0]["hooks"][0]) \
        == "sha256:b655d11de264822b6f1a7d8aa1dc001d09a9da95eb66e93d4a50add064c8706e"


def test_gemini_extension_states(homes: Path) -> None:
    assert gemini.check() == HostSetup("gemini", "extension not installed", False,
                                       "run `council setup gemini`")
    folder = homes / "gemini" / ".gemini" / "extensions" / "council"
    folder.mkdir(parents=True)
    record = folder / ".gemini-extension-install.json"
    record.write_text(json.dumps({"source": str(ROOT / "extensions" / "gemini"),
                                   "type": "link"}))
    trusted = homes / "gemini" / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(homes / "project"): "TRUST_FOLDER"}))
    assert gemini.check(homes / "project") == HostSetup(
        "gemini", f"ready (extension linked to {ROOT / 'extensions' / 'gemini'})", True)
    elsewhere = gemini.check(homes / "elsewhere")
    assert elsewhere.state.endswith("; this folder not trusted yet")
    assert "/permissions trust" in str(elsewhere.fix)
    record.write_text(json.dumps({"source": str(homes / "moved-away"), "type": "link"}))
    moved = gemini.check()
    assert not moved.ready
    assert "missing folder" in moved.state


@pytest.mark.parametrize(("folder", "rules", "trusted"), [
    ("/w/p", {}, None),  # no rule: gemini asks (exit 55 headless)
    ("/w/p", {"/w/p": "TRUST_FOLDER"}, True),
    ("/w/p/sub", {"/w/p": "TRUST_FOLDER"}, True),  # a trusted folder's subfolders too
    ("/w/pp", {"/w/p": "TRUST_FOLDER"}, None),  # a name sharing a prefix is another folder
    ("/w/q", {"/w/p": "TRUST_PARENT"}, True),  # TRUST_PARENT trusts the rule's parent
    ("/w/p", {"/w/p": "DO_NOT_TRUST"}, False),
    ("/w/p/sub", {"/w": "TRUST_FOLDER", "/w/p": "DO_NOT_TRUST"}, False),  # longest wins
    ("/w/p/sub", {"/w": "DO_NOT_TRUST", "/w/p": "TRUST_FOLDER"}, True),
    ("/w/p", {"/w/p": "TRUSTED"}, None),  # not a level gemini knows
])
def test_gemini_folder_trust_follows_gemini(folder: str, rules: dict[str, str],
                                            trusted: bool | None) -> None:
    assert gemini.trust_rule(Path(folder), rules) is trusted


def test_gemini_folder_trust_from_the_environment_and_settings(
        homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gemini_dir = homes / "gemini" / ".gemini"
    gemini_dir.mkdir(parents=True)
    assert gemini.trusts_folder(homes) is None
    (gemini_dir / "settings.json").write_text(json.dumps(
        {"security": {"folderTrust": {"enabled": False}}}))
    assert gemini.trusts_folder(homes) is True
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "false")
    assert gemini.trusts_folder(homes) is False


def install_codex_plugin(home: Path, trusted: bool) -> Path:
    """What `codex plugin marketplace add` and `codex plugin add` leave behind, and with
    `trusted` what trusting the hooks in the TUI adds."""
    cache = home / "plugins" / "cache" / "council" / "council" / "0.1.0"
    shutil.copytree(CODEX_PLUGIN, cache)
    lines = ['[marketplaces.council]', 'source_type = "local"', 'source = "/src/council"', '',
             '[plugins."council@council"]', 'enabled = true', '']
    if trusted:
        hooks = json.loads((cache / "hooks" / "hooks.json").read_text())["hooks"]
        for event, snake in codex.HOOK_EVENTS.items():
            lines += [f'[hooks.state."council@council:hooks/hooks.json:{snake}:0:0"]',
                      f'trusted_hash = "{codex.hook_identity(event, hooks[event][0]["hooks"][0])}"',
                      f'trusted_content_hash = "{codex.bundle_hash(cache)}"', '']
    (home / "config.toml").write_text("\n".join(lines))
    return cache


def test_codex_plugin_states(homes: Path) -> None:
    home = homes / "codex"
    assert codex.check() == HostSetup("codex", "plugin not installed", False,
                                      "run `council setup codex`")
    install_codex_plugin(home, trusted=False)
    untrusted = codex.check()
    assert (untrusted.state, untrusted.ready) == ("hooks not trusted", False)
    assert str(untrusted.fix).startswith("run `council setup codex`")


def test_a_trusted_codex_plugin_is_ready_until_its_files_change(homes: Path) -> None:
    cache = install_codex_plugin(homes / "codex", trusted=True)
    assert codex.check().ready
    script = cache / "hooks" / "council-hook.sh"
    script.write_text(script.read_text() + "# changed\n")
    assert codex.check().state == "hooks changed since trusted"  # as codex sees it too


def test_codex_with_plugins_off_or_a_broken_config(homes: Path) -> None:
    home = homes / "codex"
    install_codex_plugin(home, trusted=True)
    config = home / "config.toml"
    config.write_text("[features]\nplugins = false\n" + config.read_text())
    assert codex.check().state == "plugins are off in config.toml"
    config.write_text("[plugins\n")
    assert codex.check().state == "config.toml unreadable"


def test_no_council_on_path_is_every_hosts_problem(homes: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "council_on_path", lambda: None)
    install_codex_plugin(homes / "codex", trusted=True)
    install_claude_plugin(homes / "claude")
    assert {h.host: h.state for h in setup.check_hosts()} == {
        "claude": "hooks cannot find council", "gemini": "extension not installed",
        "codex": "hooks cannot find council"}


def test_a_host_cli_that_is_not_installed_is_named_not_set_up(
        homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup, "cli_on_path", lambda cli: cli != "claude")
    hosts = {h.host: h for h in setup.check_hosts()}
    assert hosts["claude"] == HostSetup("claude", "claude not on PATH", False)
    assert hosts["gemini"].state == "extension not installed"


def install_claude_plugin(home: Path, *, scope: str = "user", enabled: bool = True) -> Path:
    """What `claude plugin marketplace add` and `claude plugin install` leave behind
    (Claude Code 2.1.197): the marketplace, the install record, the enabled flag and the
    copy of the plugin it loads."""
    cache = home / "plugins" / "cache" / "council" / "council" / "0.1.0"
    shutil.copytree(ROOT / ".claude-plugin", cache / ".claude-plugin", dirs_exist_ok=True)
    (home / "plugins" / "known_marketplaces.json").write_text(json.dumps({"council": {
        "source": {"source": "directory", "path": "/src/council"},
        "installLocation": "/src/council"}}))
    (home / "plugins" / "installed_plugins.json").write_text(json.dumps({
        "version": 2, "plugins": {"council@council": [
            {"scope": scope, "installPath": str(cache), "version": "0.1.0"}]}}))
    (home / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"council@council": enabled}}))
    return cache


def test_claude_plugin_states(homes: Path) -> None:
    home = homes / "claude"
    missing = claude.check()
    assert (missing.state, missing.ready) == ("plugin not installed", False)
    assert str(missing.fix).startswith("run `council setup claude` (or start claude with "
                                       "--plugin-dir ")
    cache = install_claude_plugin(home)
    assert claude.check() == HostSetup(
        "claude", "ready (plugin council@council 0.1.0 from /src/council)", True)
    install_claude_plugin(home, enabled=False)
    assert claude.check().state == "plugin disabled"
    install_claude_plugin(home, scope="project")  # loads in its project only
    assert claude.check().state == "plugin not installed"
    install_claude_plugin(home)
    shutil.rmtree(cache / ".claude-plugin")
    assert claude.check().state == f"plugin files missing ({cache})"


HOST_FOLDERS = (".claude-plugin", "commands", "hooks", ".agents", "extensions")


def test_the_host_files_found_are_the_repositorys() -> None:
    """Run from a checkout (an editable install) they are the checkout's own folders; from
    an installed wheel, council/hostfiles (pyproject's force-include), byte for byte the
    same files in the same layout."""
    found = install.hostfiles()
    assert found in (ROOT, Path(install.__file__).resolve().parents[1] / "hostfiles")
    repo = sorted(p.relative_to(ROOT) for folder in HOST_FOLDERS
                  for p in (ROOT / folder).rglob("*") if p.is_file())
    assert Path("extensions/codex/.codex-plugin/plugin.json") in repo
    for rel in repo:
        assert (found / rel).read_bytes() == (ROOT / rel).read_bytes(), rel


def test_no_shared_host_module_branches_on_a_hosts_name() -> None:
    """What is a host's own is in its folder, hosts/<name>/: the modules beside them compare
    nothing with a host's name (a host's name in a table, such as HOSTS, is no branch)."""
    from council.hosts import HOSTS

    shared = sorted((ROOT / "council" / "hosts").glob("*.py"))
    assert {p.name for p in shared} >= {"__init__.py", "base.py", "setup.py", "install.py"}
    branches = [f"{path.name}:{node.lineno}" for path in shared
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Compare | ast.MatchValue)
                and any(isinstance(c, ast.Constant) and c.value in HOSTS
                        for c in ast.walk(node))]
    assert branches == []
