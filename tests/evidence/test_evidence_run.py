"""The evidence store wired into a run (issue 44), with the fake CLIs and a page server on
loopback the seats cite, allowed by the test user's own `sources: {allow_private: true}`:
council fetches the cited pages once into evidence/, checks the final report's quotes and
numbers against them, gives the synthesiser one repair turn, writes integrity.json, puts
its line into the header, marks what still fails, and shows it in `council status --json`
and on report.html. Offline, nothing is fetched and the header says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Council
from pageserver import PageServer, serving

from council.evidence import fetch, integrity
from council.evidence.reportcheck import INTEGRITY_JSON, LINE, OFFLINE
from council.store.loop import MARKER

PAGE = ("<html><head><title>Widget census</title></head><body><main>"
        "<p>The sample held exactly forty-two working widgets.</p>"
        "<p>The committee measured 42 widgets in the sample, and the rest were lost.</p>"
        "</main></body></html>")


@pytest.fixture
def web() -> Iterator[PageServer]:
    with serving() as server:
        yield server


def research(a: str) -> str:
    return f"# Widgets\n\nThe committee counted the widgets ([census]({a})).\n\n{MARKER}\n"


def final(a: str, quote: str, number: str) -> str:
    return (f"# Widgets\n\n## Key Findings\n\n"
            f'The census says "the sample held exactly forty-two working widgets" '
            f"([census]({a})).\n\n"
            f'The census also says "{quote}" ([census]({a})).\n\n'
            f"The committee measured 42 widgets in the sample ([census]({a})).\n\n"
            f"A later count found {number} widgets in the sample ([census]({a})).\n\n"
            f"{MARKER}\n")


def start(council: Council, web: PageServer, allow: bool = True, offline: bool = False,
          repair: str | None = None) -> tuple[Path, str]:
    a = web.add("/census", PAGE)
    council.env.pop(fetch.OFFLINE_ENV, None)  # this test is about fetching: loopback only
    if allow:
        own = council.root / "config" / "config.yaml"
        own.parent.mkdir(parents=True, exist_ok=True)
        own.write_text("sources: {allow_private: true}\n")
    script = {"*": {"content": research(a)},
              "claude:synthesis": {"content": final(
                  a, "every widget was painted bright green in the factory", "57")}}
    if repair is not None:
        script["claude:unknown"] = {"content": repair}
    council.script(script)
    args = ["run", "--test", *(["--offline"] if offline else []), "How many widgets?"]
    proc = council.run(*args, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return council.only_run(), a


def test_a_false_quote_and_an_untraced_number_are_found_marked_and_shown(
        council: Council, web: PageServer) -> None:
    # the repair turn leaves the report as it was: what fails is marked
    a = web.url("/census")
    run, _ = start(council, web, repair=final(
        a, "every widget was painted bright green in the factory", "57"))
    # fetched once, though five reports cite it
    assert web.asked().count("/census") == 1
    (record,) = fetch.load_index(run / "evidence")
    assert record.ok
    assert record.url == a
    data = json.loads((run / INTEGRITY_JSON).read_text())
    quotes = {q["text"]: q["found"] for q in data["quotes"]["items"]}
    assert quotes == {"the sample held exactly forty-two working widgets": True,
                      "every widget was painted bright green in the factory": False}
    numbers = {n["text"]: n["traced"] for n in data["numbers"]["items"]}
    assert numbers == {"42": True, "57": False}
    report = (run / "final-report.md").read_text()
    stamp = report.split("\n\n", 1)[0]
    assert f"{LINE}{data['summary']}" in stamp.splitlines()
    assert data["summary"].startswith("quotes 1 of 2 found, numbers 1 of 2 traced")
    assert f'factory"{integrity.QUOTE_MISSING}' in report
    assert f"57{integrity.NUMBER_MISSING}" in report
    assert report.count(integrity.MARK) == 2  # the true quote and the traced number: no mark
    progress = (run / "progress.log").read_text()
    assert "evidence store: 1 fetched, 0 failed, 0 refused" in progress
    assert "claude repairs 2 integrity failure(s)" in progress
    status = json.loads(council.run("status", "--json").stdout)
    assert status["integrity"]["summary"] == data["summary"]
    assert status["integrity"]["quotes"]["found"] == 1
    page = (run / "report.html").read_text()
    assert 'id="integrity"' in page
    assert "not traced" in page


def test_the_repair_turn_fixes_what_it_can(council: Council, web: PageServer) -> None:
    a = web.url("/census")
    run, _ = start(council, web, repair=final(
        a, "the committee measured 42 widgets in the sample", "57"))
    data = json.loads((run / INTEGRITY_JSON).read_text())
    assert data["summary"].startswith("quotes 2 of 2 found, numbers 1 of 2 traced")
    report = (run / "final-report.md").read_text()
    assert "bright green" not in report  # the repaired report became the final one
    assert integrity.QUOTE_MISSING not in report
    assert f"57{integrity.NUMBER_MISSING}" in report
    assert report.startswith("> council run ")  # stamped again
    assert "finished: the repaired report is the final report" in \
        (run / "progress.log").read_text()


def test_offline_nothing_is_fetched_and_the_header_says_so(
        council: Council, web: PageServer) -> None:
    run, _ = start(council, web, offline=True)
    assert web.asked() == []
    assert not (run / "evidence").exists()
    data = json.loads((run / INTEGRITY_JSON).read_text())
    assert data["offline"] is True
    assert data["summary"].startswith(OFFLINE)
    report = (run / "final-report.md").read_text()
    assert f"{LINE}{data['summary']}" in report.split("\n\n", 1)[0]
    assert integrity.QUOTE_MISSING not in report


def test_without_the_users_word_a_private_address_is_not_fetched(
        council: Council, web: PageServer) -> None:
    run, a = start(council, web, allow=False)
    assert web.asked() == []
    (record,) = fetch.load_index(run / "evidence")
    assert record.url == a
    assert record.error is not None
    assert record.error.startswith("refused")
    assert "0 fetched, 0 failed, 1 refused" in (run / "progress.log").read_text()
