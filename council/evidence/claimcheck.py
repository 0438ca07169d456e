"""Claims and verdicts: the data of the verification phase, checked without any model.

One agent extracts the reports' load-bearing claims into claims.json; each claim is then
checked by an agent of a *different vendor* than the one that made it, which answers with a
verdict and an evidence quote. These functions validate both files and split the work; the
phases that ask for them are phases/claims.py (the recheck too) and phases/verification.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council.domains import Policy
from council.evidence.coverage import ID
from council.evidence.sources import outside
from council.store import agentfs

VERDICTS = ("SUPPORTED", "UNSUPPORTED", "OVERSTATED", "CONTRADICTED")
MAX_CLAIMS = 40
KEY = "claims"  # claims.json's (and an extractor's answer's) list of claims
# A claim whose cited sources are all outside the run's source policy (domains.py).
OUTSIDE = "outside_policy"


def listed(data: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The claims a claims.json lists: none when there is no file, or it is degraded."""
    found = (data or {}).get(KEY)
    return found if isinstance(found, list) else []


@dataclass(frozen=True)
class Claim:
    id: str
    agent: str
    claim: str
    sources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "agent": self.agent, "claim": self.claim,
                "sources": list(self.sources)}


@dataclass(frozen=True)
class Verdict:
    verdict: str
    evidence: str
    verifier: str


def validate_claims(data: Any, agents: Sequence[str]) -> list[Claim]:
    """The claims of an extractor's output, or ValueError saying what is wrong with it."""
    if not isinstance(data, Mapping) or not isinstance(data.get("claims"), list):
        raise ValueError('expected an object {"claims": [...]}')
    raw = data["claims"]
    if not raw:
        raise ValueError("the claims list is empty")
    if len(raw) > MAX_CLAIMS:
        raise ValueError(f"more than {MAX_CLAIMS} claims: keep the load-bearing ones")
    claims, seen = [], set()
    for i, item in enumerate(raw):
        where = f"claims[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{where} is not an object")
        cid, agent, text = item.get("id"), item.get("agent"), item.get("claim")
        sources = item.get("sources", [])
        if not isinstance(cid, str) or not ID.fullmatch(cid) or cid in seen:
            raise ValueError(f"{where}: 'id' must be unique, 1 to 16 letters, digits, '_', "
                             "'.' or '-'")
        if agent not in agents:
            raise ValueError(f"{where}: 'agent' must be one of {', '.join(agents)}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: 'claim' must be a non-empty string")
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise ValueError(f"{where}: 'sources' must be a list of URLs")
        seen.add(cid)
        claims.append(Claim(cid, str(agent), text.strip(), tuple(sources)))
    return claims


def assign(claims: Sequence[Claim], clis: Mapping[str, str]) -> dict[str, list[Claim]]:
    """Split claims among verifiers (seat → its vendor, runoptions.Seat.vendor): each claim
    goes to a seat of another vendor than its author's, the least loaded first; failing that,
    another seat; failing that, to nobody (it stays unverified)."""
    load: dict[str, list[Claim]] = {seat: [] for seat in clis}
    for claim in claims:
        author_cli = clis.get(claim.agent)
        candidates = [s for s in clis if clis[s] != author_cli] or \
            [s for s in clis if s != claim.agent]
        if candidates:
            chosen = min(candidates, key=lambda s: (len(load[s]), s))
            load[chosen].append(claim)
    return {seat: batch for seat, batch in load.items() if batch}


def validate_verdicts(data: Any, ids: Sequence[str], verifier: str) -> dict[str, Verdict]:
    """A verifier's verdicts for the claims it was given, or ValueError."""
    if not isinstance(data, Mapping) or not isinstance(data.get("verdicts"), list):
        raise ValueError('expected an object {"verdicts": [...]}')
    out: dict[str, Verdict] = {}
    for i, item in enumerate(data["verdicts"]):
        where = f"verdicts[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{where} is not an object")
        cid, verdict = item.get("id"), item.get("verdict")
        if cid not in ids:
            raise ValueError(f"{where}: unknown claim id {cid!r}")
        if verdict not in VERDICTS:
            raise ValueError(f"{where}: verdict must be one of {', '.join(VERDICTS)}")
        evidence = item.get("evidence", "")
        out[str(cid)] = Verdict(str(verdict), evidence if isinstance(evidence, str) else "",
                                verifier)
    return out


def mark_outside(data: dict[str, Any], policy: Policy) -> dict[str, Any]:
    """claims.json's claims, each that cites sources and only ones outside the run's source
    policy marked `outside_policy: true` (a claim with no source rests on none, and is left
    to the verdicts). Marked on each write of the file, so the verification's and the
    recheck's rewrites keep it."""
    for claim in listed(data):
        cited = [str(u) for u in claim.get("sources") or []]
        claim.pop(OUTSIDE, None)
        if policy and cited and all(outside(u, policy) for u in cited):
            claim[OUTSIDE] = True
    return data


def resting_outside(data: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The claims marked as resting only on sources outside the source policy."""
    return [c for c in listed(data) if c.get(OUTSIDE) is True]


def tally(claims: Sequence[Claim], verdicts: Mapping[str, Verdict]) -> dict[str, int]:
    counts = dict.fromkeys((*VERDICTS, "UNVERIFIED"), 0)
    for claim in claims:
        counts[verdicts[claim.id].verdict if claim.id in verdicts else "UNVERIFIED"] += 1
    return counts


def load(path: Path) -> dict[str, Any] | None:
    """A run's claims.json (claims with verdicts, or a degraded status), if written."""
    try:
        data = agentfs.read_json(path)
    except (FileNotFoundError, agentfs.UnsafeFile):
        return None
    return data if isinstance(data, dict) else None


def summary(data: Mapping[str, Any]) -> str:
    """`1 supported, 1 contradicted`, or why the claims were not verified."""
    if data.get("status") == "degraded":
        return "not verified (verification degraded)"
    if data.get("status") == "extracted":
        return f"{len(data.get('claims', []))} listed, not verified"
    return ", ".join(f"{n} {v.lower()}" for v, n in data.get("tally", {}).items() if n)


def coverage_summary(data: Mapping[str, Any]) -> str:
    """`3 of 5 sub-questions answered, 1 partly; 4 of 6 dimensions covered`."""
    questions = data.get("questions") or []
    dims = data.get("dimensions") or []
    answered = sum(1 for q in questions if q.get("status") == "answered")
    partly = sum(1 for q in questions if q.get("status") == "partial")
    covered = sum(1 for d in dims if d.get("covered"))
    return (f"{answered} of {len(questions)} sub-questions answered, {partly} partly; "
            f"{covered} of {len(dims)} dimensions covered")


def coverage_change(data: Mapping[str, Any] | None) -> str | None:
    """Coverage before and after the gap fill, when it was judged twice (else None)."""
    if not data or not isinstance(data.get("before"), Mapping) or "questions" not in data:
        return None
    return (f"Coverage before the gap fill: {coverage_summary(data['before'])}. "
            f"After it: {coverage_summary(data)}.")
