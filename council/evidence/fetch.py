"""The evidence store: council fetches the sources a run cites, once, into
research/<id>/evidence/, so every verifier reads the same text of a page.

    evidence/index.json   every URL asked for, each with its record's summary (or why not)
    evidence/<key>.json   one record per source: the URL as cited, its canonical form, the
                          final URL, status, content type, fetch time, the body's and the
                          text's sha256, ETag and Last-Modified, why it could not be fetched
    evidence/<key>.txt    the page's main text (pagetext.py)

`<key>` is a hash of the canonical URL: no cited text ever names a file.

What a fetch may do, whatever a page or an agent asks:
- http and https only; no credentials in a URL; no cookies (httpcore keeps none) and no
  Authorization; a redirect goes to http or https, never from https down to http, at most
  `Limits.redirects` hops, each checked like the first URL.
- Public addresses only, unless the user's own config allows private ones (`allow_private`:
  the lead passes `sources: {allow_private: true}` of the user's config, never a project's).
  The host is resolved by council and the connection made to the address that was checked
  (the network backend below does both), so a name that resolves to a public address for the
  check and to 127.0.0.1 for the connect (DNS rebinding) cannot slip through. Literal
  addresses, `localhost`, single-label names and the special-use domains (.local, .internal,
  .home.arpa, .localhost) are refused before any lookup.
- The user's proxy settings (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, as the standard
  library reads them) are followed as any web client follows them. The proxy is the user's
  own configuration, so its address is not checked (a proxy on 10.0.0.1 works). Through a
  proxy, council cannot choose the address the proxy connects to: a literal address is checked
  exactly, and a name is resolved locally and refused if it resolves to a private address,
  but a name only the proxy can resolve, or one that rebinds between council's lookup and the
  proxy's, is the proxy's to police. NO_PROXY hosts are fetched directly, fully checked.
- Bounded: `Limits.max_bytes` of body per page (streamed, cut off, marked truncated), a total
  of `Limits.total_bytes` for the store, `Limits.max_urls` pages in the store (the rest are
  recorded as over the limit), `Limits.url_seconds` per page and `Limits.total_seconds` for
  one fetch, at most `Limits.concurrency` fetches at once and `Limits.per_host` to one host.
  The store's bytes and pages are bounded per store, not per fetch: a run fetches in several
  steps (verification, the antagonist, the synthesis, a resumed run), and each is given only
  what the store has room for (`room`).
- `offline()` (COUNCIL_OFFLINE=1) turns every fetch off: nothing is fetched or written, and
  each URL comes back as not fetched, offline.

A page is untrusted text wherever it goes: it is stored as text, named by a hash, and its
headers are kept only as bounded single-line strings."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import json
import os
import re
import socket
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

import anyio
from w3lib.url import safe_url_string

from council.evidence import pagetext
from council.evidence.sources import canonical
from council.store import agentfs, disk

if TYPE_CHECKING:
    import httpcore2

OFFLINE_ENV = "COUNCIL_OFFLINE"
FOLDER = "evidence"
INDEX = "index.json"
SCHEMA_VERSION = 1
SCHEMES = ("http", "https")
REDIRECTS = frozenset({301, 302, 303, 307, 308})
GONE = frozenset({404, 410})
# Special-use names (RFC 6761, 6762, 8375 and ICANN's .internal): never a public site.
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".test", ".invalid",
                    ".example", ".onion")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
HEADER_LIMIT = 300  # characters of a header council keeps (ETag, Last-Modified, type)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def offline(environ: Mapping[str, str] | None = None) -> bool:
    """COUNCIL_OFFLINE is set to 1 (or true, yes, on): council fetches nothing."""
    value = (os.environ if environ is None else environ).get(OFFLINE_ENV, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 5 << 20  # of one page's body (decoded), read then cut off
    total_bytes: int = 200 << 20  # of every body read into the store, together
    max_text: int = 1 << 20  # characters of a page's text stored
    max_urls: int = 200  # pages in the store; the rest are recorded as over the limit
    url_seconds: float = 30.0  # per page, redirects included
    total_seconds: float = 300.0  # for one fetch_all (each of a run's steps has its own)
    concurrency: int = 8
    per_host: int = 4
    redirects: int = 5


@dataclass(frozen=True)
class Record:
    """One source's entry in the store: what was fetched, or why it was not."""

    url: str  # as cited
    key: str  # names its files: a hash of `canonical`
    canonical: str | None = None
    final_url: str | None = None
    redirects: tuple[str, ...] = ()  # the hops before final_url
    status: int | None = None
    content_type: str | None = None
    fetched_at: str | None = None  # UTC, ISO 8601
    sha256: str | None = None  # of the body as read (decoded, up to max_bytes)
    text_sha256: str | None = None  # of the extracted text: what "changed" compares
    etag: str | None = None
    last_modified: str | None = None
    bytes: int = 0
    truncated: bool = False
    text_chars: int = 0
    title: str | None = None
    retracted: str | None = None  # why the page counts as retracted (pagetext), or None
    note: str | None = None  # why a fetched page has no text (a PDF), or None
    error: str | None = None  # why it could not be fetched, or None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def gone(self) -> bool:
        """The server says the page is not there (404) or gone for good (410)."""
        return self.status in GONE

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["redirects"] = list(self.redirects)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        """A record as the store wrote it; ValueError when it is not one."""
        if not isinstance(data.get("url"), str) or not isinstance(data.get("key"), str) \
                or not re.fullmatch(r"[0-9a-f]{24}", data["key"]):
            raise ValueError("not an evidence record")
        names = {f for f in cls.__dataclass_fields__ if f in data}
        values = {n: data[n] for n in names}
        values["redirects"] = tuple(str(u) for u in data.get("redirects") or ())
        return cls(**values)


