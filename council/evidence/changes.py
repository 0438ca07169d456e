"""What changed since an earlier run (`council run --since ID`, issue 35): the earlier run's
claims, verdicts and sources against this run's, as data. Pure: the synthesis phase reads both
runs' claims.json and sources.json and writes what `compare` returns (changes.json,
changes.md); the command line prints `headline` and exits by `changed`.

How a claim of this run is matched to one of the earlier run (the rule, in this order):
1. by id: a --since run's claims judgement is told the earlier claims with their ids and asked
   to keep an earlier claim's id when it lists the same claim again (phases/claims.py), so an
   id this run shares with the earlier run is the same claim;
2. else by text: the same claim after `normalise` (case, whitespace, quotes and the final
   full stop do not count).
A matched claim whose verdict differs is `flipped`, else `unchanged`; an earlier claim nothing
matches is `retracted` (the new reports no longer make it); a claim of this run that matches
none is `new`. Sources are the URLs the agents' reports cite (sources.json): `new` are cited
now and were not before, `gone` were cited before and are not now (no longer cited; council
does not probe whether they are reachable). `changed` is true when any of these lists is not
empty.

A claims judgement that lists no claims (it failed, or answered nothing valid: a valid one
lists at least one) has not said that the earlier claims are gone: calling them retracted
would report a change on every such run. The comparison is then not made (`compared` false,
`why` says so), and `changed` is null: not known.

The pages themselves (issue 44): the earlier run's cited pages that its evidence store holds
are fetched again, conditionally, before this run's claims are checked
(phases/evidence.py `refetch_earlier`), and what came back is recorded as `Page`s in
evidence/since.json. `compare` adds to `sources`: the pages `changed` (their text is not the
stored one), `disappeared` (404 or 410 now) and `unreachable` (could not be fetched again:
an error, a timeout, the source policy), each beside the claims that cite it, with their
verdicts then and now and whether they flipped; the count `unchanged`; and `not_checked`
(why and how many, when nothing was fetched again: offline). A page that changed or
disappeared makes `changed` true; one that could not be reached changes nothing."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from council import prompts
from council.evidence import claimcheck, fetch
from council.evidence.claimcheck import KEY  # changes.json's key too
from council.evidence.fetch import Change
from council.evidence.sources import canonical
from council.graph import counted
from council.store import agentfs, disk
from council.store.workspace import CLAIMS

CHANGES_JSON = "changes.json"
CHANGES_MD = "changes.md"
HEADING = "What changed since"
# Why the claims could not be compared: this run's claims judgement listed none.
NO_CLAIMS = "this run's claims judgement listed no claims (it failed or was degraded)"
# A claim of model-written text, as the earlier run's prompt quotes it: bounded.
MAX_CLAIM_CHARS = 600
MAX_SOURCES = 60
MAX_URL_CHARS = 300  # a source as the earlier run's prompt quotes it
PAGES_JSON = "since.json"  # in the run's evidence folder: the earlier cited pages, fetched again
OFFLINE = "offline"  # why the earlier cited pages were not fetched again
NOT_FETCHED = "not fetched again in this run"  # since.json is missing, and the run was online
NAMED = 3  # pages the headline names of each kind; the rest are counted
HEADLINE_URL_CHARS = 120


@dataclass(frozen=True)
class Page:
    """One cited page of the earlier run, fetched again in this one (fetch.refetch_all): how
    it came back, its HTTP status, and why it could not be told (an error, the policy)."""

    url: str
    change: Change
    status: int | None = None
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Page:
        """A page as since.json holds it; ValueError when it is not one."""
        status = data.get("status")
        why = data.get("why")
        if not isinstance(data.get("url"), str):
            raise ValueError("not a page")
        return cls(url=data["url"], change=Change(str(data.get("change"))),
                   status=status if isinstance(status, int) else None,
                   why=why if isinstance(why, str) else None)


def normalise(text: str) -> str:
    """A claim's text for matching: NFKC, case-folded, quotes unified, whitespace collapsed,
    without a final full stop."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[\u2018\u2019`]", "'", re.sub(r"[\u201c\u201d]", '"', text))
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip()


def _verdict(claim: Mapping[str, Any]) -> str:
    return str(claim.get("verdict") or "UNVERIFIED")


def match(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
          ) -> dict[int, int]:
    """index in `after` → index in `before` of the claim it is (the module's rule), each
    earlier claim matched at most once."""
    by_id = {str(c.get("id")): i for i, c in enumerate(before) if c.get("id")}
    by_text: dict[str, int] = {}
    for i, c in enumerate(before):
        by_text.setdefault(normalise(str(c.get("claim", ""))), i)
    found: dict[int, int] = {}
    taken: set[int] = set()
    for j, claim in enumerate(after):  # ids first, so a reworded, carried claim keeps its id
        at = by_id.get(str(claim.get("id")))
        if at is not None and at not in taken:
            found[j] = at
            taken.add(at)
    for j, claim in enumerate(after):
        if j in found:
            continue
        at = by_text.get(normalise(str(claim.get("claim", ""))))
        if at is not None and at not in taken:
            found[j] = at
            taken.add(at)
    return found


