"""issue 44's options: `--offline` (and COUNCIL_OFFLINE=1), and `sources: {allow_private:
true}`, which only the user's own config file may give: a project's council.yaml, or a file
named with --config, that says it is ignored, and the plan's config line says so."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write_trusted_config

from council.config import Overrides, load_options
from council.domains import Policy, merge
from council.evidence import fetch
from council.runoptions import RunOptions


def own(tmp_path: Path, text: str) -> None:
    user = tmp_path / "config" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(text)


def test_every_test_runs_offline_unless_it_is_about_fetching() -> None:
    assert os.environ[fetch.OFFLINE_ENV] == "1"
    assert fetch.offline()


def test_offline_is_an_option_the_run_keeps() -> None:
    run = load_options(Overrides(offline=True))
    assert run.offline is True
    assert RunOptions.from_dict(run.to_dict()).offline is True
    assert load_options(Overrides()).offline is False
    # a run stored before the option existed fetched
    data = run.to_dict()
    del data["offline"]
    assert RunOptions.from_dict(data).offline is False


def test_the_users_own_config_may_allow_private_addresses(tmp_path: Path) -> None:
    own(tmp_path, "sources: {allow_private: true, deny: [Bad.com]}\n")
    run = load_options(Overrides(deny_domain=("spam.org",)))
    assert Policy.of(run.sources) == Policy((), ("bad.com", "spam.org"), True)
    assert RunOptions.from_dict(run.to_dict()).sources == run.sources
    assert "private addresses may be fetched" in Policy.of(run.sources).describe()


def test_allow_private_alone_is_kept() -> None:
    assert merge({"allow_private": True}) == {"allow": [], "deny": [], "allow_private": True}
    assert merge({"allow_private": False}) is None
    assert merge(None) is None


def test_a_named_config_file_may_not_allow_private_addresses(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text("sources: {allow_private: true}\n")
    run = load_options(Overrides(config=tmp_path / "other.yaml"))
    assert not Policy.of(run.sources).allow_private
    assert "sources.allow_private is ignored" in (run.config_trust or "")


def test_a_projects_config_may_not_allow_private_addresses(tmp_path: Path) -> None:
    write_trusted_config(tmp_path,
                         "sources: {allow_private: true, deny: [x.com]}\n")
    run = load_options(Overrides())
    assert Policy.of(run.sources) == Policy((), ("x.com",), False)
    assert "sources.allow_private is ignored" in (run.config_trust or "")


def test_over_the_users_own_the_users_word_holds(tmp_path: Path) -> None:
    own(tmp_path, "sources: {allow_private: true}\n")
    write_trusted_config(tmp_path, "sources: {deny: [x.com]}\n")
    run = load_options(Overrides())
    assert Policy.of(run.sources) == Policy((), ("x.com",), True)
    # and a project that only says allow_private: false cannot take it away either way
    own_says_no = tmp_path / "config" / "config.yaml"
    own_says_no.write_text("sources: {deny: [y.com]}\n")
    write_trusted_config(tmp_path, "sources: {allow_private: true}\n")
    run = load_options(Overrides())
    assert Policy.of(run.sources) == Policy((), ("y.com",), False)
    assert "sources.allow_private is ignored" in (run.config_trust or "")