class Change(StrEnum):
    UNCHANGED = "unchanged"
    CHANGED = "changed"
    GONE = "gone"  # 404 or 410 now
    UNKNOWN = "unknown"  # could not tell: offline, refused, unreachable


@dataclass(frozen=True)
class Refetched:
    change: Change
    record: Record  # the new record (the old one when nothing could be fetched)
    why: str | None = None  # for UNKNOWN: why


class Unfetchable(Exception):
    """Why a URL was not fetched: one line."""


class Refused(Unfetchable):
    """The source policy refuses the URL or the address it resolves to."""


def _size(count: int) -> str:
    """`200 MB`, or `1500 bytes` for a bound that is not a whole number of MB."""
    return f"{count >> 20} MB" if count and not count % (1 << 20) else f"{count} bytes"


def over_pages(limits: Limits) -> str:
    """Why a source was not fetched: the store holds its `max_urls` pages."""
    return f"not fetched: the store's limit of {limits.max_urls} pages is reached"


def over_bytes(limits: Limits) -> str:
    """Why a source was not fetched: the store holds its `total_bytes`."""
    return f"not fetched: the store's limit of {_size(limits.total_bytes)} is reached"


def room(records: Iterable[Record], limits: Limits) -> Limits:
    """What is left of the store's bounds when it holds `records` already: `limits` with its
    pages (the records with a body) taken off `max_urls` and their bytes off `total_bytes`,
    neither below 0. The rest (a page's size, the time of one fetch) is each fetch's own."""
    stored = [r for r in records if r.ok]
    return replace(limits, max_urls=max(0, limits.max_urls - len(stored)),
                   total_bytes=max(0, limits.total_bytes - sum(r.bytes for r in stored)))


def folder(run_dir: Path) -> Path:
    """A run's evidence store."""
    return run_dir / FOLDER


def key(url: str) -> str:
    """The file name (without suffix) of a source: a hash of its canonical URL."""
    return hashlib.sha256((canonical(url) or url).encode("utf-8", "replace")).hexdigest()[:24]


