"""The evidence store within its bounds (council/evidence/fetch.py): 500 cited URLs, served on
127.0.0.1 by the tests' page server (tests/evidence/pageserver.py), among them one page of
200 MB, `--big N` pages of 8 MB, a few redirects and missing pages, and the rest pages of
100 KB; fetched with the default limits (allow_private, as the user's own config would).

    python benchmarks/evidence.py [--urls 500] [--huge-mb 200] [--big 20]

A run fetches into its one store in several steps (verification, the antagonist, the
synthesis, a resumed run), and the store's bounds are the store's, not each step's. So the
store is fetched into three times, as a run does:

- pages: the 500 URLs (verification); the same 500 and 100 new pages (the antagonist); 100
  new pages and 50 of the first (the synthesis). The count bound is the one reached.
- bytes: a second store, fed 8 MB pages (each read up to the page limit): three quarters of
  the byte bound's worth, then half of it, then 5 more. The byte bound is the one reached.

Reported for each step: the URLs cited, the requests the page server got, and the store after
it: its pages and the bytes read into it, each as a ratio to its bound, its size on disk as a
ratio to its size after the first step (all measured in this run), and the step's wall time
as a ratio to the time bound of one fetch. Then, for the first step, the 200 MB page's bytes
read, the largest body read, the sources recorded over the count limit, and this process's
peak RSS (the page server runs in it too, streaming its pages, never holding one).
Exits 1 if a bound is broken."""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "evidence"))

from pageserver import Page, PageServer, serving  # noqa: E402

from council.evidence import fetch  # noqa: E402
from council.evidence.fetch import Limits, Record  # noqa: E402

SMALL = 100 << 10
BIG = 8 << 20


@dataclass(frozen=True)
class Step:
    name: str
    cited: int
    records: list[Record]  # this step's, in the order cited
    room: Limits  # what was left of the bounds before it
    asked: int  # requests the page server got during it
    pages: int  # the store's pages after it
    read: int  # bytes read into the store, after it
    disk: int  # the store's size on disk, after it
    wall: float


def _step(name: str, urls: list[str], store: Path, limits: Limits, web: PageServer) -> Step:
    room = fetch.room(fetch.load_index(store), limits)
    asked = len(web.asked())
    began = time.perf_counter()
    records = anyio.run(lambda: fetch.fetch_all(urls, store, allow_private=True,
                                                limits=limits))
    wall = time.perf_counter() - began
    held = [r for r in fetch.load_index(store) if r.ok]
    return Step(name, len(urls), records, room, len(web.asked()) - asked, len(held),
                sum(r.bytes for r in held), sum(p.stat().st_size for p in store.iterdir()),
                wall)


def _pages(web: PageServer, prefix: str, count: int, size: int) -> list[str]:
    return [web.add(f"/{prefix}{i}", Page(size=size)) for i in range(count)]


def _broken(steps: list[Step], limits: Limits) -> list[str]:
    """The bounds a scenario's steps broke: the store's pages and bytes after each step, each
    page's size and each step's time; a step that found the store full asked for nothing, and
    each source never asked for says it was over the store's bound."""
    full = (fetch.over_pages(limits), fetch.over_bytes(limits))
    out = []
    for s in steps:
        checks = [
            ("pages", s.pages <= limits.max_urls),
            ("bytes", s.read <= limits.total_bytes),
            ("page size", max(r.bytes for r in s.records) <= limits.max_bytes),
            ("time", s.wall <= limits.total_seconds + 5),
            ("asked of a full store",
             s.asked == 0 or (s.room.max_urls > 0 and s.room.total_bytes > 0)),
            ("why not asked", all(r.error in full for r in s.records if r.fetched_at is None)),
        ]
        out += [f"{s.name}: {what}" for what, ok in checks if not ok]
    return out


