"""A run with a source policy, end to end with the fake CLIs: the reports cite a denied domain
(the fakes cite example.com and example.org on each turn), so sources.json and report.html
flag it, the claim resting on it is marked, the synthesis is told, and claude's WebFetch was
held to the policy."""

from __future__ import annotations

import html
import json
import re

import yaml
from conftest import Council

CLAIMS = {"claims": [
    {"id": "c1", "agent": "claude", "claim": "Tides follow the moon.",
     "sources": ["https://www.example.com/tides", "http://docs.example.com:8080/moon"]},
    {"id": "c2", "agent": "codex", "claim": "Spring tides are higher.",
     "sources": ["https://example.org/spring", "https://example.com/spring"]},
]}


def test_a_cited_source_on_a_denied_domain_is_flagged_and_its_claim_marked(
        council: Council) -> None:
    council.script({
        "*": {"finish_after": 1},
        "claude:claims": {"content": json.dumps(CLAIMS)},
        "codex:verification": {"content": json.dumps({"verdicts": [
            {"id": "c1", "verdict": "SUPPORTED", "evidence": "the page says so"}]})},
        "claude:verification": {"content": json.dumps({"verdicts": [
            {"id": "c2", "verdict": "SUPPORTED", "evidence": "the page says so"}]})},
    })
    proc = council.run("run", "--test", "--verify", "--deny-domain", "EXAMPLE.com",
                       "How do tides work?")
    assert proc.returncode == 0, proc.stderr
    assert "sources: deny example.com (and their subdomains)" in proc.stdout  # the plan
    run = council.only_run()

    ledger = json.loads((run / "sources.json").read_text())
    assert ledger["policy"] == {"allow": [], "deny": ["example.com"]}
    flagged = {s["url"]: s.get("policy") for s in ledger["sources"]}
    denied = [u for u in flagged if re.match(r"https://example\.com/", u)]
    assert denied
    assert all(flagged[u] == "denied" for u in denied)
    kept = [u for u in flagged if u.startswith("https://example.org/")]
    assert kept
    assert all(flagged[u] is None for u in kept)

    claims = {c["id"]: c for c in json.loads((run / "claims.json").read_text())["claims"]}
    assert claims["c1"].get("outside_policy") is True  # verification's rewrite kept it
    assert "outside_policy" not in claims["c2"]  # one of its sources is inside the policy

    prompt = (run / "agents" / "claude" / "synthesis-prompt.md").read_text()
    assert "The user set a source policy: deny example.com" in prompt
    assert "These claims rest only on sources outside that policy" in prompt
    assert "- c1 (claude): Tides follow the moon." in prompt
    assert "- c2 (codex)" not in prompt

    final = (run / "final-report.md").read_text()
    assert re.search(r"<https://example\.com/\S+> — cited by .* — outside the source policy "
                     r"\(denied\)", final)

    page = html.unescape((run / "report.html").read_text())
    assert "Source policy: deny example.com (and their subdomains)" in page
    row = re.search(r'<tr id="source-\d+"><td class="num">\d+</td><td><a href="'
                    + re.escape(denied[0]) + r'".*?</tr>', page, re.S)
    assert row
    assert "outside the source policy" in row.group(0)
    assert "denied" in row.group(0)
    ok_row = re.search(r'<tr id="source-\d+"><td class="num">\d+</td><td><a href="'
                       + re.escape(kept[0]) + r'".*?</tr>', page, re.S)
    assert ok_row
    assert "outside the source policy" not in ok_row.group(0)
    claim_row = re.search(r'<tr id="claim-c1">.*?</tr>', page, re.S)
    assert claim_row
    assert "rests only on sources outside it" in claim_row.group(0)
    other = re.search(r'<tr id="claim-c2">.*?</tr>', page, re.S)
    assert other
    assert "outside the source policy" not in other.group(0)

    # claude was started with the policy as WebFetch rules; codex and gemini have none
    starts = [e for e in council.fake_log() if e["event"] == "start" and e["cli"] == "claude"]
    assert starts
    for start in starts:
        argv = start["argv"]
        refused = argv[argv.index("--disallowedTools") + 1].split(",")
        assert {"WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)"} <= set(
            refused)


def test_an_allow_list_leaves_the_rest_out_and_the_run_stores_it(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--allow-domain", "example.org", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    ledger = json.loads((run / "sources.json").read_text())
    assert {s.get("policy") for s in ledger["sources"]
            if s["url"].startswith("https://example.com/")} == {"not allowed"}
    stored = yaml.safe_load((run / "state.yaml").read_text())["options"]["sources"]
    assert stored == {"allow": ["example.org"], "deny": []}


def test_doctor_shows_the_policy_of_your_config(council: Council) -> None:
    user = council.root / "config" / "config.yaml"  # the test's config home (conftest)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("sources:\n  allow: [Example.org]\n  deny: [spam.example.org]\n")
    proc = council.run("doctor")
    assert ("source policy: allow example.org (and their subdomains; nothing else); deny "
            "spam.example.org (and their subdomains)") in proc.stdout.splitlines()