def address_refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why `address` is not a public one, or None. IPv4 inside IPv6 (mapped, 6to4, Teredo,
    NAT64) is judged as the IPv4 address it carries."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour or \
            (address.teredo[1] if address.teredo else None) or \
            (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in NAT64 else None)
        if inner is not None:
            return address_refusal(inner)
    for kind in ("loopback", "unspecified", "link_local", "multicast", "reserved", "private"):
        if getattr(address, f"is_{kind}"):
            return f"{address} is a {kind.replace('_', '-')} address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def refusal(url: str, allow_private: bool = False) -> str | None:
    """Why the fetcher refuses `url` before any lookup, or None: its scheme, credentials in
    it, and (unless `allow_private`) a host that is a private address or name."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        return "malformed URL"
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        return f"{scheme or 'no'} scheme: only http and https are fetched"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "credentials in the URL"
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        return "no host"
    if allow_private:
        return None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        return address_refusal(literal)
    if re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", host):
        return f"{host} is a numeric host council does not guess the address of"
    if "." not in host or host == "localhost" or host.endswith(PRIVATE_SUFFIXES):
        return f"{host} is a private name"
    return None


async def _resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Unfetchable(f"could not resolve {host}: {_line(exc)}") from None
    out: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in out:
            out.append(address)
    return out


@functools.cache
def _checked() -> Callable[[bool], httpcore2.AnyIOBackend]:
    """The network backend of every fetch, made when a run first fetches: httpcore2 and the
    standard library's TLS and HTTP stacks (~50 ms) are not loaded by a command that only
    reads the store (status, report, ask)."""
    import httpcore2

    class _Checked(httpcore2.AnyIOBackend):
        """Resolves a host, keeps the addresses the policy allows, and connects to one of those:
        the address checked is the address connected to."""

        def __init__(self, allow_private: bool) -> None:
            self.allow_private = allow_private

        async def connect_tcp(self, host: str, port: int,
                              timeout: float | None = None,  # noqa: ASYNC109 -- httpcore's API
                              local_address: str | None = None,
                              socket_options: Iterable[Any] | None = None
                              ) -> httpcore2.AsyncNetworkStream:
            addresses = await _resolve(host, port)
            allowed = [a for a in addresses
                       if self.allow_private or address_refusal(a) is None]
            if not allowed:
                why = address_refusal(addresses[0]) if addresses else "no address"
                raise Refused(f"{host} resolves to a private address ({why})")
            failure: Exception = Unfetchable(f"could not connect to {host}")
            for address in allowed[:4]:
                try:
                    return await super().connect_tcp(str(address), port, timeout, local_address,
                                                      socket_options)
                except httpcore2.ConnectError as exc:
                    failure = exc
            raise failure

    return _Checked


class _Budget:
    """The store's bytes: each page takes what it reads, until none is left."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, wanted: int) -> int:
        granted = max(0, min(wanted, self.left))
        self.left -= granted
        return granted


