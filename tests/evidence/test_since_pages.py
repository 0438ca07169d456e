"""`council run --since` fetches the earlier run's cited pages again (issue 44), with the fake
CLIs and a page server on loopback the seats cite, allowed by the test user's own
`sources: {allow_private: true}`: the earlier store is the starting point, a page with an
ETag is asked for conditionally and not downloaded again, one without is compared by its
text's hash, and changes.json, changes.md and the printed headline name the page that
changed and the one that is gone, beside the claims that cite them. Offline, nothing is
fetched and the pages are said to be not checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Council
from pageserver import Page, PageServer, serving

from council.evidence import changes, fetch
from council.store.loop import MARKER

RUN = ("run", "--test", "--agents", "claude,codex", "--verify", "--depth", "standard")
TOPIC = "Do tides follow the moon?"
PATHS = ("/moon", "/salt", "/surge", "/tide", "/waves")


def html(text: str) -> str:
    return f"<html><body><main><p>{text}</p></main></body></html>"


@pytest.fixture
def web() -> Iterator[PageServer]:
    with serving() as server:
        yield server


def pages(web: PageServer) -> dict[str, str]:
    """Five pages: two with an ETag (/moon will change, /salt will not), one without (/tide,
    unchanged: compared by its hash), /waves (gone by the second run) and /surge (failing
    by then: a server error says nothing of the page)."""
    web.add("/moon", Page(html("The moon raises the tides twice a day.").encode(),
                          headers={"ETag": '"moon-1"'}))
    web.add("/salt", Page(html("The sea holds 35 grams of salt per litre.").encode(),
                          headers={"ETag": '"salt-1"'}))
    web.add("/tide", html("Spring tides come every fortnight."))
    web.add("/waves", html("Waves are driven by the wind."))
    web.add("/surge", html("A storm surge adds to the tide."))
    return {p: web.url(p) for p in PATHS}


def script(council: Council, urls: dict[str, str], c1: str = "SUPPORTED") -> None:
    """Every report cites the four pages; each claim one of them; codex checks claude's
    claims (c1, c3), claude checks codex's (c2, c4)."""
    claims = {"claims": [
        {"id": "c1", "agent": "claude", "claim": "The moon raises the tides.",
         "sources": [urls["/moon"]]},
        {"id": "c2", "agent": "codex", "claim": "The sea is salty.", "sources": [urls["/salt"]]},
        {"id": "c3", "agent": "claude", "claim": "Spring tides come every fortnight.",
         "sources": [urls["/tide"]]},
        {"id": "c4", "agent": "codex", "claim": "Waves are wind-driven.",
         "sources": [urls["/waves"]]}]}
    report = "# Tides\n\n" + "".join(f"A finding ([page]({u})).\n\n" for u in urls.values()) \
        + f"{MARKER}\n"

    def verdicts(*given: tuple[str, str]) -> str:
        return json.dumps({"verdicts": [{"id": cid, "verdict": v, "evidence": f"scripted {cid}"}
                                        for cid, v in given]})

    council.script({
        "*": {"content": report, "finish_after": 1},
        "claude:claims": {"content": json.dumps(claims)},
        "codex:verification": {"content": verdicts(("c1", c1), ("c3", "SUPPORTED"))},
        "claude:verification": {"content": verdicts(("c2", "SUPPORTED"), ("c4", "SUPPORTED"))}})


def online(council: Council) -> None:
    council.env.pop(fetch.OFFLINE_ENV, None)  # this test is about fetching: loopback only
    own = council.root / "config" / "config.yaml"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("sources: {allow_private: true}\n")


def runs(council: Council) -> set[Path]:
    return {p for p in council.research.iterdir() if p.name[0].isdigit()}


