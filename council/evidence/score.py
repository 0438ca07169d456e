"""The completeness score: seed 003's four signals, weighted by mode, capped when agents
failed. Pure arithmetic over what the run already wrote (sources.json's URLs, claims.json's
verdicts and coverage), so the number can be recomputed and checked by hand.

    source diversity    covered source types (official, code, community) / 3
    cross-verification  claims another vendor's agent found SUPPORTED / claims extracted
    gap coverage        1 - dimensions no report covered / dimensions in the scope
    question closure    sum of the sub-questions' closure / sub-questions in the scope

A signal the run could not measure (verification degraded, no scope) counts as 0 and says so: a
run that checked less must never score like one that checked everything. A run whose plan
checks nothing (the test profile, --no-verify, one agent) is not scored at all: its header
names what was not measured and why, rather than a 0/100 that reads as a failed run."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from council.graph import counted

HEADING = re.compile(r"^##\s+Completeness\s*$", re.M | re.I)
SIGNALS = ("source_diversity", "cross_verification", "gap_coverage", "question_closure")
LABELS = {"source_diversity": "Source diversity", "cross_verification": "Cross-verification",
          "gap_coverage": "Gap coverage", "question_closure": "Question closure"}
WEIGHTS = {
    "exploratory": (0.30, 0.30, 0.25, 0.15),
    "compliance": (0.20, 0.35, 0.25, 0.20),
    "decision": (0.25, 0.35, 0.20, 0.20),
}
SOURCE_TYPES = ("official", "code", "community")
DIVERSITY_CEILING = 60  # seed 003: fewer than two source types never scores above 60
STATUS_VALUE = {"answered": 1.0, "partial": 0.5, "open": 0.0}
REFUTED = ("UNSUPPORTED", "CONTRADICTED")

CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "sourceforge.net",
              "sr.ht", "gist.github.com", "raw.githubusercontent.com", "pypi.org",
              "npmjs.com", "crates.io", "pkg.go.dev", "rubygems.org", "packagist.org",
              "hub.docker.com", "huggingface.co", "nuget.org", "mvnrepository.com",
              "search.maven.org", "hackage.haskell.org", "cran.r-project.org")
COMMUNITY_HOSTS = ("stackoverflow.com", "stackexchange.com", "superuser.com",
                   "serverfault.com", "askubuntu.com", "reddit.com", "news.ycombinator.com",
                   "lobste.rs", "medium.com", "dev.to", "substack.com", "hashnode.dev",
                   "hackernoon.com", "quora.com", "twitter.com", "x.com", "youtube.com",
                   "linkedin.com", "discord.com", "blogspot.com", "wordpress.com",
                   "tumblr.com", "mastodon.social", "bsky.app", "producthunt.com")
COMMUNITY_PREFIXES = ("forum.", "forums.", "community.", "discuss.", "discourse.")
OFFICIAL_HOSTS = ("ietf.org", "rfc-editor.org", "w3.org", "whatwg.org", "iso.org",
                  "owasp.org", "ecma-international.org", "unicode.org", "arxiv.org",
                  "doi.org", "acm.org", "ieee.org", "nature.com", "science.org",
                  "europa.eu", "who.int", "oecd.org", "un.org", "readthedocs.io",
                  "wikipedia.org")
OFFICIAL_PREFIXES = ("docs.", "doc.", "developer.", "developers.", "learn.", "api.", "spec.",
                     "specs.", "standards.", "support.", "help.")
OFFICIAL_TLDS = (".gov", ".mil", ".edu", ".int")
# Host labels of government sites under country domains: www.gov.uk, service-public.gouv.fr,
# www.gob.mx, www.govt.nz, canada.gc.ca, www.ac.jp (academic).
OFFICIAL_LABELS = frozenset({"gov", "gouv", "gob", "govt", "gc", "ac", "edu"})
# Whole path segments, so /special-report or /manually-edited are not documentation.
OFFICIAL_SEGMENTS = frozenset({"docs", "doc", "documentation", "reference", "references",
                               "spec", "specs", "specification", "standard", "standards",
                               "manual", "handbook", "guide", "guides", "api", "whitepaper",
                               "whitepapers", "legislation", "regulation", "regulations",
                               "rfc", "eli", "legal-content"})


def _on(host: str, domains: Iterable[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def source_type(url: str) -> str | None:
    """official, code, community, or None for a source none of the rules place (a news site,
    a vendor's marketing page): such sources count as sources, not as a type covered."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    path = parts.path.lower()
    if _on(host, CODE_HOSTS):
        return "code"
    if _on(host, COMMUNITY_HOSTS) or host.startswith(COMMUNITY_PREFIXES) or \
            (host.startswith("blog.") and not path.startswith("/docs")):
        return "community"
    labels = host.split(".")
    if _on(host, OFFICIAL_HOSTS) or host.startswith(OFFICIAL_PREFIXES) or \
            host.endswith(OFFICIAL_TLDS) or OFFICIAL_LABELS.intersection(labels[:-1]) or \
            OFFICIAL_SEGMENTS.intersection(path.split("/")):
        return "official"
    return None


@dataclass(frozen=True)
class Signal:
    name: str
    value: float | None  # None: not measured (counts as 0)
    detail: str


@dataclass(frozen=True)
class Completeness:
    mode: str
    signals: tuple[Signal, ...]
    raw: float  # 0..100, before the cap
    cap: float
    cap_reason: str
    score: int | None  # what the header shows; None: not scored (`unscored` says why)
    ceiling: str | None  # why the score was held at DIVERSITY_CEILING, if it was
    unscored: str | None = None  # why the run's plan measures too little to score

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "raw": round(self.raw, 1), "cap": self.cap,
                "cap_reason": self.cap_reason, "ceiling": self.ceiling, "mode": self.mode,
                "unscored": self.unscored,
                "signals": {s.name: {"value": None if s.value is None else round(s.value, 3),
                                     "detail": s.detail} for s in self.signals}}