class _Decoder:
    """A body's Content-Encoding undone, bounded: gzip and deflate (the ones council
    asks for), identity, else Unfetchable."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self.inflate = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self.inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header
            self.raw_deflate = encoding == "deflate"
        else:
            raise Unfetchable(f"content encoding {encoding[:40]!r} is not supported")

    def feed(self, chunk: bytes, room: int) -> tuple[bytes, bool]:
        """At most `room` decoded bytes of `chunk`, and whether more was there."""
        if self.inflate is None:
            return chunk[:room], len(chunk) > room
        try:
            out = self.inflate.decompress(chunk, room)
        except zlib.error:
            if not self.raw_deflate:
                raise Unfetchable("the body is not valid gzip") from None
            self.inflate, self.raw_deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
            return self.feed(chunk, room)
        return out, bool(self.inflate.unconsumed_tail)


def _agent() -> str:
    try:
        return f"council/{version('council')} (evidence store)"
    except PackageNotFoundError:
        return "council (evidence store)"


def _line(what: BaseException | str, limit: int = 200) -> str:
    """One line of an error's or a server's text: no control characters, bounded. An error
    with no message is named by its type."""
    text = str(what)
    if isinstance(what, BaseException) and not text:
        text = type(what).__name__
    return " ".join(CONTROL.sub(" ", text).split())[:limit]


def _header(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return _line(v.decode("latin-1"), HEADER_LIMIT) or None
    return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Fetcher:
    """One store's fetches: its connection pools (direct, and one per proxy), its byte
    budget and its limits. `async with Fetcher(...) as f: await f.fetch(url)`."""

    def __init__(self, allow_private: bool = False, limits: Limits | None = None,
                 budget: int | None = None) -> None:
        import urllib.request

        import httpcore2

        self.allow_private = allow_private
        self.limits = limits or Limits()
        # the bytes it may read: the store's room (`room`), else all of limits.total_bytes
        self.budget = _Budget(self.limits.total_bytes if budget is None else budget)
        self.slots = anyio.CapacityLimiter(self.limits.concurrency)
        # Parsing a page costs several times its size in memory: two at a time bound it.
        self.parsing = anyio.CapacityLimiter(2)
        self.hosts: dict[str, anyio.CapacityLimiter] = {}
        self.direct = httpcore2.AsyncConnectionPool(
            max_connections=self.limits.concurrency * 2, retries=0,
            network_backend=_checked()(allow_private))
        self.proxies: dict[str, httpcore2.AsyncHTTPProxy] = {}
        self.proxy_env = urllib.request.getproxies_environment()
        self.agent = _agent()

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.direct.aclose()
            for pool in self.proxies.values():
                await pool.aclose()

    def _pool(self, url: str) -> tuple[httpcore2.AsyncConnectionPool | httpcore2.AsyncHTTPProxy,
                                       bool]:
        """The pool that carries `url`: a proxy's when the environment names one for its
        scheme and NO_PROXY does not exempt its host, else the direct one. True: proxied."""
        import urllib.request

        import httpcore2

        parts = urlsplit(url)
        proxy = self.proxy_env.get(parts.scheme) or self.proxy_env.get("all")
        host = parts.hostname or ""
        # the standard library's NO_PROXY matching (untyped in typeshed)
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        if not proxy or bypass(host, self.proxy_env):
            return self.direct, False
        if proxy not in self.proxies:
            p = urlsplit(proxy if "://" in proxy else "http://" + proxy)
            if p.scheme not in SCHEMES or not p.hostname:
                raise Unfetchable(f"the proxy's scheme {p.scheme!r} is not supported")
            auth = (unquote(p.username), unquote(p.password or "")) if p.username else None
            port = p.port or (443 if p.scheme == "https" else 80)
            self.proxies[proxy] = httpcore2.AsyncHTTPProxy(
                proxy_url=f"{p.scheme}://{p.hostname}:{port}",
                proxy_auth=auth, max_connections=self.limits.concurrency * 2)
        return self.proxies[proxy], True

    async def _through_proxy(self, url: str) -> None:
        """Through a proxy, council cannot pick the address: a name that resolves here to a
        private address is refused; one that does not resolve here is the proxy's."""
        if self.allow_private:
            return
        parts = urlsplit(url)
        try:
            addresses = await _resolve(parts.hostname or "", parts.port or 443)
        except Unfetchable:
            return
        for address in addresses:
            if why := address_refusal(address):
                raise Refused(f"{parts.hostname} resolves to a private address ({why})")

    async def fetch(self, url: str, since: Record | None = None) -> tuple[Record, str]:
        """`url`'s record and text; never raises for the page's sake (the record says why).
        `since`: an earlier record, whose ETag and Last-Modified make the request
        conditional (a 304 comes back as that record, re-dated, with no text)."""
        import httpcore2

        record = Record(url=url, key=key(url), canonical=canonical(url), fetched_at=_now())
        host = (urlsplit(url).hostname or "").lower() if "://" in url else ""
        limiter = self.hosts.setdefault(host, anyio.CapacityLimiter(self.limits.per_host))
        async with self.slots, limiter:
            try:
                with anyio.fail_after(self.limits.url_seconds):
                    return await self._get(record, since)
            except Refused as exc:
                return replace(record, error=f"refused: {exc}"), ""
            except Unfetchable as exc:
                return replace(record, error=str(exc)), ""
            except TimeoutError:
                return replace(record, error=f"timed out after {self.limits.url_seconds:g} s"), ""
            except httpcore2.ProxyError as exc:
                return replace(record, error=f"the proxy refused: {_line(exc)}"), ""
            except (httpcore2.TimeoutException, httpcore2.NetworkError,
                    httpcore2.ProtocolError, httpcore2.UnsupportedProtocol, OSError,
                    ValueError) as exc:
                return replace(record, error=f"could not fetch: {_line(exc)}"), ""

    async def _get(self, record: Record, since: Record | None) -> tuple[Record, str]:
        current = safe_url_string(record.url.strip())
        hops: list[str] = []
        headers = [(b"User-Agent", self.agent.encode()),
                   (b"Accept", b"text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"),
                   (b"Accept-Encoding", b"gzip, deflate")]
        if since is not None and since.ok:
            if since.etag:
                headers.append((b"If-None-Match", since.etag.encode("latin-1", "replace")))
            if since.last_modified:
                headers.append((b"If-Modified-Since",
                                since.last_modified.encode("latin-1", "replace")))
        timeout = {"connect": self.limits.url_seconds, "read": self.limits.url_seconds,
                   "write": self.limits.url_seconds, "pool": self.limits.url_seconds}
        for _ in range(self.limits.redirects + 1):
            if why := refusal(current, self.allow_private):
                raise Refused(why if not hops else f"redirect to {current[:200]}: {why}")
            pool, proxied = self._pool(current)
            if proxied:
                await self._through_proxy(current)
            async with pool.stream("GET", current, headers=headers,
                                   extensions={"timeout": timeout}) as response:
                status = response.status
                location = _header(response.headers, b"location")
                if status in REDIRECTS and location:
                    target = safe_url_string(urljoin(current, location))
                    if urlsplit(current).scheme == "https" and \
                            urlsplit(target).scheme == "http":
                        raise Refused(f"redirect from https down to http ({target[:200]})")
                    hops.append(current)
                    current = target
                    continue
                got = replace(record, final_url=current, redirects=tuple(hops), status=status,
                              content_type=_header(response.headers, b"content-type"),
                              etag=_header(response.headers, b"etag"),
                              last_modified=_header(response.headers, b"last-modified"))
                if status == 304 and since is not None:
                    return replace(since, fetched_at=record.fetched_at, status=since.status,
                                   final_url=since.final_url), ""
                if not 200 <= status < 300:
                    return replace(got, error=f"HTTP {status}"), ""
                encoding = _header(response.headers, b"content-encoding") or ""
                body, truncated = await self._body(response, _Decoder(encoding))
            return await self._stored(replace(got, truncated=truncated), body)
        raise Unfetchable(f"more than {self.limits.redirects} redirects")

    async def _body(self, response: httpcore2.Response,
                    decoder: _Decoder) -> tuple[bytes, bool]:
        """The body, decoded, up to the page's and the store's limits; True if cut off."""
        body = bytearray()
        if self.budget.left <= 0:
            raise Unfetchable(over_bytes(self.limits))
        async for chunk in response.aiter_stream():
            room = min(self.limits.max_bytes - len(body), self.budget.left)
            piece, more = decoder.feed(chunk, room + 1)  # one byte over: is there more?
            granted = self.budget.take(min(len(piece), room))
            body += piece[:granted]
            if more or len(piece) > granted:
                return bytes(body), True
        return bytes(body), False

    async def _stored(self, record: Record, body: bytes) -> tuple[Record, str]:
        page = await anyio.to_thread.run_sync(pagetext.extract, body, record.content_type,
                                              self.limits.max_text, limiter=self.parsing)
        text = page.text
        return replace(record, bytes=len(body), sha256=hashlib.sha256(body).hexdigest(),
                       text_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                       text_chars=len(text), title=_line(page.title, HEADER_LIMIT)
                       if page.title else None, retracted=page.retracted,
                       note=page.note), text