def first_run(council: Council, web: PageServer) -> tuple[Path, dict[str, str]]:
    online(council)
    urls = pages(web)
    script(council, urls)
    proc = council.run(*RUN, TOPIC, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (one,) = runs(council)
    assert all(r.ok for r in fetch.load_index(one / "evidence"))
    assert sorted(web.asked()) == sorted(PATHS)  # each page once
    return one, urls


def test_since_names_the_changed_and_the_gone_page_beside_their_claims(
        council: Council, web: PageServer) -> None:
    one, urls = first_run(council, web)
    web.requests.clear()
    web.add("/moon", Page(html("The sun, not the moon, raises the tides.").encode(),
                          headers={"ETag": '"moon-2"'}))
    web.add("/waves", Page(html("Not found").encode(), status=404))
    web.add("/surge", Page(html("Oops").encode(), status=500))
    script(council, urls, c1="CONTRADICTED")

    proc = council.run(*RUN, "--since", "latest", "--exit-code", timeout=120)
    assert proc.returncode == 1, proc.stderr  # changed
    (two,) = runs(council) - {one}

    # each page asked for once, conditionally where it had an ETag; /salt was not sent again
    asked = {path: headers for path, headers in web.requests}
    assert sorted(web.asked()) == sorted(PATHS)
    assert asked["/moon"].get("if-none-match") == '"moon-1"'
    assert asked["/salt"].get("if-none-match") == '"salt-1"'
    assert "if-none-match" not in asked["/tide"]
    store = two / "evidence"
    records = {r.url: r for r in fetch.load_index(store)}
    assert records[urls["/salt"]].ok
    assert fetch.load_text(store, records[urls["/salt"]]) == \
        fetch.load_text(one / "evidence", records[urls["/salt"]])  # the earlier text, kept
    assert "The sun, not the moon" in (fetch.load_text(store, records[urls["/moon"]]) or "")
    assert records[urls["/waves"]].gone
    assert not (store / f"{records[urls['/waves']].key}.txt").exists()
    surge = records[urls["/surge"]]  # could not be fetched again: the earlier copy stands
    assert surge.ok
    assert "storm surge" in (fetch.load_text(store, surge) or "")
    # the verifier judged c1 against the page as it is now
    told = (two / "agents" / "codex" / "verification-prompt.md").read_text()
    assert "The sun, not the moon, raises the tides." in told

    found = json.loads((two / changes.CHANGES_JSON).read_text())
    assert found["changed"] is True
    pages_now = found["sources"]
    assert [p["url"] for p in pages_now["changed"]] == [urls["/moon"]]
    assert pages_now["changed"][0]["claims"] == [
        {"id": "c1", "claim": "The moon raises the tides.", "before": "SUPPORTED",
         "after": "CONTRADICTED", "flipped": True}]
    assert [(p["url"], p["status"]) for p in pages_now["disappeared"]] == [(urls["/waves"], 404)]
    assert [c["id"] for c in pages_now["disappeared"][0]["claims"]] == ["c4"]
    assert pages_now["unchanged"] == 2
    assert [(p["url"], p["why"]) for p in pages_now["unreachable"]] == \
        [(urls["/surge"], "HTTP 500")]
    said = proc.stdout.splitlines()
    (headline,) = [line for line in said if line.startswith("changed since")]
    assert f"1 changed ({urls['/moon']})" in headline
    assert f"1 gone ({urls['/waves']}, HTTP 404)" in headline
    assert f"1 not reachable ({urls['/surge']})" in headline
    assert "2 unchanged" in headline
    md = (two / changes.CHANGES_MD).read_text()
    assert f"- {urls['/moon']}\n  - c1 [SUPPORTED → CONTRADICTED, flipped]" in md
    assert f"- {urls['/waves']} (HTTP 404)\n  - c4 [SUPPORTED, as before]" in md
    report = (two / "final-report.md").read_text()
    assert f"- {urls['/moon']}\n" in report.split("\n# ", 1)[0]  # the opening section
    progress = (two / "progress.log").read_text()
    assert "fetched again: 1 changed, 1 gone, 2 unchanged, 1 not reachable" in progress

    # a follow-up starts from this store: nothing changed, so nothing is downloaded again
    # but /tide (no ETag); the gone page, cited still, is asked for as a new one (it may be
    # back) and is not news: it was gone before
    web.requests.clear()
    script(council, urls, c1="CONTRADICTED")
    proc = council.run(*RUN, "--since", "latest", "--exit-code", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (three,) = runs(council) - {one, two}
    assert sorted(web.asked()) == sorted(PATHS)
    asked = {path: headers for path, headers in web.requests}
    assert asked["/moon"].get("if-none-match") == '"moon-2"'
    assert asked["/salt"].get("if-none-match") == '"salt-1"'
    quiet = json.loads((three / changes.CHANGES_JSON).read_text())
    assert quiet["changed"] is False  # a page that could not be reached changes nothing
    assert quiet["sources"]["unchanged"] == 3
    assert [p["url"] for p in quiet["sources"]["unreachable"]] == [urls["/surge"]]
    assert "no change since" in proc.stdout
    assert f"cited pages: 1 not reachable ({urls['/surge']}), 3 unchanged" in proc.stdout


def test_offline_since_fetches_nothing_and_says_the_pages_were_not_checked(
        council: Council, web: PageServer) -> None:
    one, _ = first_run(council, web)
    web.requests.clear()
    proc = council.run(*RUN, "--offline", "--since", "latest", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert web.asked() == []
    (two,) = runs(council) - {one}
    assert not (two / "evidence").exists()
    found = json.loads((two / changes.CHANGES_JSON).read_text())
    assert found["sources"]["not_checked"] == {"why": changes.OFFLINE, "count": 5}
    assert found["sources"]["changed"] == []
    assert "cited pages: 5 pages not checked (offline)" in proc.stdout
