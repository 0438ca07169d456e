"""The source ledger: every URL the reports cite, canonicalised and de-duplicated, with who
cited it where. Deterministic, no model involved: it is what the final report's Sources
section is built from, and how a source that vanished between phases is noticed."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, safe_url_string

from council import graph
from council.domains import DENIED, NOT_ALLOWED, Policy
from council.store import disk

# Markdown links and autolinks first, then bare URLs; a URL ends at whitespace, a quote or
# an angle bracket, and loses trailing punctuation that belongs to the sentence. A link's
# text is bounded (one line, 1000 characters): unbounded, a pasted page full of `[` and no
# `]` made every `[` scan to the end of the text, quadratic in its size.
BARE_URL = r"(?<![<\w])((?:https?|ftp)://[^\s<>\"'`\]]+|www\.[^\s<>\"'`\]]+)"
LINK = re.compile(r"\[[^\]\n]{0,1000}\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]{0,1000}\")?\s*\)|"
                  r"<(https?://[^>\s]+)>|" + BARE_URL)
TRAILING = ".,;:!?)]}*_'\""
TRACKING = re.compile(r"^(utm_[a-z]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_hsenc|_hsmi|"
                      r"igshid|yclid|ref_src)$", re.I)
DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


def extract(text: str) -> list[str]:
    """The URLs cited in a markdown text, in order, as written."""
    found = []
    for match in LINK.finditer(text):
        url = next(g for g in match.groups() if g)
        found.append(_trim(url) if match.group(3) else url)
    return found


BARE = re.compile(BARE_URL)


def bare_urls(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, URL) of each bare URL in a plain text (not markdown: its links are
    already parsed), without the sentence's trailing punctuation."""
    for match in BARE.finditer(text):
        url = _trim(match.group(1))
        yield match.start(1), match.start(1) + len(url), url


def _trim(url: str) -> str:
    """A bare URL loses trailing punctuation that belongs to the sentence."""
    while url and url[-1] in TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


@functools.lru_cache(maxsize=1 << 15)
def canonical(url: str) -> str | None:
    """One spelling per resource, or None when the link is malformed. w3lib does the URL
    standard's part (query order, percent-encoding, IDNA hosts as punycode, no fragment);
    council adds what makes two spellings one source to a reader: no tracking parameters,
    no `www.`, no default port and no trailing slash."""
    if url.startswith("www."):
        url = "https://" + url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or "." not in host or " " in url:
        return None
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if not TRACKING.match(k)])
    try:
        parts = urlsplit(canonicalize_url(urlunsplit((scheme, parts.netloc, parts.path,
                                                      query, ""))))
        host = parts.hostname or ""
    except ValueError:  # e.g. a host that is not valid IDNA
        return None
    host = host.removeprefix("www.")
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def outside(url: str, policy: Policy) -> str | None:
    """Why a cited `url` is outside the run's source policy (domains.DENIED or NOT_ALLOWED),
    or None. Its host is the one w3lib parses from the URL as written, before canonical()
    drops a `www.` (a rule may name www.example.com): `http://good.com@evil.com/` is
    evil.com's, a port is no part of the host, an IDNA host is punycode, as the rules are."""
    if not policy:
        return None
    if url.startswith("www."):
        url = "https://" + url
    try:
        host = urlsplit(safe_url_string(url.strip())).hostname if canonical(url) else None
    except ValueError:
        host = None
    return policy.verdict(host)


@dataclass
class Source:
    url: str
    variants: set[str] = field(default_factory=set)
    cited_by: dict[str, set[str]] = field(default_factory=dict)  # agent → phases

    @property
    def agents(self) -> list[str]:
        """The agents whose own reports cite it (the synthesis only repeats them)."""
        return sorted(a for a, phases in self.cited_by.items()
                      if phases - {graph.SYNTHESIS.name})

    @property
    def gap_fill_only(self) -> bool:
        """Cited only by the gap-filling round, whose findings nobody cross-checked."""
        phases = set().union(*self.cited_by.values()) - {graph.SYNTHESIS.name}
        return phases == {graph.GAPFILL.name}

    def outside(self, policy: Policy) -> str | None:
        """The policy's verdict on the source, judged on each spelling it was cited by (they
        differ by a `www.` at most in their host): denied if one is, else not allowed if one
        is."""
        verdicts = {outside(url, policy) for url in {self.url, *self.variants}}
        return next((v for v in (DENIED, NOT_ALLOWED) if v in verdicts), None)

    def to_dict(self, number: int, policy: Policy | None = None) -> dict[str, Any]:
        """Its entry in sources.json; `policy`: with "policy" (why it is outside the run's
        source policy) when it is."""
        verdict = self.outside(policy) if policy else None
        return {"n": number, "url": self.url, "variants": sorted(self.variants - {self.url}),
                "cited_by": {a: sorted(p) for a, p in sorted(self.cited_by.items())},
                "single_agent": len(self.agents) == 1,
                "synthesis_only": not self.agents,
                "gap_fill_only": self.gap_fill_only,
                **({"policy": verdict} if verdict else {})}