def _write(store: Path, record: Record, text: str | None) -> None:
    """A source's record and (when given) its text, each replaced whole."""
    store.mkdir(parents=True, exist_ok=True)
    if text is not None:
        disk.atomic_write(store / f"{record.key}.txt", text, durable=False)
    disk.atomic_write(store / f"{record.key}.json",
                      json.dumps(record.to_dict(), indent=1) + "\n", durable=False)


def _write_index(store: Path, records: Sequence[Record], limits: Limits) -> None:
    store.mkdir(parents=True, exist_ok=True)
    data = {"schema_version": SCHEMA_VERSION, "written_at": _now(),
            "limits": asdict(limits), "sources": [r.to_dict() for r in records]}
    disk.atomic_write(store / INDEX, json.dumps(data, indent=1) + "\n")


def write_index(store: Path, records: Sequence[Record], limits: Limits | None = None) -> None:
    """The store's index.json, replaced whole: for a caller that adds records of its own
    (a URL the source policy refused) or joins two fetches' records."""
    _write_index(store, records, limits or Limits())


def _not_fetched(url: str, why: str) -> Record:
    return Record(url=url, key=key(url), canonical=canonical(url), error=why)


async def fetch_all(urls: Iterable[str], store: Path, *, allow_private: bool = False,
                    limits: Limits | None = None) -> list[Record]:
    """Fetch each source once (by canonical URL, first spelling kept) into `store`
    (research/<id>/evidence), and write its index; the records, in the order first cited.
    `limits` bound the store, not this call: the pages it holds already (an earlier step's
    fetch, a resumed run's) count against them. A source is fetched once per store: one it
    holds a record of (a page, or why not) is not asked again, and that record is returned;
    the index keeps every record, the earlier ones first.
    Offline (COUNCIL_OFFLINE): nothing is fetched or written, and every record says so."""
    limits = limits or Limits()
    order: list[str] = []
    seen: set[str] = set()
    for url in urls:
        if (name := canonical(url) or url) not in seen:
            seen.add(name)
            order.append(url)
    if offline():
        return [_not_fetched(u, f"offline ({OFFLINE_ENV}=1): not fetched") for u in order]
    held, left = await anyio.to_thread.run_sync(_holding, store, limits)
    have = {r.canonical or r.url: r for r in held}
    results: dict[int, Record] = {}
    todo: list[tuple[int, str]] = []
    for i, url in enumerate(order):
        if (old := have.get(canonical(url) or url)) is not None:
            results[i] = old
        elif left.total_bytes <= 0:
            results[i] = _not_fetched(url, over_bytes(limits))
        elif len(todo) >= left.max_urls:
            results[i] = _not_fetched(url, over_pages(limits))
        else:
            todo.append((i, url))

    async with Fetcher(allow_private, limits, budget=left.total_bytes) as fetcher:
        async def one(i: int, url: str) -> None:
            record, text = await fetcher.fetch(url)
            await anyio.to_thread.run_sync(_write, store, record, text if record.ok else None)
            results[i] = record

        with anyio.move_on_after(limits.total_seconds):
            async with anyio.create_task_group() as tg:
                for i, url in todo:
                    tg.start_soon(one, i, url)
    late = f"not fetched: the store's time limit of {limits.total_seconds:g} s ran out"
    records = [results.get(i) or _not_fetched(u, late) for i, u in enumerate(order)]
    added = [r for r in records if (r.canonical or r.url) not in have]
    await anyio.to_thread.run_sync(_write_index, store, [*held, *added], limits)
    return records