def compare(since: str, before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
            sources_before: Sequence[str], sources_after: Sequence[str],
            pages: Sequence[Page] = (), not_checked: tuple[str, int] | None = None
            ) -> dict[str, Any]:
    """changes.json: the claims new, flipped (claim, before, after, evidence) and retracted,
    the count unchanged; the sources new and gone (by citation), and the earlier cited
    `pages` fetched again (`cited_pages`), or why and how many were `not_checked`; whether
    anything changed. With no claims listed now, the claims are not compared (the module's
    docstring): `compared` is false, the claim lists are empty, and `changed` is None."""
    old, cur = set(sources_before), set(sources_after)
    sources: dict[str, Any] = {"new": sorted(cur - old), "gone": sorted(old - cur)}
    if not after:
        sources.update(cited_pages(pages, before, [], {}, not_checked))
        return {"since": since, KEY: {"new": [], "flipped": [], "retracted": [], "unchanged": 0},
                "sources": sources, "compared": False, "why": NO_CLAIMS, "changed": None}
    found = match(before, after)
    new = [str(c.get("claim", "")) for j, c in enumerate(after) if j not in found]
    flipped, unchanged = [], 0
    for j, i in sorted(found.items()):
        then, now = _verdict(before[i]), _verdict(after[j])
        if then == now:
            unchanged += 1
        else:
            flipped.append({"claim": str(after[j].get("claim", "")), "id": after[j].get("id"),
                            "before": then, "after": now,
                            "evidence": str(after[j].get("evidence") or "")})
    retracted = [str(c.get("claim", "")) for i, c in enumerate(before)
                 if i not in set(found.values())]
    claims = {"new": new, "flipped": flipped, "retracted": retracted, "unchanged": unchanged}
    sources.update(cited_pages(pages, before, after, found, not_checked))
    changed = bool(new or flipped or retracted or sources["new"] or sources["gone"]
                   or sources["changed"] or sources["disappeared"])
    return {"since": since, KEY: claims, "sources": sources, "compared": True,
            "changed": changed}


def cited_pages(pages: Sequence[Page], before: Sequence[Mapping[str, Any]],
                after: Sequence[Mapping[str, Any]], found: Mapping[int, int],
                not_checked: tuple[str, int] | None) -> dict[str, Any]:
    """What changes.json's `sources` says of the pages fetched again: `changed`,
    `disappeared` and `unreachable`, each page with the claims citing it (`citing`), the
    count `unchanged`, and `not_checked` ({why, count}, or None)."""
    out: dict[str, Any] = {"changed": [], "disappeared": [], "unreachable": [],
                           "unchanged": 0, "not_checked": None}
    if not_checked is not None and not_checked[1]:
        out["not_checked"] = {"why": not_checked[0], "count": not_checked[1]}
    for page in pages:
        if page.change is Change.UNCHANGED:
            out["unchanged"] += 1
            continue
        entry: dict[str, Any] = {"url": page.url}
        if page.change is Change.GONE:
            entry["status"] = page.status
        elif page.change is Change.UNKNOWN:
            entry["why"] = page.why or "could not be fetched"
        entry[KEY] = citing(page.url, before, after, found)
        kind = {Change.CHANGED: "changed", Change.GONE: "disappeared"}.get(page.change,
                                                                          "unreachable")
        out[kind].append(entry)
    return out


def citing(url: str, before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
           found: Mapping[int, int]) -> list[dict[str, Any]]:
    """The claims that cite `url`, then or now (by canonical URL): each with its id, its text
    (now's, else then's), its verdicts then and now (None: not made then, or no longer made)
    and whether it flipped."""
    name = canonical(url) or url

    def cites(claim: Mapping[str, Any] | None) -> bool:
        return claim is not None and any((canonical(str(s)) or str(s)) == name
                                         for s in claim.get("sources") or [])

    pairs: list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = [
        (before[found[j]] if j in found else None, c) for j, c in enumerate(after)]
    matched = set(found.values())
    pairs += [(c, None) for i, c in enumerate(before) if i not in matched]
    out = []
    for then, now in pairs:
        if not (cites(then) or cites(now)):
            continue
        shown = now if now is not None else then or {}
        was = _verdict(then) if then is not None else None
        is_ = _verdict(now) if now is not None else None
        out.append({"id": shown.get("id"), "claim": str(shown.get("claim", "")),
                    "before": was, "after": is_,
                    "flipped": was is not None and is_ is not None and was != is_})
    return out