@dataclass
class Ledger:
    sources: dict[str, Source] = field(default_factory=dict)
    malformed: list[dict[str, str]] = field(default_factory=list)

    def add(self, agent: str, phase: str, text: str) -> None:
        for url in extract(text):
            key = canonical(url)
            if key is None:
                self.malformed.append({"url": url, "agent": agent, "phase": phase})
                continue
            source = self.sources.setdefault(key, Source(key))
            source.variants.add(url)
            source.cited_by.setdefault(agent, set()).add(phase)

    def ordered(self) -> list[Source]:
        """Most-cited first (by how many agents), then by URL: stable numbering."""
        return sorted(self.sources.values(), key=lambda s: (-len(s.agents), s.url))

    def to_dict(self, policy: Policy | None = None) -> dict[str, Any]:
        """sources.json's sources and malformed links; with a source policy, each source
        outside it flagged, and the policy itself."""
        listed = [s.to_dict(i, policy) for i, s in enumerate(self.ordered(), 1)]
        data: dict[str, Any] = {"sources": listed, "malformed": self.malformed}
        if policy:
            data["policy"] = {"allow": list(policy.allow), "deny": list(policy.deny)}
        return data


def build(reports: Iterable[tuple[str, str, str]]) -> Ledger:
    """A ledger from (agent, phase, report text) triples."""
    ledger = Ledger()
    for agent, phase, text in reports:
        ledger.add(agent, phase, text)
    return ledger


def sources_section(ledger: Ledger, policy: Policy | None = None) -> str:
    """The final report's Sources section, numbered, each with the agents that cited it (and,
    with a source policy, the ones outside it)."""
    lines = ["## Sources", "",
             "_Built by council from every report of this run, de-duplicated. † cited by one "
             "agent only; ‡ cited by no agent's report, only by the synthesis; § found only "
             "in the gap-filling round, which no other agent cross-checked._", ""]
    for i, source in enumerate(ledger.ordered(), 1):
        verdict = source.outside(policy) if policy else None
        flag = f" — outside the source policy ({verdict})" if verdict else ""
        if source.agents:
            mark = (" †" if len(source.agents) == 1 else "") + \
                (" §" if source.gap_fill_only else "")
            lines.append(f"{i}. <{source.url}> — cited by {', '.join(source.agents)}{mark}"
                         f"{flag}")
        else:
            lines.append(f"{i}. <{source.url}> — only in the synthesis ‡{flag}")
    if ledger.malformed:
        lines += ["", "Malformed links found in the reports (not counted):"]
        lines += [f"- `{m['url']}` ({m['agent']}, {m['phase']})" for m in ledger.malformed]
    return "\n".join(lines) + "\n"


SOURCES_HEADING = re.compile(
    r"^##\s+(?:\d+\.\s*)?(?:Comprehensive\s+)?Sources?(?:\s*\(.*\))?\s*$", re.M | re.I)


def _section(report: str, heading: re.Pattern[str]) -> tuple[int, int] | None:
    """Where the `## ` section whose heading matches starts and ends (at the next `## `)."""
    match = heading.search(report)
    if match is None:
        return None
    nxt = re.search(r"^## ", report[match.end():], re.M)
    return match.start(), match.end() + nxt.start() if nxt else len(report)


def replace_sources(report: str, section: str) -> str:
    """Swap the report's own Sources section (up to the next `## `) for council's."""
    found = _section(report, SOURCES_HEADING)
    if found is None:
        return report.rstrip("\n") + "\n\n" + section
    tail = report[found[1]:]
    return report[:found[0]] + section + ("\n" + tail if tail else "")


def remove_section(report: str, heading: re.Pattern[str]) -> str:
    """The report without the section under `heading` (say, one council generated before)."""
    found = _section(report, heading)
    return report if found is None else report[:found[0]] + report[found[1]:]


def disappeared(before: str, after: str) -> list[str]:
    """Sources an agent cited in its research report but dropped from its refined one."""
    old = {c for u in extract(before) if (c := canonical(u))}
    new = {c for u in extract(after) if (c := canonical(u))}
    return sorted(old - new)


def write(path: Path, ledger: Ledger, regressions: Mapping[str, list[str]],
          totals: Mapping[str, int] | None = None, policy: Policy | None = None) -> None:
    """sources.json: the ledger, and per agent the sources its refinement dropped (the
    first ones) with how many it dropped in all. Replaced whole (disk.atomic_write, which
    redacts it): a full disk or a kill leaves the old file, never a torn one."""
    data = {**ledger.to_dict(policy), "dropped_in_refinement": dict(regressions),
            "dropped_in_refinement_total": dict(totals or {})}
    disk.atomic_write(path, json.dumps(data, indent=2) + "\n")