def _holding(store: Path, limits: Limits) -> tuple[list[Record], Limits]:
    """The store's index, and the room left in it."""
    held = load_index(store)
    return held, room(held, limits)


async def refetch_all(records: Iterable[Record], store: Path, *, allow_private: bool = False,
                      limits: Limits | None = None) -> dict[str, Refetched]:
    """For `--since`: each earlier record fetched again, conditionally (If-None-Match /
    If-Modified-Since, else its text's hash compared), and whether its page is unchanged,
    changed or gone, by URL. A changed page's new record and text replace the old ones; an
    unchanged one is re-dated; a source that cannot be reached now keeps its record
    (UNKNOWN, with why). The store's index lists each as it came back, so what the store
    holds is read from the index alone. Offline: every one is UNKNOWN and nothing is
    written."""
    limits = limits or Limits()
    old = list(records)[:limits.max_urls]
    if offline():
        why = f"offline ({OFFLINE_ENV}=1)"
        return {r.url: Refetched(Change.UNKNOWN, r, why) for r in old}
    out: dict[str, Refetched] = {}
    async with Fetcher(allow_private, limits) as fetcher:
        async def one(before: Record) -> None:
            after, text = await fetcher.fetch(before.url, since=before)
            out[before.url] = judged = _judge(before, after)
            if judged.change is not Change.UNKNOWN:
                keep = text if judged.change is Change.CHANGED and after.ok else None
                await anyio.to_thread.run_sync(_write, store, judged.record, keep)

        with anyio.move_on_after(limits.total_seconds):
            async with anyio.create_task_group() as tg:
                for before in old:
                    tg.start_soon(one, before)
    late = f"the store's time limit of {limits.total_seconds:g} s ran out"
    result = {r.url: out.get(r.url) or Refetched(Change.UNKNOWN, r, late) for r in old}
    index = {r.canonical or r.url: r for r in load_index(store)}
    index.update({x.record.canonical or x.record.url: x.record for x in result.values()})
    await anyio.to_thread.run_sync(_write_index, store, list(index.values()), limits)
    return result