def source_diversity(urls: Iterable[str]) -> Signal:
    counts = dict.fromkeys((*SOURCE_TYPES, "other"), 0)
    for url in urls:
        counts[source_type(url) or "other"] += 1
    covered = sum(1 for t in SOURCE_TYPES if counts[t])
    detail = ", ".join(f"{counts[t]} {t}" for t in (*SOURCE_TYPES, "other"))
    return Signal("source_diversity", covered / len(SOURCE_TYPES),
                  f"{covered} of 3 source types ({detail})")


def cross_verification(claims: Mapping[str, Any] | None) -> Signal:
    if not claims:
        return Signal("cross_verification", None, "not measured: verification did not run")
    if claims.get("status") == "degraded":
        return Signal("cross_verification", None,
                      "not measured: claim extraction failed (verification degraded)")
    listed = claims.get("claims", [])
    supported = sum(1 for c in listed if c.get("verdict") == "SUPPORTED")
    if not listed:
        return Signal("cross_verification", None, "not measured: no claims extracted")
    return Signal("cross_verification", supported / len(listed),
                  f"{supported} of {len(listed)} claims supported when checked by another "
                  "agent (of another vendor where the council has one)")


def gap_coverage(claims: Mapping[str, Any] | None) -> Signal:
    dims = (claims or {}).get("dimensions")
    if not dims:
        return Signal("gap_coverage", None, _unscoped(claims))
    gaps = [d["dimension"] for d in dims if not d.get("covered")]
    return Signal("gap_coverage", 1 - len(gaps) / len(dims),
                  f"{len(dims) - len(gaps)} of {len(dims)} dimensions covered"
                  + (f"; gaps: {'; '.join(gaps)}" if gaps else ""))


def closure(status: str, verdicts: Sequence[str]) -> float:
    """How far one sub-question is closed: its status, discounted by what verification found
    of the claims its answer rests on. An answer counts fully only when another vendor's
    agent supported at least one of them; half when they were overstated, unchecked or
    absent; not at all when every one was refuted."""
    value = STATUS_VALUE.get(status, 0.0)
    if "SUPPORTED" in verdicts:
        return value
    if verdicts and all(v in REFUTED for v in verdicts):
        return 0.0
    return min(value, 0.5)


def closures(claims: Mapping[str, Any] | None) -> list[tuple[Mapping[str, Any], float]]:
    """Each sub-question of claims.json with how far it is closed (`closure`)."""
    if not claims:
        return []
    verdict = {c.get("id"): c.get("verdict", "UNVERIFIED") for c in claims.get("claims", [])}
    return [(q, closure(q.get("status", "open"),
                        [verdict.get(c, "UNVERIFIED") for c in q.get("claims", [])]))
            for q in claims.get("questions") or []]


def question_closure(claims: Mapping[str, Any] | None) -> Signal:
    values = [value for _, value in closures(claims)]
    if not values:
        return Signal("question_closure", None, _unscoped(claims))
    closed = sum(1 for v in values if v == 1.0)
    open_ = sum(1 for v in values if v == 0.0)
    return Signal("question_closure", sum(values) / len(values),
                  f"{closed} of {len(values)} sub-questions closed with supported evidence, "
                  f"{len(values) - closed - open_} partly, {open_} open")


def _unscoped(claims: Mapping[str, Any] | None) -> str:
    if not claims:
        return "not measured: verification did not run"
    if claims.get("status") == "degraded":
        return "not measured: claim extraction failed (verification degraded)"
    if claims.get("coverage_error"):
        return "not measured: the coverage judgement was malformed"
    return "not measured: no sub-questions to judge against (the scope step degraded)"