def _table(title: str, steps: list[Step], limits: Limits) -> None:
    first = steps[0].disk or 1
    print(title)
    head = ("step", "cited", "asked", "pages", "/bound", "MB read", "/bound", "disk MB",
            "/step 1", "wall s", "/bound")
    rows = [head] + [(s.name, f"{s.cited}", f"{s.asked}", f"{s.pages}",
                      f"{s.pages / limits.max_urls:.2f}", f"{s.read / 2**20:.1f}",
                      f"{s.read / limits.total_bytes:.2f}", f"{s.disk / 2**20:.1f}",
                      f"{s.disk / first:.2f}", f"{s.wall:.1f}",
                      f"{s.wall / limits.total_seconds:.3f}") for s in steps]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=500)
    parser.add_argument("--huge-mb", type=int, default=200)
    parser.add_argument("--big", type=int, default=20, help="pages of 8 MB")
    args = parser.parse_args()
    limits = fetch.Limits()
    fill = limits.total_bytes // min(BIG, limits.max_bytes)  # 8 MB pages that fill the bytes
    with serving() as web, tempfile.TemporaryDirectory() as tmp:
        urls = [web.add("/huge", Page(size=args.huge_mb << 20))]
        urls += _pages(web, "big", args.big, BIG)
        for i in range(args.urls - len(urls)):
            if i % 50 == 7:
                urls.append(web.redirect(f"/moved{i}", f"/page{i}"))
                web.add(f"/page{i}", Page(size=SMALL))
            elif i % 50 == 13:
                urls.append(web.url(f"/missing{i}"))
            else:
                urls.append(web.add(f"/page{i}", Page(size=SMALL)))
        store = Path(tmp) / "pages" / "evidence"
        by_count = [
            _step("1 verification", urls, store, limits, web),
            _step("2 antagonist", urls + _pages(web, "more", 100, SMALL), store, limits, web),
            _step("3 synthesis", _pages(web, "final", 100, SMALL) + urls[:50], store, limits,
                  web)]
        store = Path(tmp) / "bytes" / "evidence"
        by_bytes = [
            _step("1 verification", _pages(web, "b1-", fill * 3 // 4, BIG), store, limits, web),
            _step("2 antagonist", _pages(web, "b2-", fill // 2, BIG), store, limits, web),
            _step("3 synthesis", _pages(web, "b3-", 5, BIG), store, limits, web)]
    first = by_count[0].records
    over = [r for r in first if r.error == fetch.over_pages(limits)]
    huge = first[0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    print(f"bounds: {limits.max_urls} pages, {limits.total_bytes / 2**20:g} MB read, "
          f"{limits.max_bytes / 2**20:g} MB a page, {limits.total_seconds:g} s a fetch")
    _table(f"pages: {len(urls)} URLs cited (one page of {args.huge_mb} MB, {args.big} of "
           "8 MB), then these and 100 new ones, then 100 new and 50 of the first",
           by_count, limits)
    _table(f"bytes: {fill * 3 // 4}, then {fill // 2}, then 5 new pages of 8 MB", by_bytes,
           limits)
    rows = [
        (f"{args.huge_mb} MB page: bytes read / page bound, truncated",
         f"{huge.bytes / limits.max_bytes:.2f}, {huge.truncated}"),
        ("largest body read / page bound", f"{max(r.bytes for r in first) / limits.max_bytes:.2f}"),
        ("step 1: recorded over the count limit / URLs over it",
         f"{len(over)} / {max(0, len(urls) - limits.max_urls)}"),
        ("peak RSS, fetcher and server (MB)", f"{peak:.0f}"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>12}")
    broken = [f"pages, {b}" for b in _broken(by_count, limits)] + \
        [f"bytes, {b}" for b in _broken(by_bytes, limits)]
    if not huge.truncated or len(over) != max(0, len(urls) - limits.max_urls):
        broken.append("pages, 1 verification: the over-limit records")
    if by_bytes[-1].read != limits.total_bytes:
        broken.append("bytes: the store is not full")
    if broken:
        print("bounds broken: " + "; ".join(broken))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