def compared(changes: Mapping[str, Any]) -> bool:
    """Whether the claims were compared (a changes.json written before `compared` existed
    always compared them)."""
    return changes.get("compared", True) is not False


def cited(ledger: Mapping[str, Any] | None) -> list[str]:
    """The URLs a sources.json lists as cited by an agent's own report (not the synthesis
    alone: the synthesis of a --since run carries the earlier report's citations)."""
    out = []
    for entry in (ledger or {}).get("sources") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("url"), str) \
                and not entry.get("synthesis_only"):
            out.append(entry["url"])
    return out


def headline(changes: Mapping[str, Any]) -> str:
    """The one line `council run` prints: "no change since ID: 12 claims verified again, 0
    flipped", or what changed; then the cited pages that changed, disappeared or could not
    be reached, by URL (`pages_said`)."""
    claims, sources = changes[KEY], changes["sources"]
    again = claims["unchanged"] + len(claims["flipped"])
    if not compared(changes):
        said = (f"could not compare with {changes['since']}: "
                f"{changes.get('why') or NO_CLAIMS}; sources {len(sources['new'])} new, "
                f"{len(sources['gone'])} gone")
    elif not changes["changed"]:
        said = (f"no change since {changes['since']}: {counted(again, 'claim')} verified "
                "again, 0 flipped")
    else:
        said = (f"changed since {changes['since']}: {len(claims['flipped'])} flipped, "
                f"{len(claims['new'])} new, {len(claims['retracted'])} retracted, "
                f"{claims['unchanged']} unchanged; sources {len(sources['new'])} new, "
                f"{len(sources['gone'])} gone")
    pages = pages_said(sources)
    return f"{said}; {pages}" if pages else said


def pages_said(sources: Mapping[str, Any]) -> str:
    """The headline's words for the cited pages fetched again: "cited pages: 1 changed
    (URL), 1 gone (URL, HTTP 404), 3 unchanged", or why they were not checked; "" when there
    were none to fetch again (a changes.json from before issue 44 has none)."""
    parts = []
    for kind, word in (("changed", "changed"), ("disappeared", "gone"),
                       ("unreachable", "not reachable")):
        listed = [p for p in sources.get(kind) or [] if isinstance(p, Mapping)]
        if listed:
            named = [_line(str(p.get("url", "")), HEADLINE_URL_CHARS)
                     + (f", HTTP {p['status']}" if p.get("status") else "")
                     for p in listed[:NAMED]]
            more = f" and {len(listed) - NAMED} more" if len(listed) > NAMED else ""
            parts.append(f"{len(listed)} {word} ({'; '.join(named)}{more})")
    if sources.get("unchanged"):
        parts.append(f"{sources['unchanged']} unchanged")
    unchecked = sources.get("not_checked")
    if isinstance(unchecked, Mapping) and unchecked.get("count"):
        parts.append(f"{counted(int(unchecked['count']), 'page')} not checked "
                     f"({_line(str(unchecked.get('why')), 80)})")
    return f"cited pages: {', '.join(parts)}" if parts else ""


def markdown(changes: Mapping[str, Any]) -> str:
    """changes.md, and the final report's opening section "What changed since ID". The claims
    are model-written text, the URLs an agent's: quoted as list items, one line each."""
    claims, sources = changes[KEY], changes["sources"]
    lines = [f"## {HEADING} {changes['since']}", "", headline(changes) + "."]

    def listed(title: str, items: Sequence[str]) -> None:
        if items:
            lines.extend(["", f"{title}:", ""])
            lines.extend(f"- {_line(item)}" for item in items)

    if claims["flipped"]:
        lines.extend(["", "Claims whose verdict changed:", ""])
        lines.extend(f"- {f['before']} → {f['after']}: {_line(f['claim'])}"
                     + (f" (evidence: {_line(f['evidence'])})" if f["evidence"] else "")
                     for f in claims["flipped"])
    listed("New claims", claims["new"])
    listed("Claims no longer made", claims["retracted"])
    listed("Sources cited for the first time", sources["new"])
    listed("Sources no longer cited", sources["gone"])
    for kind, title in (("changed", "Cited pages whose text changed"),
                        ("disappeared", "Cited pages gone (HTTP 404 or 410)"),
                        ("unreachable", "Cited pages that could not be fetched again")):
        pages = [p for p in sources.get(kind) or [] if isinstance(p, Mapping)]
        if pages:
            lines.extend(["", f"{title}:", ""])
            for page in pages:
                lines.extend(_page_lines(page))
    return "\n".join(lines) + "\n"