def confidence_cap(contributors: int, total: int, cited_urls: int) -> tuple[float, str]:
    """Seed 003's degradation model: 1.0 with every agent and web evidence, 0.9 with one agent
    lost, 0.75 with two or more lost or with no web source at all."""
    failed = total - contributors
    if failed >= 2:
        return 0.75, f"{failed} of {counted(total, 'agent')} failed"
    if cited_urls == 0:
        return 0.75, "no web source cited"
    if failed == 1:
        return 0.9, f"1 of {counted(total, 'agent')} failed"
    return 1.0, f"all {total} agents contributed" if total > 1 else "its one agent contributed"


def compute(mode: str, urls: Sequence[str], claims: Mapping[str, Any] | None,
            contributors: int, total: int, unchecked: str | None = None) -> Completeness:
    """The score of a run whose agents cited `urls` (canonical, de-duplicated; the synthesis's
    own additions excluded) and whose verification wrote `claims` (None if it did not run).
    `unchecked`: why the run's plan has no checking phases (graph.unchecked); then the run is
    not scored, and the signals it did measure are shown as they are."""
    signals = (source_diversity(urls), cross_verification(claims), gap_coverage(claims),
               question_closure(claims))
    raw = 100 * sum((s.value or 0.0) * w for s, w in zip(signals, WEIGHTS[mode], strict=True))
    cap, reason = confidence_cap(contributors, total, len(urls))
    score = round(raw * cap)
    ceiling = None
    types = round((signals[0].value or 0) * len(SOURCE_TYPES))
    if types < 2 and score > DIVERSITY_CEILING:
        score, ceiling = DIVERSITY_CEILING, "fewer than two source types"
    if unchecked and any(s.value is None for s in signals):
        return Completeness(mode, signals, raw, cap, reason, None, None, unchecked)
    return Completeness(mode, signals, raw, cap, reason, score, ceiling)


def section(result: Completeness) -> str:
    """The final report's Completeness section: the score and how it was reached."""
    weights = dict(zip(SIGNALS, WEIGHTS[result.mode], strict=True))
    intro = (f"**Not scored**: {result.unscored}, so this run measured only the signals below "
             f"that show a value ({result.cap_reason}); a score over part of them would not "
             "compare with a run that checks its claims." if result.score is None else
             f"**{result.score}/100** — computed by council, not by a model: the four signals "
             f"below weighted for {result.mode} research ({result.raw:.0f} raw) × confidence "
             f"cap {result.cap} ({result.cap_reason})"
             + (f", held at {DIVERSITY_CEILING} ({result.ceiling})" if result.ceiling else "")
             + ".")
    lines = ["## Completeness", "", intro, "",
             "| Signal | Weight | Value | Detail |", "|---|---|---|---|"]
    for s in result.signals:
        value = "not measured" if s.value is None else f"{s.value:.0%}"
        detail = s.detail.replace("|", "\\|")  # model-written dimension names
        lines.append(f"| {LABELS[s.name]} | {weights[s.name]:.0%} | {value} | {detail} |")
    return "\n".join(lines) + "\n"


def _not_scored(unmeasured: Sequence[str], why: str) -> str:
    """An unscored run in one phrase, as the final report's header and `council status` say
    it: what was not measured, and why."""
    return (f"not scored ({', '.join(unmeasured)} not measured: {why})" if unmeasured
            else f"not scored ({why})")


def headline(result: Completeness) -> str:
    unmeasured = [LABELS[s.name].lower() for s in result.signals if s.value is None]
    if result.score is None:
        return "completeness " + _not_scored(unmeasured, result.unscored or "")
    return f"completeness {result.score}/100" + (
        f" ({', '.join(unmeasured)} not measured)" if unmeasured else "")


def summary(record: Mapping[str, Any]) -> str:
    """A recorded score (Completeness.to_dict, as state.yaml keeps it) in one phrase, for
    `council status`, `watch` and the synthesis's prompt: `61/100 (cap 1.0: all 3 agents
    contributed)`, or `not scored (cross-verification, … not measured: …)` in the words of the
    final report's header (`headline`)."""
    if record.get("score") is None:
        signals = record.get("signals")
        unmeasured = [LABELS[name].lower() for name, s in signals.items()
                      if name in LABELS and isinstance(s, Mapping) and s.get("value") is None
                      ] if isinstance(signals, Mapping) else []
        return _not_scored(unmeasured, record.get("unscored") or "no score recorded")
    return f"{record['score']}/100 (cap {record.get('cap')}: {record.get('cap_reason')})"
