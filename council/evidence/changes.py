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
`why` says so), and `changed` is null: not known."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from council import prompts
from council.evidence import claimcheck
from council.evidence.claimcheck import KEY  # changes.json's key too
from council.graph import counted
from council.store import agentfs
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
            sources_before: Sequence[str], sources_after: Sequence[str]) -> dict[str, Any]:
    """changes.json: the claims new, flipped (claim, before, after, evidence) and retracted,
    the count unchanged; the sources new and gone; whether anything changed. With no claims
    listed now, the claims are not compared (the module's docstring): `compared` is false,
    the claim lists are empty, and `changed` is None."""
    old, cur = set(sources_before), set(sources_after)
    sources = {"new": sorted(cur - old), "gone": sorted(old - cur)}
    if not after:
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
    changed = bool(new or flipped or retracted or sources["new"] or sources["gone"])
    return {"since": since, KEY: claims, "sources": sources, "compared": True,
            "changed": changed}


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
    flipped", or what changed."""
    claims, sources = changes[KEY], changes["sources"]
    again = claims["unchanged"] + len(claims["flipped"])
    if not compared(changes):
        return (f"could not compare with {changes['since']}: {changes.get('why') or NO_CLAIMS}"
                f"; sources {len(sources['new'])} new, {len(sources['gone'])} gone")
    if not changes["changed"]:
        return (f"no change since {changes['since']}: {counted(again, 'claim')} verified "
                "again, 0 flipped")
    return (f"changed since {changes['since']}: {len(claims['flipped'])} flipped, "
            f"{len(claims['new'])} new, {len(claims['retracted'])} retracted, "
            f"{claims['unchanged']} unchanged; sources {len(sources['new'])} new, "
            f"{len(sources['gone'])} gone")


def markdown(changes: Mapping[str, Any]) -> str:
    """changes.md, and the final report's opening section "What changed since ID". The claims
    are model-written text: quoted as list items, one line each."""
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
    return "\n".join(lines) + "\n"


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
    claims = claimcheck.listed(claimcheck.load(root / CLAIMS))
    try:
        ledger = agentfs.read_json(root / "sources.json")
    except (OSError, ValueError):
        ledger = None
    return ([c for c in claims if isinstance(c, dict)],
            cited(ledger if isinstance(ledger, dict) else None))
