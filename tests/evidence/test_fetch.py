"""The evidence store's fetcher against a web of pages on 127.0.0.1 (tests/evidence/
pageserver.py). Loopback is a private address, so a test that fetches passes
allow_private=True, as the user's own `sources: {allow_private: true}` would; the tests of
the policy show that without it nothing private is reached. Nothing here connects anywhere
but loopback: a public address appears only as the target of a request sent to the local
server acting as the user's proxy."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from pageserver import FILLER, Page, PageServer, serving

from council.evidence import fetch
from council.evidence.fetch import Change, Limits, Record

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.216.34"  # a public address, only ever asked of the local proxy
ARTICLE = """<!doctype html><html><head><title>Battery study</title>
<script>var tracking = "no";</script><style>p { color: red }</style></head>
<body><nav>Home | Products | About</nav>
<main><h1>Battery study</h1>
<p>Capacity fell by 12.5% after 1,000 cycles.</p>
<p>“Cold weather shortens range,” the authors wrote.</p></main>
<footer>Copyright 2024</footer></body></html>"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def no_proxy_no_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy",
                 "https_proxy", "all_proxy", "no_proxy", fetch.OFFLINE_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def web() -> Iterator[PageServer]:
    with serving() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "run" / "evidence"


async def fetched(urls: list[str], store: Path, **limits: float) -> list[Record]:
    return await fetch.fetch_all(urls, store, allow_private=True,
                                 limits=Limits(**limits))  # type: ignore[arg-type]


# --- the policy -------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "why"), [
    ("file:///etc/passwd", "file scheme"),
    ("ftp://example.com/x", "ftp scheme"),
    ("data:text/html,hi", "data scheme"),
    ("http://user:secret@example.com/", "credentials"),
    ("http://127.0.0.1:8080/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://10.1.2.3/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[64:ff9b::a00:1]/", "private"),  # NAT64 of 10.0.0.1
    ("http://0.0.0.0/", "unspecified"),
    ("http://2130706433/", "numeric host"),
    ("http://0x7f000001/", "numeric host"),
    ("http://localhost:3000/", "private name"),
    ("http://intranet/wiki", "private name"),
    ("http://printer.local/", "private name"),
    ("http://db.internal/", "private name"),
])
def test_the_policy_refuses_what_is_not_public_http(url: str, why: str) -> None:
    assert why in (fetch.refusal(url) or "")


def test_the_policy_lets_public_http_through_and_private_ones_only_when_allowed() -> None:
    assert fetch.refusal(f"http://{PUBLIC}/page") is None
    assert fetch.refusal("https://example.com/a?b=c") is None
    for url in ("http://127.0.0.1/", "http://10.0.0.1/", "http://intranet/"):
        assert fetch.refusal(url, allow_private=True) is None
    # what allow_private never allows: another scheme, or credentials
    assert fetch.refusal("file:///etc/passwd", allow_private=True)
    assert fetch.refusal("http://a:b@127.0.0.1/", allow_private=True)


def test_an_address_is_judged_by_the_ipv4_address_it_carries() -> None:
    assert fetch.address_refusal(ipaddress.ip_address("8.8.8.8")) is None
    assert fetch.address_refusal(ipaddress.ip_address("2002:7f00:1::1"))  # 6to4 of loopback
    assert fetch.address_refusal(ipaddress.ip_address("100.64.0.1"))  # carrier-grade NAT
    assert fetch.address_refusal(ipaddress.ip_address("224.0.0.1"))  # multicast


async def test_without_the_users_allowance_loopback_and_files_are_never_reached(
        web: PageServer, store: Path) -> None:
    secret = web.add("/secret", "<p>internal</p>")
    records = await fetch.fetch_all([secret, "file:///etc/passwd"], store)
    assert [r.error for r in records] == [
        "refused: 127.0.0.1 is a loopback address",
        "refused: file scheme: only http and https are fetched"]
    assert web.asked() == []
    assert not any(r.ok for r in records)