def _judge(before: Record, after: Record) -> Refetched:
    if after.gone:
        return Refetched(Change.GONE, after)
    if not after.ok:
        return Refetched(Change.UNKNOWN, before, after.error)
    # a 304 came back as the earlier record, re-dated: its hashes are the earlier ones
    same = after.text_sha256 == before.text_sha256 if before.text_chars or after.text_chars \
        else after.sha256 == before.sha256
    return Refetched(Change.UNCHANGED if same and before.ok else Change.CHANGED, after)


def load_index(store: Path) -> list[Record]:
    """The records of a store's index.json (none when there is none, or it is unreadable):
    read bounded, no link followed."""
    try:
        data = agentfs.read_json(store / INDEX)
    except (OSError, ValueError):
        return []
    sources = data.get("sources") if isinstance(data, dict) else None
    out = []
    for item in sources if isinstance(sources, list) else []:
        with contextlib.suppress(ValueError, TypeError):
            out.append(Record.from_dict(item))
    return out


def load_record(store: Path, url: str) -> Record | None:
    """A source's current record (refetch_all may have replaced its index entry's)."""
    try:
        data = agentfs.read_json(store / f"{key(url)}.json")
        return Record.from_dict(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):
        return None


def load_text(store: Path, record: Record, limit: int = 4 << 20) -> str | None:
    """A source's stored text (at most `limit` bytes), or None when none was stored."""
    try:
        return agentfs.read_text(store / f"{record.key}.txt", limit)
    except OSError:
        return None


def texts(store: Path, records: Iterable[Record], limit: int = 4 << 20) -> dict[str, str]:
    """canonical URL → stored text, for every record that has one: what integrity.check
    reads."""
    out: dict[str, str] = {}
    for record in records:
        if record.ok and (text := load_text(store, record, limit)) is not None:
            out[record.canonical or record.url] = text
    return out