def _page_lines(page: Mapping[str, Any]) -> list[str]:
    """A page fetched again, as changes.md lists it: its URL (with its status, or why it
    could not be fetched), then each claim citing it, indented, with its verdicts."""
    why = f" (HTTP {page['status']})" if page.get("status") else \
        f" ({_line(str(page['why']), 200)})" if page.get("why") else ""
    out = [f"- {_line(str(page.get('url', '')), MAX_URL_CHARS)}{why}"]
    claims = [c for c in page.get(KEY) or [] if isinstance(c, Mapping)]
    if not claims:
        out.append("  - cited by no claim")
    for c in claims:
        then, now = c.get("before"), c.get("after")
        verdict = (f"{then} → {now}, flipped" if c.get("flipped") else
                   f"{now}, as before" if then and now else
                   f"{now}, new" if now else f"{then}, no longer made")
        out.append(f"  - {_line(str(c.get('id') or '?'), 64)} [{_line(verdict, 80)}]: "
                   f"{_line(str(c.get('claim', '')))}")
    return out


def _line(text: str, limit: int = MAX_CLAIM_CHARS) -> str:
    """Model-written text as one line (of changes.md, of a --since run's prompt), cut at
    `limit`: every run of whitespace and control characters (a newline, `\\r`, U+2028, ESC,
    BEL…) is one space, and format characters (zero-width, bidi overrides) are dropped, so
    it can neither start a line of its own nor hide what it says."""
    kept = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text
                   if unicodedata.category(c) not in ("Cf", "Cs"))
    return re.sub(r"\s+", " ", kept).strip()[:limit]


def seed(since: str, claims: Sequence[Mapping[str, Any]], urls: Sequence[str]
         ) -> dict[str, Any]:
    """What a --since run's prompts are told of the earlier run (earlier.md.j2), bounded and
    folded: its claims (id, verdict, text cut at MAX_CLAIM_CHARS, five sources), the first
    MAX_SOURCES sources, each one line (`_line`), and the fence that marks the block's two
    ends: a digest of the data it holds, so no piece of it can write the end line itself."""
    data: dict[str, Any] = {
        "id": _line(since, 64),
        KEY: [{"id": _line(str(c.get("id", "")), 64), "verdict": _line(_verdict(c), 32),
               "claim": _line(str(c.get("claim", ""))),
               "sources": [_line(str(s), MAX_URL_CHARS) for s in (c.get("sources") or [])][:5]}
              for c in claims],
        "sources": [_line(str(u), MAX_URL_CHARS) for u in urls][:MAX_SOURCES]}
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "replace")
    return {**data, "fence": prompts.fence(blob)}


def load(root: Path) -> dict[str, Any] | None:
    """A run's changes.json (written by council itself), or None: not a --since run, or it
    did not get that far."""
    try:
        data = agentfs.read_json(root / CHANGES_JSON)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "changed" in data else None


def recorded(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """A finished run's claims with their verdicts (claims.json) and the sources its agents
    cited (sources.json): what a --since run is seeded with and compared against. Both
    files are council's own; missing or unreadable ones count as empty."""
    return _claims(root), cited(_ledger(root))


def _claims(root: Path) -> list[dict[str, Any]]:
    return [c for c in claimcheck.listed(claimcheck.load(root / CLAIMS)) if isinstance(c, dict)]


def _ledger(root: Path) -> dict[str, Any] | None:
    try:
        ledger = agentfs.read_json(root / "sources.json")
    except (OSError, ValueError):
        return None
    return ledger if isinstance(ledger, dict) else None


def refetchable(root: Path, limit: int | None = None) -> list[fetch.Record]:
    """The pages of a finished run's evidence store that it cites (sources.json, the final
    report's citations included, and its claims' sources) and that it had fetched: what a
    --since run fetches again. A record whose file name is not its URL's key is left out
    (council did not write it so)."""
    ledger = _ledger(root) or {}
    urls = [str(e["url"]) for e in ledger.get("sources") or []
            if isinstance(e, Mapping) and isinstance(e.get("url"), str)]
    urls += [str(u) for c in _claims(root) for u in c.get("sources") or []]
    names = {canonical(u) or u for u in urls}
    out = [r for r in fetch.load_index(fetch.folder(root))
           if r.ok and r.key == fetch.key(r.url) and (r.canonical or r.url) in names]
    return out[:limit] if limit is not None else out


def write_pages(store: Path, since: str, pages: Iterable[Page]) -> None:
    """evidence/since.json: the earlier run's cited pages as they came back, fetched again."""
    data = {"since": since, "pages": [p.to_dict() for p in pages]}
    disk.atomic_write(store / PAGES_JSON, json.dumps(data, indent=1) + "\n", durable=False)


def load_pages(store: Path) -> list[Page] | None:
    """What since.json says of the earlier run's cited pages, or None when it was not written
    (offline, or the step did not run)."""
    try:
        data = agentfs.read_json(store / PAGES_JSON)
    except (OSError, ValueError):
        return None
    items = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if isinstance(item, Mapping):
            try:
                out.append(Page.from_dict(item))
            except ValueError:
                continue
    return out
