"""The evidence store with the real claude and codex (issue 44), offline against the scripted
model: the seats cite a page server on loopback (the server's `cite`), which the test user's
own config allows (`sources: {allow_private: true}`). council fetches the pages once, the two
verifiers are given the same stored text of the page their claims share, and the final report's
quotes, numbers and claim citations are checked against the store: a false quote and an
untraced number are listed in integrity.json and marked where they stand, a true quote and a
traced number are not, a claim sentence without a link is counted, and the header's line is
integrity.json's. `council ask` on that run is shown the stored page its question is about
(the text reached the model's request) and its false quote is named under the answer. An
agent cannot point the fetcher at a private address, a file: URL or a
redirect to one (planted citations) unless the user's own config allows private addresses,
and never at a file: URL."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pageserver import PageServer, serving

from council.evidence import fetch, integrity
from council.evidence.reportcheck import INTEGRITY_JSON, LINE

from .server import ScriptedServer
from .test_ask_real import ask

pytestmark = pytest.mark.realcli

AGENTS = ("--agents", "claude,codex", "--verify", "--depth", "standard")
TOPIC = "Do tides follow the moon?"
GAUGE = ("The harbour gauge recorded the highest tide of the decade. The tide rose 42 "
         "centimetres above the datum.")


def page(*paragraphs: str) -> str:
    return "<html><body><main>" + "".join(f"<p>{p}</p>" for p in paragraphs) + \
        "</main></body></html>"


def final_report(base: str) -> str:
    link = f"([gauge]({base}/claude/1))"
    return (
        "# Tides\n\n## Key Findings\n\n"
        f"Scripted claim 1, made by claude {link}.\n\n"
        "Scripted claim 2, made by codex, holds across the harbour.\n\n"
        f'The page says "the harbour gauge recorded the highest tide" {link}.\n\n'
        f'It also says "the moon is made of green cheese entirely" {link}.\n\n'
        f"The tide rose 42 centimetres above the datum {link}.\n\n"
        f"A later survey found the tide rose 97 centimetres above the datum {link}.\n")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ScriptedServer]:
    """The scripted model, keeping each request's body: what the ask's seat was sent."""
    with ScriptedServer({}, tmp_path / "server-log.jsonl", log_bodies=True) as srv:
        yield srv


@pytest.fixture
def web() -> Iterator[PageServer]:
    with serving() as server:
        yield server


def own_config(env: dict[str, str], text: str) -> None:
    path = Path(env["HOME"]) / ".config" / "council" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def council(env: dict[str, str], tmp_path: Path) -> Path:
    run_env = {k: v for k, v in env.items() if k != fetch.OFFLINE_ENV}  # about fetching
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", *AGENTS, TOPIC],
        env={**run_env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=500, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    return run


def script(cite: str, final: str | None = None,
           per_report: dict[str, Any] | None = None) -> dict[str, Any]:
    reports: dict[str, Any] = {"final-report.md": {"write": final, "finish_after": 1},
                               "repaired.md": {"finish_after": 1}} if final else {}
    reports.update(per_report or {})
    return {api: {"cite": cite, "reports": reports} for api in ("anthropic", "openai")}


def stored_block(prompt: str, url: str) -> str:
    """The stored text of `url` as a prompt quotes it: its SOURCE line and its `| ` lines."""
    found = re.search(rf"^SOURCE {re.escape(url)} \(fetched [^)]*\):\n((?:\|.*\n)+)", prompt,
                      re.M)
    assert found, prompt[-4000:]
    return found.group(1)


def test_quotes_numbers_and_citations_are_checked_against_the_store(
        cli_env: dict[str, str], server: ScriptedServer, web: PageServer,
        tmp_path: Path) -> None:
    for agent in ("claude", "codex"):
        n = 1 if agent == "claude" else 2
        web.add(f"/{agent}/1", page(f"Scripted claim {n}, made by {agent}.", GAUGE))
        web.add(f"/{agent}/2", page(f"More on tides from {agent}."))
    web.add("/shared", page("Every scripted claim rests on this shared page of tide tables."))
    own_config(cli_env, "sources: {allow_private: true}\n")
    server.script = script(web.base, final_report(web.base))
    run = council(cli_env, tmp_path)

    # fetched once each, into the run's store
    asked = web.asked()
    assert sorted(set(asked)) == sorted(asked)
    assert {"/claude/1", "/codex/1", "/shared"} <= set(asked)
    records = {r.url: r for r in fetch.load_index(run / "evidence")}
    assert all(r.ok for r in records.values()), records

    # the two verifiers were given the same stored text of the page their claims share
    prompts = [(run / "agents" / seat / "verification-prompt.md").read_text()
               for seat in ("claude", "codex")]
    shared = f"{web.base}/shared"
    assert stored_block(prompts[0], shared) == stored_block(prompts[1], shared)
    assert "tide tables" in stored_block(prompts[0], shared)

    data = json.loads((run / INTEGRITY_JSON).read_text())
    quotes = {q["text"]: q["found"] for q in data["quotes"]["items"]}
    assert quotes == {"the harbour gauge recorded the highest tide": True,
                      "the moon is made of green cheese entirely": False}
    numbers = {n["text"]: n["traced"] for n in data["numbers"]["items"]}
    assert numbers == {"42": True, "97": False}
    cited = {c["claim"]: c["cited"] for c in data["citations"]["items"]}
    assert cited == {"c1": True, "c2": False}  # the sentence without a link is counted
    assert data["citations"]["share"] == 0.5

    report = (run / "final-report.md").read_text()
    assert f"{LINE}{data['summary']}" in report.split("\n\n", 1)[0].splitlines()
    assert data["summary"].startswith("quotes 1 of 2 found, numbers 1 of 2 traced, 50% of "
                                      "claim sentences cited")
    assert f'entirely"{integrity.QUOTE_MISSING}' in report
    assert f"97{integrity.NUMBER_MISSING}" in report
    assert f"the harbour.{integrity.UNCITED}" in report
    assert f'highest tide"{integrity.QUOTE_MISSING}' not in report
    assert f"42{integrity.NUMBER_MISSING}" not in report
    assert report.count(integrity.MARK) == 3  # the quote, the number, the uncited claim
    # the synthesiser had its one repair turn, with the failures listed
    told = (run / "agents" / "claude.repair" / "repair-prompt.md").read_text()
    assert "green cheese" in told
    assert "97" in told

    # `council ask` answers from the stored page: its text reached the model's request, and
    # of the answer's two quotes council names the false one only
    gauge = f"{web.base}/claude/1"
    true, false = "The tide rose 42 centimetres above the datum", "the gauge was washed away"
    server.script = {"anthropic": {"write": f'The gauge page says "{true}" ([gauge]({gauge})). '
                                            f'It adds "{false} in the storm" ([gauge]({gauge})).'}}
    before = len(server.records())
    proc = ask(cli_env, tmp_path, "--agent", "claude", "What did the harbour gauge record?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sent = [json.dumps(r.get("body")) for r in server.records()[before:]
            if r.get("api") == "anthropic"]
    assert any("BEGIN STORED SOURCES" in body and f"| {GAUGE}" in body for body in sent)
    footer = Path(proc.stdout.strip()).read_text().split("## Checked by council", 1)[1]
    assert "- Quotes: 1 of 2 found in the stored pages." in footer, footer
    named = footer.split("- Not found in the stored text of the page it cites", 1)[1]
    assert f'"{false} in the storm"' in named
    assert true not in named


def test_planted_citations_reach_no_private_address_or_file(
        cli_env: dict[str, str], server: ScriptedServer, web: PageServer,
        tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("a file no agent may have council read\n")
    hop = web.redirect("/hop", secret.as_uri())
    planted = (f"# Planted\n\nSee [the intranet]({web.base}/intranet), [a file]"
               f"({secret.as_uri()}), [a hop]({hop}) and [metadata]"
               "(http://169.254.169.254/latest/meta-data/).\n")
    web.add("/intranet", page("Intranet only."))
    server.script = script(web.base, per_report={"claude-report.md": {"write": planted}})
    run = council(cli_env, tmp_path)  # the user's own config says nothing of private ones
    assert web.asked() == []
    records = {r.url: r for r in fetch.load_index(run / "evidence")}
    for url in (f"{web.base}/intranet", secret.as_uri(), hop,
                "http://169.254.169.254/latest/meta-data/"):
        assert (records[url].error or "").startswith("refused"), records[url]
    assert not list((run / "evidence").glob("*.txt"))

    # allowed by the user's own config: the page server, but never a redirect to a file
    own_config(cli_env, "sources: {allow_private: true}\n")
    second = tmp_path / "second"
    second.mkdir()
    run = council(cli_env, second)
    records = {r.url: r for r in fetch.load_index(run / "evidence")}
    assert records[f"{web.base}/intranet"].ok
    assert "redirect" in (records[hop].error or "")
    assert records[secret.as_uri()].error is not None
    assert all("no agent may" not in p.read_text() for p in (run / "evidence").glob("*.txt"))
