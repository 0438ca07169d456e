"""report.html: built at the end of a run from its files, safe whatever the agents wrote."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import Council

from council.store.loop import MARKER
from council.views.page import safe_html

HOSTILE = f"""# Findings

<script>document.body.setAttribute('data-pwned', 'script')</script>
<img src="https://tracker.example/p.png" onerror="document.body.setAttribute('data-pwned','i')">
[click me](javascript:document.body.setAttribute('data-pwned','link'))
<a href="javascript:alert(1)" onclick="alert(2)">raw link</a>
<iframe src="https://evil.example/"></iframe>
<style>body {{ background: url(https://evil.example/bg) }}</style>
![a chart](https://tracker.example/chart.png)
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)

The shared paper: https://www.shared.example/paper?b=2&a=1 and [its code](https://code.example/repo).

{MARKER}
"""
SHARED = f"""# Findings

See [the paper](https://shared.example/paper?a=1&b=2), which agrees.

{MARKER}
"""


class Elements(HTMLParser):
    """Every element and attribute of a page, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, name, value or "") for name, value in attrs]


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


def assert_inert(html: str) -> None:
    """Nothing in `html` can run, load a resource or navigate to a script."""
    found = elements(html)
    assert not {"script", "img", "iframe", "object", "embed", "link", "form", "base"} & \
        set(found.tags), found.tags
    assert [t for t in found.tags if t == "style"] in ([], ["style"])  # the page's own only
    for tag, name, value in found.attrs:
        assert not name.startswith("on"), (tag, name, value)
        assert name not in ("src", "srcset", "style", "formaction"), (tag, name, value)
        if name == "href":
            assert value.startswith(("https://", "http://", "mailto:", "#")), value


def test_agent_markdown_can_run_nothing_and_load_nothing() -> None:
    html = str(safe_html(HOSTILE))
    assert_inert(html)
    assert "image: a chart" in html  # an image becomes a link to it, not a request
    assert '<a href="https://shared.example' not in html  # as written, www. and all
    assert '<a href="https://www.shared.example/paper?b=2&amp;a=1"' in html
    assert "&lt;script&gt;" in html  # shown as text, never parsed as a tag


def hostile_run(council: Council, topic: str) -> subprocess.CompletedProcess[str]:
    """A finished two-agent run whose reports hold HOSTILE markup and a SHARED source."""
    council.script({"claude:research": {"content": HOSTILE},
                    "codex:research": {"content": SHARED},
                    "claude:synthesis": {"content": HOSTILE},
                    "*": {"finish_after": 1}})
    proc = council.run("run", "--test", "--agents", "claude,codex", topic)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_run_writes_its_page(council: Council) -> None:
    proc = hostile_run(council, "q <b>bold</b>")
    run = council.only_run()
    page = run / "report.html"
    assert f"report page: {page}" in proc.stdout
    html = page.read_text()
    assert_inert(html)
    assert "<title>q &lt;b&gt;bold&lt;/b&gt; · council</title>" in html
    # The shared source: one row, both agents, and the report's citation links to it.
    rows = [line for line in html.splitlines() if line.startswith('  <tr id="source-')]
    shared = [r for r in rows if "shared.example/paper" in r]
    assert len(shared) == 1, shared
    assert "claude, codex" in shared[0]
    assert "cross-checked: found by 2 agents" in shared[0]
    n = shared[0].split('id="source-', 1)[1].split('"', 1)[0]
    assert f'<sup class="cite"><a href="#source-{n}" rel="noopener noreferrer nofollow">[{n}]' \
        '</a></sup>' in html
    # Every part is there, the timeline with a bar per agent phase.
    for part in ("report", "claims", "coverage", "opposition", "sources", "timeline"):
        assert f'id="{part}"' in html
    assert html.count("<rect") == 2 + 5  # a lane each; research, refinement (+ synthesis)
    # and a row per agent and phase saying where the tokens went
    assert "Where the tokens went" in html
    assert "<td>codex</td><td>refinement</td>" in html
    assert "run done:" in (run / "progress.log").read_text()
    assert "page: " in (run / "progress.log").read_text()


def test_report_rebuilds_the_page_of_an_older_run(council: Council) -> None:
    council.script({"codex:research": {"content": SHARED}, "*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude,codex", "q").returncode == 0
    run = council.only_run()
    (run / "report.html").unlink()
    (run / "sources.json").unlink()  # made before council kept a ledger
    proc = council.run("report", run.name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(run / "report.html")
    html = (run / "report.html").read_text()
    assert "https://shared.example/paper?a=1&amp;b=2" in html  # rebuilt from the reports
    assert council.run("report", "no-such-run").returncode != 0


def test_the_page_reads_nothing_through_a_link(council: Council) -> None:
    """Whoever could leave a link in the run folder (a host session writes the final report
    there) does not get a file of the user's shown on the page."""
    council.script({"codex:research": {"content": SHARED}, "*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude,codex", "q").returncode == 0
    run = council.only_run()
    secret = council.root / "secret.txt"
    secret.write_text('{"SECRET-TOKEN-1234": 1}\n# SECRET-TOKEN-1234\n')
    reports = [p for p in run.glob("*.md") if p.name != "final-report.md"]
    assert reports
    for path in [run / "final-report.md", run / "sources.json", *reports]:
        path.unlink()
        path.symlink_to(secret)
    proc = council.run("report", run.name)
    assert proc.returncode == 0, proc.stderr
    assert "SECRET-TOKEN-1234" not in (run / "report.html").read_text()


def test_a_page_that_cannot_be_written_does_not_fail_the_run(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude", "q").returncode == 0
    run = council.only_run()
    (run / "report.html").unlink()
    (run / "report.html").mkdir()  # a folder where the page goes: it cannot be replaced
    from council.store.state import load_state
    from council.store.workspace import Workspace
    from council.views.page import publish

    assert publish(Workspace(run), load_state(run)) is None
    assert "could not write report.html" in (run / "progress.log").read_text()


@pytest.fixture
def browser(tmp_path: Path) -> Path:
    """A stand-in for the user's browser ($BROWSER), recording what it was asked to open."""
    script = tmp_path / "browser"
    script.write_text(f"#!/bin/sh\necho \"$1\" >> {tmp_path / 'opened'}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_open_hands_the_page_to_the_browser_or_prints_its_path(council: Council,
                                                               browser: Path) -> None:
    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude", "q").returncode == 0
    run = council.only_run()
    (run / "report.html").unlink()  # built on demand
    council.env["BROWSER"] = str(browser)
    proc = council.run("open")
    assert proc.returncode == 0, proc.stderr
    assert (browser.parent / "opened").read_text().strip() == (run / "report.html").as_uri()
    # No browser at all: no display, no $BROWSER, no console browser on PATH.
    del council.env["BROWSER"]
    council.env.pop("DISPLAY", None)
    council.env.pop("WAYLAND_DISPLAY", None)
    council.env["PATH"] = os.pathsep.join(p for p in council.env["PATH"].split(os.pathsep)
                                          if "fakes" in p) + os.pathsep + "/nonexistent"
    proc = council.run("open", run.name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"no browser found; the page is {run / 'report.html'}"


def test_claims_and_coverage_show_on_the_page(council: Council) -> None:
    from council.store.state import load_state
    from council.store.workspace import Workspace
    from council.views.page import build

    council.script({"*": {"finish_after": 1}})
    assert council.run("run", "--test", "--agents", "claude,codex", "q").returncode == 0
    run = council.only_run()
    (run / "claims.json").write_text(json.dumps({
        "status": "ok", "claims": [
            {"id": "c1", "agent": "claude", "claim": "Water boils at 100 °C at sea level.",
             "sources": ["https://example.org/claude/claude/1"], "verdict": "SUPPORTED",
             "verifier": "codex", "evidence": "See https://evidence.example/boil"},
            {"id": "c2", "agent": "codex", "claim": "<script>x</script> is safe",
             "sources": [], "verdict": "CONTRADICTED", "verifier": "claude", "evidence": ""}],
        "questions": [{"id": "q1", "question": "Why?", "status": "open", "claims": []}],
        "dimensions": [{"id": "d1", "dimension": "Cost", "covered": False}],
        "before": {"questions": [], "dimensions": []}}))
    html = build(Workspace(run), load_state(run)).read_text()
    assert_inert(html)
    assert '<span class="badge supported">supported</span>' in html
    assert '<span class="badge disputed">disputed</span>' in html
    assert "&lt;script&gt;x&lt;/script&gt; is safe" in html
    assert '<a href="https://evidence.example/boil"' in html
    assert "<li>Why?</li>" in html
    assert "<li>Cost</li>" in html
    assert '<a href="#claim-c1">c1</a>' in html  # from the source the claim cites


def test_the_timeline_spans_the_runs_phases_and_lists_ask_turns_apart(tmp_path: Path) -> None:
    """Issue 43, item 15: a `council ask` a day after a 10-minute run squeezed every phase bar
    to a sliver on a0243e7 (the axis ran to the ask's end); the axis now spans the run's
    phases, and each ask turn is listed under it."""
    from council.runoptions import RunOptions, Seat
    from council.store.state import AgentRecord, RunState
    from council.store.workspace import Workspace
    from council.views.page import _asks, _lanes, render

    record = AgentRecord(cli="claude")
    research = record.phase("research")
    research.started_at, research.ended_at = "2026-11-27T10:00:00Z", "2026-11-27T10:10:00Z"
    research.status = "done"
    ask = record.phase("ask")
    ask.started_at, ask.ended_at = "2026-11-28T10:00:00Z", "2026-11-28T10:01:30Z"
    ask.usage = {"input_tokens": 1200, "output_tokens": 300}
    state = RunState(id="20261127-100000-abcdef", topic="q",
                     created_at="2026-11-27T10:00:00Z", phase="done",
                     updated_at="2026-11-28T10:01:30Z",
                     options=RunOptions(seats=(Seat("claude", "claude"),)),
                     agents={"claude": record})
    (lane,), length = _lanes(state)
    assert length == 600
    assert [(b.phase, b.x, b.width) for b in lane.bars] == [("research", 0, 100)]
    (turn,) = _asks(state)
    assert (turn.agent, turn.started, turn.seconds) == ("claude", "2026-11-28 10:00", 90)
    ws = Workspace(tmp_path / state.id)
    ws.root.mkdir()
    html = render(ws, state)
    assert "over the run's 600 seconds" in html
    assert "Follow-up questions (council ask)" in html
    assert "2026-11-28 10:00" in html
    assert_inert(html)
