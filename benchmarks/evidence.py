"""The evidence store within its bounds (council/evidence/fetch.py): 500 cited URLs, served on
127.0.0.1 by the tests' page server (tests/evidence/pageserver.py), among them one page of
200 MB, `--big N` pages of 8 MB, a few redirects and missing pages, and the rest pages of
100 KB; fetched with the default limits (allow_private, as the user's own config would).

    python benchmarks/evidence.py [--urls 500] [--huge-mb 200] [--big 20]

Reported, each beside its bound: sources fetched and recorded as over the count limit, the
largest body read, the bytes read in all, the store's size on disk, wall time, and this
process's peak RSS (the page server runs in it too, streaming its pages, never holding one).
Exits 1 if a bound is broken."""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "evidence"))

from pageserver import Page, serving  # noqa: E402

from council.evidence import fetch  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=500)
    parser.add_argument("--huge-mb", type=int, default=200)
    parser.add_argument("--big", type=int, default=20, help="pages of 8 MB")
    args = parser.parse_args()
    limits = fetch.Limits()
    with serving() as web, tempfile.TemporaryDirectory() as tmp:
        urls = [web.add("/huge", Page(size=args.huge_mb << 20))]
        urls += [web.add(f"/big{i}", Page(size=8 << 20)) for i in range(args.big)]
        for i in range(args.urls - len(urls)):
            if i % 50 == 7:
                urls.append(web.redirect(f"/moved{i}", f"/page{i}"))
                web.add(f"/page{i}", Page(size=100 << 10))
            elif i % 50 == 13:
                urls.append(web.url(f"/missing{i}"))
            else:
                urls.append(web.add(f"/page{i}", Page(size=100 << 10)))
        store = Path(tmp) / "evidence"
        began = time.perf_counter()
        records = anyio.run(lambda: fetch.fetch_all(urls, store, allow_private=True,
                                                    limits=limits))
        wall = time.perf_counter() - began
        on_disk = sum(p.stat().st_size for p in store.iterdir())
        files = len(list(store.iterdir()))
    fetched = [r for r in records if r.ok]
    over = [r for r in records if (r.error or "").startswith("not fetched: over")]
    huge = records[0]
    read = sum(r.bytes for r in records)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    rows = [
        ("URLs cited", f"{len(urls)}", ""),
        ("sources fetched (ok)", f"{len(fetched)}", f"<= {limits.max_urls}"),
        ("recorded over the count limit", f"{len(over)}",
         f"= {max(0, len(urls) - limits.max_urls)}"),
        (f"{args.huge_mb} MB page: bytes read, truncated", f"{huge.bytes}, {huge.truncated}",
         f"<= {limits.max_bytes}"),
        ("largest body read", f"{max(r.bytes for r in records)}", f"<= {limits.max_bytes}"),
        ("bytes read in all", f"{read}", f"<= {limits.total_bytes}"),
        ("store on disk (bytes, files)", f"{on_disk}, {files}", ""),
        ("wall time (s)", f"{wall:.1f}", f"<= {limits.total_seconds:g}"),
        ("peak RSS, fetcher and server (MB)", f"{peak:.0f}", ""),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, bound in rows:
        print(f"{name:<{width}}  {value:>24}  {bound}")
    broken = [name for name, ok in [
        ("count", len(fetched) + len(over) <= len(urls) and len(fetched) <= limits.max_urls),
        ("over-limit records", len(over) == max(0, len(urls) - limits.max_urls)),
        ("page size", max(r.bytes for r in records) <= limits.max_bytes and huge.truncated),
        ("total bytes", read <= limits.total_bytes),
        ("time", wall <= limits.total_seconds + 5),
    ] if not ok]
    if broken:
        print("bounds broken: " + ", ".join(broken))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
