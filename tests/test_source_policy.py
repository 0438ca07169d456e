"""The source policy (issue 36): domain rules normalised and matched (domains.py), given in a
config file or on `council run`, kept in the run's state; cited sources outside it flagged in
the ledger, claims resting only on them marked; claude's WebFetch held to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from council.agents.claude import permission_args
from council.config import Overrides, load_options, plan_lines
from council.domains import DENIED, NOT_ALLOWED, Policy, merge, normalise
from council.errors import ConfigError
from council.evidence import claimcheck, sources
from council.readiness.doctor import policy_line
from council.runoptions import RunOptions


@pytest.mark.parametrize(("word", "rule"), [
    ("Example.COM", "example.com"),
    (".example.com", "example.com"),  # curl's and cookies' leading dot: subdomains anyway
    ("example.com.", "example.com"),  # the root's dot
    ("Bücher.de", "xn--bcher-kva.de"),  # IDNA, as w3lib gives a cited URL's host
    ("  docs.python.org ", "docs.python.org"),
])
def test_a_rule_is_normalised(word: str, rule: str) -> None:
    assert normalise(word) == rule


@pytest.mark.parametrize("word", ["https://example.com", "example.com:443", "*.example.com",
                                  "user@example.com", "example.com/path", "localhost",
                                  "a..b", "", "exa mple.com"])
def test_a_rule_that_is_no_bare_domain_is_refused(word: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        normalise(word)


def outside(url: str, policy: Policy) -> str | None:
    return sources.outside(url, policy)


def test_a_rule_covers_its_subdomains_on_a_label_boundary() -> None:
    deny = Policy(deny=("example.com",))
    assert outside("https://example.com/a", deny) == DENIED
    assert outside("https://docs.EXAMPLE.com/a", deny) == DENIED
    assert outside("https://a.b.example.com./a", deny) == DENIED
    assert outside("https://badexample.com/a", deny) is None
    assert outside("https://example.com.evil.org/a", deny) is None
    assert outside("https://www.example.com/a", deny) == DENIED


def test_a_rule_naming_www_holds_though_the_ledger_drops_www() -> None:
    policy = Policy(deny=("www.evil.com",))
    assert outside("https://www.evil.com/x", policy) == DENIED
    assert outside("www.evil.com/x", policy) == DENIED
    assert outside("https://evil.com/x", policy) is None
    ledger = sources.build([("claude", "research", "https://www.evil.com/x")])
    (entry,) = ledger.to_dict(policy)["sources"]
    assert (entry["url"], entry["policy"]) == ("https://evil.com/x", DENIED)


def test_deny_wins_over_allow_and_an_allow_list_leaves_the_rest_out() -> None:
    policy = Policy(allow=("example.com",), deny=("bad.example.com",))
    assert outside("https://example.com/x", policy) is None
    assert outside("https://docs.example.com/x", policy) is None
    assert outside("https://bad.example.com/x", policy) == DENIED
    assert outside("https://deeper.bad.example.com/x", policy) == DENIED
    assert outside("https://other.org/x", policy) == NOT_ALLOWED
    assert outside("not a url", policy) == NOT_ALLOWED  # an allow list it is not on
    assert outside("not a url", Policy(deny=("example.com",))) is None
    assert outside("https://anything.org/", Policy()) is None  # no policy: all inside


@pytest.mark.parametrize("url", [
    "http://good.com@evil.com/",  # userinfo: the host is evil.com
    "http://good.com:pw@evil.com:8080/x",
    "https://evil.com:443/",  # a port is no part of the host
    "https://EVIL.com./x",
    "http://evil.com\\@good.com/",  # a backslash ends the host, as browsers read it
    "https://sub.évil.com/".replace("é", "e"),
])
def test_tricks_in_a_url_do_not_move_its_host(url: str) -> None:
    policy = Policy(allow=("good.com",), deny=("evil.com",))
    assert outside(url, policy) == DENIED


def test_an_idna_host_matches_its_rule_either_way() -> None:
    policy = Policy(deny=(normalise("bücher.de"),))
    assert outside("https://www.Bücher.de/katalog", policy) == DENIED
    assert outside("https://xn--bcher-kva.de/", policy) == DENIED
    assert outside("https://bucher.de/", policy) is None


def test_the_config_and_the_command_line_join_and_the_run_keeps_them(tmp_path: Path) -> None:
    user = tmp_path / "config" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("sources:\n  allow: [Example.com, .wikipedia.org]\n  deny: [bad.example.com]\n")
    run = load_options(Overrides(deny_domain=("Spam.org",), allow_domain=("arxiv.org",)))
    assert run.sources == {"allow": ["example.com", "wikipedia.org", "arxiv.org"],
                           "deny": ["bad.example.com", "spam.org"]}
    # stored in state.yaml and read back: a resumed run keeps it
    assert RunOptions.from_dict(run.to_dict()).sources == run.sources
    (line,) = [x for x in plan_lines(run) if x.startswith("sources:")]
    assert "allow example.com, wikipedia.org, arxiv.org" in line
    assert "deny bad.example.com, spam.org" in line
    assert "deny bad.example.com" in policy_line()  # doctor: the config's, not the flags'
    assert "spam.org" not in policy_line()


def test_no_policy_is_none_and_the_plan_says_nothing_of_it() -> None:
    run = load_options(Overrides())
    assert run.sources is None
    assert not [x for x in plan_lines(run) if x.startswith("sources:")]
    assert policy_line() == "source policy: none (sources from any domain)"


@pytest.mark.parametrize(("text", "error"), [
    ("sources: [a.com]\n", "sources must be a mapping"),
    ("sources:\n  block: [a.com]\n", "sources must be a mapping"),
    ("sources:\n  deny: a.com\n", "deny must be a list of domains"),
    ("sources:\n  allow: ['https://a.com/x']\n", "allow has 'https://a.com/x' is not a bare"),
])
def test_a_bad_policy_in_a_config_file_is_refused(tmp_path: Path, text: str,
                                                  error: str) -> None:
    (tmp_path / "council.yaml").write_text(text)
    with pytest.raises(ConfigError, match=error):
        load_options(Overrides(config=tmp_path / "council.yaml"))


def test_a_bad_domain_on_the_command_line_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--deny-domain has 'evil\.com:80' is not a bare"):
        Overrides(deny_domain=("evil.com:80",))


def test_merge_with_nothing_is_no_policy() -> None:
    assert merge(None) is None
    assert merge({"allow": [], "deny": []}) is None


def test_claudes_web_fetch_is_held_to_the_policy() -> None:
    assert permission_args(Policy()) == ["--allowedTools", "WebSearch,WebFetch",
                                         "--disallowedTools", "Bash"]
    deny = permission_args(Policy(deny=("evil.com",)))
    assert deny[deny.index("--allowedTools") + 1] == "WebSearch,WebFetch"
    assert deny[deny.index("--disallowedTools") + 1].split(",") == [
        "Bash", "WebFetch(domain:evil.com)", "WebFetch(domain:*.evil.com)"]
    allow = permission_args(Policy(allow=("example.com",), deny=("bad.example.com",)))
    # the bare WebFetch is no longer pre-approved: only the allowed domains are
    assert allow[allow.index("--allowedTools") + 1].split(",") == [
        "WebSearch", "WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)"]
    assert "WebFetch(domain:*.bad.example.com)" in allow[allow.index("--disallowedTools") + 1]


def test_the_ledger_flags_each_source_outside_the_policy() -> None:
    ledger = sources.build([
        ("claude", "research", "See [a](https://good.org/a) and https://evil.com/b."),
        ("codex", "research", "Also <http://good.org@evil.com/c> and https://other.net/d"),
    ])
    policy = Policy(allow=("good.org", "evil.com"), deny=("evil.com",))
    data = ledger.to_dict(policy)
    flags = {s["url"]: s.get("policy") for s in data["sources"]}
    assert flags == {"https://good.org/a": None, "https://evil.com/b": DENIED,
                     "http://evil.com/c": DENIED, "https://other.net/d": NOT_ALLOWED}
    assert data["policy"] == {"allow": ["good.org", "evil.com"], "deny": ["evil.com"]}
    assert "policy" not in ledger.to_dict()  # no policy, no flag
    assert not any("policy" in s for s in ledger.to_dict()["sources"])
    section = sources.sources_section(ledger, policy)
    assert "<https://evil.com/b> — cited by claude — outside the source policy (denied)" in (
        section.replace(" †", ""))
    assert "<https://good.org/a> — cited by claude †\n" in section


def test_a_claim_resting_only_on_sources_outside_the_policy_is_marked() -> None:
    data: dict[str, Any] = {"status": "extracted", "claims": [
        {"id": "c1", "agent": "a", "claim": "x", "sources": ["https://evil.com/1",
                                                             "https://x.evil.com/2"]},
        {"id": "c2", "agent": "a", "claim": "y", "sources": ["https://evil.com/1",
                                                             "https://good.org/2"]},
        {"id": "c3", "agent": "a", "claim": "z", "sources": []},
        {"id": "c4", "agent": "a", "claim": "w", "sources": ["https://good.org/2"],
         "outside_policy": True},  # a mark a model wrote, or a policy since changed
    ]}
    claimcheck.mark_outside(data, Policy(deny=("evil.com",)))
    marked = {c["id"] for c in data["claims"] if c.get("outside_policy")}
    assert marked == {"c1"}
    assert [c["id"] for c in claimcheck.resting_outside(data)] == ["c1"]
    claimcheck.mark_outside(data, Policy())
    assert claimcheck.resting_outside(data) == []