async def test_a_redirect_to_loopback_is_refused_at_its_hop(
        web: PageServer, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A public page (served by the local server as the user's proxy) redirecting to a
    private address: the hop is refused and never asked for."""
    web.add("/secret", "<p>internal</p>")
    web.redirect(f"http://{PUBLIC}/moved", web.url("/secret"))
    web.redirect(f"http://{PUBLIC}/to-file", "file:///etc/passwd")
    monkeypatch.setenv("HTTP_PROXY", web.base)
    records = await fetch.fetch_all([f"http://{PUBLIC}/moved", f"http://{PUBLIC}/to-file"],
                                    store)
    assert records[0].error == (f"refused: redirect to {web.url('/secret')}: 127.0.0.1 is a "
                                "loopback address")
    assert records[1].error == ("refused: redirect to file:///etc/passwd: file scheme: only "
                                "http and https are fetched")
    # the two are fetched at once: either may reach the proxy first
    assert sorted(web.asked()) == [f"http://{PUBLIC}/moved", f"http://{PUBLIC}/to-file"]


async def test_the_connection_goes_to_the_address_that_was_checked(
        web: PageServer, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A public-looking name that resolves to loopback (DNS rebinding's second answer) is
    refused at the connection, from the one lookup council checks and connects with; with
    the user's allowance, the connection goes to exactly that address."""
    web.add("/page", ARTICLE)
    port = web.base.rsplit(":", 1)[1]
    looked_up: list[str] = []

    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address]:
        looked_up.append(host)
        return [ipaddress.IPv4Address("127.0.0.1")]

    monkeypatch.setattr(fetch, "_resolve", resolve)
    url = f"http://rebound.council-example.com:{port}/page"
    refused = await fetch.fetch_all([url], store)
    assert refused[0].error == ("refused: rebound.council-example.com resolves to a private "
                                "address (127.0.0.1 is a loopback address)")
    assert web.asked() == []
    allowed = await fetched([url], store.with_name("allowed"))  # a store fetches a URL once
    assert allowed[0].ok
    assert web.requests[0][1]["host"] == f"rebound.council-example.com:{port}"
    assert looked_up == ["rebound.council-example.com"] * 2


async def test_the_users_proxy_carries_requests_and_no_proxy_exempts_hosts(
        web: PageServer, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy is the user's own: its loopback address is not refused. NO_PROXY sends a
    host direct (the proxy named here listens nowhere)."""
    web.add(f"http://{PUBLIC}/report", ARTICLE)
    monkeypatch.setenv("HTTP_PROXY", web.base)
    through = await fetch.fetch_all([f"http://{PUBLIC}/report"], store)
    assert through[0].ok
    assert "Capacity fell" in (fetch.load_text(store, through[0]) or "")

    direct = web.add("/direct", ARTICLE)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert (await fetched([direct], store))[0].ok
    assert web.asked() == [f"http://{PUBLIC}/report", "/direct"]


async def test_through_a_proxy_a_literal_private_address_is_still_refused(
        web: PageServer, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", web.base)
    records = await fetch.fetch_all(["http://10.0.0.7/admin"], store)
    assert records[0].error == "refused: 10.0.0.7 is a private address"
    assert web.asked() == []


# --- what is stored ---------------------------------------------------------------------

async def test_a_page_is_stored_with_its_record_text_and_index(
        web: PageServer, store: Path) -> None:
    page = Page(ARTICLE.encode(), headers={"ETag": '"v1"',
                                           "Last-Modified": "Wed, 21 Oct 2026 07:28:00 GMT",
                                           "Set-Cookie": "session=abc"})
    url = web.add("/study", page)
    [record] = await fetched([url], store)
    assert (record.status, record.final_url, record.etag, record.last_modified) == \
        (200, url, '"v1"', "Wed, 21 Oct 2026 07:28:00 GMT")
    assert record.content_type == "text/html; charset=utf-8"
    assert record.sha256 == hashlib.sha256(ARTICLE.encode()).hexdigest()
    assert record.fetched_at
    assert record.fetched_at.endswith("Z")
    assert (record.title, record.truncated, record.retracted) == ("Battery study", False, None)
    text = fetch.load_text(store, record)
    assert text == ("Battery study\n\nCapacity fell by 12.5% after 1,000 cycles.\n\n"
                    "“Cold weather shortens range,” the authors wrote.")
    assert record.text_sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert sorted(p.name for p in store.iterdir()) == sorted(
        [f"{record.key}.json", f"{record.key}.txt", "index.json"])
    assert fetch.load_index(store) == [record]
    assert fetch.load_record(store, url) == record
    assert fetch.texts(store, [record]) == {record.canonical: text}
    sent = web.requests[0][1]
    assert "cookie" not in sent
    assert "authorization" not in sent
    assert sent["user-agent"].startswith("council")


async def test_one_source_cited_in_several_spellings_is_fetched_once(
        web: PageServer, store: Path) -> None:
    url = web.add("/a", ARTICLE)
    records = await fetched([url, url + "/?utm_source=x", url + "#part"], store)
    assert len(records) == 1
    assert web.asked() == ["/a"]


async def test_redirects_are_followed_without_cookies_and_a_loop_is_cut(
        web: PageServer, store: Path) -> None:
    final = web.add("/final", ARTICLE)
    web.add("/start", Page(status=301, headers={"Location": "/final",
                                                "Set-Cookie": "track=1"}))
    web.redirect("/loop", "/loop")
    moved, loop = await fetched([web.url("/start"), web.url("/loop")], store)
    assert (moved.final_url, moved.redirects) == (final, (web.url("/start"),))
    assert all("cookie" not in headers for _, headers in web.requests)
    assert loop.error == "more than 5 redirects"


async def test_what_could_not_be_fetched_is_recorded_with_why(
        web: PageServer, store: Path) -> None:
    web.add("/gone", Page(b"gone", status=410))
    web.add("/broken", Page(b"oops", status=503))
    web.add("/pdf", Page(b"%PDF-1.7 ...", content_type="application/pdf"))
    gone, missing, broken, pdf = await fetched(
        [web.url("/gone"), web.url("/missing"), web.url("/broken"), web.url("/pdf")], store)
    assert (gone.gone, gone.error) == (True, "HTTP 410")
    assert (missing.gone, missing.error) == (True, "HTTP 404")
    assert (broken.gone, broken.error) == (False, "HTTP 503")
    assert (pdf.ok, pdf.note) == (True, "no text extracted from application/pdf")
    index = json.loads((store / "index.json").read_text())
    assert [s["error"] for s in index["sources"]] == ["HTTP 410", "HTTP 404", "HTTP 503", None]
    assert not (store / f"{gone.key}.txt").exists()


async def test_a_page_that_marks_itself_retracted_is_flagged(
        web: PageServer, store: Path) -> None:
    url = web.add("/r", "<html><head><title>RETRACTED: Battery study</title></head>"
                  "<body><p>Results.</p></body></html>")
    [record] = await fetched([url], store)
    assert record.retracted == "its title reads 'RETRACTED: Battery study'"


# --- the bounds -------------------------------------------------------------------------

async def test_a_page_is_cut_off_at_its_limit(web: PageServer, store: Path) -> None:
    url = web.add("/big", Page(size=20 << 20))
    [record] = await fetched([url], store, max_bytes=1 << 20)
    assert (record.ok, record.truncated, record.bytes) == (True, True, 1 << 20)
    assert (fetch.load_text(store, record) or "").startswith(FILLER.decode()[3:40])


async def test_a_compressed_page_is_bounded_by_what_it_inflates_to(
        web: PageServer, store: Path) -> None:
    bomb = web.add("/bomb", Page(b"<p>" + b"0" * (30 << 20) + b"</p>", gzip=True))
    small = web.add("/small", Page(ARTICLE.encode(), gzip=True))
    big, fine = await fetched([bomb, small], store, max_bytes=1 << 20)
    assert (big.truncated, big.bytes) == (True, 1 << 20)
    assert (fine.truncated, fine.sha256) == (False, hashlib.sha256(ARTICLE.encode()).hexdigest())
    assert web.requests[0][1]["accept-encoding"] == "gzip, deflate"


async def test_the_store_as_a_whole_is_bounded_in_bytes_and_count(
        web: PageServer, store: Path) -> None:
    urls = [web.add(f"/p{i}", Page(size=600 << 10)) for i in range(5)]
    records = await fetched(urls, store, total_bytes=1 << 20, max_urls=4, concurrency=1)
    assert sum(r.bytes for r in records) == 1 << 20
    assert [r.truncated for r in records[:2]] == [False, True]
    assert [r.error for r in records[2:]] == [
        "not fetched: the store's limit of 1 MB is reached"] * 2 + [
        "not fetched: the store's limit of 4 pages is reached"]
    assert len(web.asked()) == 4


def test_the_room_left_in_a_store_counts_its_pages_and_their_bytes() -> None:
    def page(n: int, size: int) -> Record:
        return Record(url=f"https://example.com/{n}", key="0" * 24, status=200, bytes=size)
    held = [page(1, 300), page(2, 200), replace(page(3, 0), status=404, error="HTTP 404"),
            Record(url="file:///etc/passwd", key="1" * 24, error="refused: file scheme")]
    limits = Limits(max_urls=5, total_bytes=1000)
    assert fetch.room(held, limits) == replace(limits, max_urls=3, total_bytes=500)
    assert fetch.room([], limits) == limits
    assert fetch.room([page(i, 600) for i in range(7)], limits) == \
        replace(limits, max_urls=0, total_bytes=0)


async def test_three_fetches_into_one_store_stay_within_its_count(
        web: PageServer, store: Path) -> None:
    """Verification, the antagonist and the synthesis each fetch into the run's one store:
    its bound is on the store's pages, not on each fetch's."""
    a, b, c, d, e = (web.add(f"/{n}", ARTICLE) for n in "abcde")
    gone = web.url("/gone")
    first = await fetched([a, gone], store, max_urls=3)
    second = await fetched([b, a, c, d], store, max_urls=3)
    third = await fetched([e, gone], store, max_urls=3)
    assert [r.ok for r in first] == [True, False]  # a 404 takes no room in the store
    assert (second[1], third[1]) == (first[0], first[1])  # held: not asked again
    assert [r.ok for r in second] == [True, True, True, False]
    full = "not fetched: the store's limit of 3 pages is reached"
    assert (second[3].error, third[0].error) == (full, full)
    # nothing over the bound was asked (a fetch asks for its pages at once, in any order)
    assert sorted(web.asked()) == ["/a", "/b", "/c", "/gone"]
    index = fetch.load_index(store)
    assert [r.url for r in index] == [a, gone, b, c, d, e]
    assert sum(r.ok for r in index) == 3
    assert len(list(store.glob("*.txt"))) == 3


async def test_three_fetches_into_one_store_stay_within_its_bytes(
        web: PageServer, store: Path) -> None:
    urls = [web.add(f"/p{i}", Page(size=400 << 10)) for i in range(4)]
    await fetched(urls[:1], store, total_bytes=1 << 20)
    second = await fetched(urls[1:3], store, total_bytes=1 << 20, concurrency=1)
    (third,) = await fetched(urls[3:], store, total_bytes=1 << 20)
    assert [(r.bytes, r.truncated) for r in second] == \
        [(400 << 10, False), ((1 << 20) - (800 << 10), True)]
    assert third.error == "not fetched: the store's limit of 1 MB is reached"
    assert web.asked() == ["/p0", "/p1", "/p2"]
    index = fetch.load_index(store)
    assert sum(r.bytes for r in index if r.ok) == 1 << 20
    assert [r.url for r in index] == urls


async def test_a_page_refetched_larger_counts_at_its_new_size(
        web: PageServer, store: Path) -> None:
    """--since replaces a changed page's record, not its index entry: the room left is
    reckoned from the record as it is now."""
    first = web.add("/p", Page(size=400 << 10))
    (before,) = await fetched([first], store, total_bytes=1 << 20)
    web.pages["/p"] = Page(size=900 << 10)
    after = await fetch.refetch_all([before], store, allow_private=True)
    assert after[first].change is Change.CHANGED
    (later,) = await fetched([web.add("/q", Page(size=400 << 10))], store,
                             total_bytes=1 << 20)
    assert (later.bytes, later.truncated) == ((1 << 20) - (900 << 10), True)


async def test_a_stalled_server_times_out(web: PageServer, store: Path) -> None:
    url = web.add("/stall", Page(hang=True))
    fine = web.add("/fine", ARTICLE)
    stalled, ok = await fetched([url, fine], store, url_seconds=0.5)
    assert stalled.error == "timed out after 0.5 s"
    assert ok.ok


async def test_the_whole_store_has_a_deadline(web: PageServer, store: Path) -> None:
    urls = [web.add(f"/stall{i}", Page(hang=True)) for i in range(2)]
    records = await fetched(urls, store, total_seconds=0.3)
    assert [r.error for r in records] == \
        ["not fetched: the store's time limit of 0.3 s ran out"] * 2
    assert [r.url for r in fetch.load_index(store)] == urls


# --- offline ----------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "off"), [("1", True), ("true", True), ("YES", True),
                                            ("0", False), ("", False)])
def test_offline_reads_the_environment(value: str, off: bool) -> None:
    assert fetch.offline({fetch.OFFLINE_ENV: value}) is off


async def test_offline_nothing_is_fetched_or_written(
        web: PageServer, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = web.add("/a", ARTICLE)
    monkeypatch.setenv(fetch.OFFLINE_ENV, "1")
    [record] = await fetched([url], store)
    assert record.error == "offline (COUNCIL_OFFLINE=1): not fetched"
    old = Record(url=url, key=fetch.key(url), status=200, text_sha256="x")
    assert (await fetch.refetch_all([old], store, allow_private=True))[url].change \
        is Change.UNKNOWN
    assert web.asked() == []
    assert not store.exists()


# --- --since ----------------------------------------------------------------------------

async def test_a_refetch_says_unchanged_changed_or_gone(web: PageServer, store: Path) -> None:
    tagged = web.add("/tagged", Page(ARTICLE.encode(), headers={"ETag": '"v1"'}))
    plain = web.add("/plain", ARTICLE)
    edited = web.add("/edited", ARTICLE)
    removed = web.add("/removed", ARTICLE)
    before = await fetched([tagged, plain, edited, removed], store)
    web.add("/edited", ARTICLE.replace("12.5%", "14%"))
    del web.pages["/removed"]
    web.requests.clear()
    after = await fetch.refetch_all(before, store, allow_private=True)
    assert {u: r.change for u, r in after.items()} == {
        tagged: Change.UNCHANGED, plain: Change.UNCHANGED, edited: Change.CHANGED,
        removed: Change.GONE}
    sent = dict(web.requests)
    assert sent["/tagged"]["if-none-match"] == '"v1"'
    assert "if-none-match" not in sent["/plain"]
    new = fetch.load_record(store, edited)
    assert new is not None
    assert "Capacity fell by 14%" in (fetch.load_text(store, new) or "")
    gone = fetch.load_record(store, removed)
    assert gone is not None
    assert gone.gone


async def test_a_refetch_that_cannot_reach_a_source_keeps_its_record(
        web: PageServer, store: Path) -> None:
    url = web.add("/a", ARTICLE)
    [before] = await fetched([url], store)
    web.pages["/a"] = Page(b"busy", status=503)
    result = (await fetch.refetch_all([before], store, allow_private=True))[url]
    assert (result.change, result.record, result.why) == (Change.UNKNOWN, before, "HTTP 503")
    assert fetch.load_record(store, url) == before

