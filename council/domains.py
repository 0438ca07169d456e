"""The source policy: which web domains a run's sources may come from (`sources: {allow: [...],
deny: [...]}` in a config file, `--allow-domain` / `--deny-domain` on `council run`).

A rule names a domain and covers its subdomains (`example.com` covers `docs.example.com`, not
`badexample.com`). Deny wins over allow; with an allow list, a domain on neither list is
outside the policy too. Rules are normalised once, here, to the form a URL's host takes after
w3lib's canonicalisation (evidence/sources.canonical): lower case, IDNA (punycode), no leading
or trailing dot. So the ledger compares like with like, and claude's `WebFetch(domain:…)` rules
name the hostname its URL parser gives (punycode too).

Pure and stdlib-only: options.py checks the rules with it, the claude adapter turns them into
permission rules, the ledger judges cited URLs with them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ALLOW, DENY = "allow", "deny"
# `sources: {allow_private: true}`: council's own fetches (evidence/fetch.py) may reach private
# addresses (an intranet). Taken from the user's own config file only (config.py).
PRIVATE = "allow_private"
# What a cited source outside the policy is marked with (sources.json's "policy").
DENIED, NOT_ALLOWED = "denied", "not allowed"
# A normalised domain: dot-separated LDH labels (punycode's `xn--` included), at least two.
_DOMAIN = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
                     r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def normalise(word: str) -> str:
    """One domain as a rule: `.Bücher.DE.` → `xn--bcher-kva.de`. A ValueError (its message
    says why) for anything that is not a bare domain: a URL, a port, userinfo, a path, a
    wildcard, an address with one label. A rule covers subdomains already, so a leading dot
    (`.example.com`, curl's and cookies' spelling) is dropped."""
    if not isinstance(word, str):
        raise ValueError(f"{word!r} is not a domain")
    text = word.strip().lstrip(".").rstrip(".").lower()
    if any(c in text for c in "/:@*?#[] \t"):
        raise ValueError(f"{word!r} is not a bare domain (give example.com, not a URL, a "
                         "port or a wildcard)")
    try:
        text = ".".join(label.encode("idna").decode("ascii") for label in text.split("."))
    except UnicodeError:
        raise ValueError(f"{word!r} is not a valid domain name") from None
    if not _DOMAIN.fullmatch(text) or "." not in text:
        raise ValueError(f"{word!r} is not a domain name such as example.com")
    return text


def normalise_all(words: Iterable[str]) -> list[str]:
    """Rules normalised, each once, in the order given."""
    return list(dict.fromkeys(normalise(w) for w in words))


def covers(rule: str, host: str) -> bool:
    """Whether `rule` (normalised) covers `host` (a normalised hostname): the domain itself
    or a subdomain, on a label boundary."""
    return host == rule or host.endswith("." + rule)


@dataclass(frozen=True)
class Policy:
    """A run's source policy: normalised allow and deny rules. Empty: every source is
    inside it."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    allow_private: bool = False  # the user's own config allows fetching private addresses

    @classmethod
    def of(cls, value: Mapping[str, Any] | None) -> Policy:
        """The policy a run stored (RunOptions.sources: {allow: [...], deny: [...]} or
        None), its rules already normalised by the option's check."""
        if not value:
            return cls()
        return cls(tuple(value.get(ALLOW) or ()), tuple(value.get(DENY) or ()),
                   value.get(PRIVATE) is True)

    def __bool__(self) -> bool:
        """Whether it has a domain rule (allow_private is not one: it says what council's own
        fetches may reach, not which sources are inside the policy)."""
        return bool(self.allow or self.deny)

    def verdict(self, host: str | None) -> str | None:
        """None when a source on `host` is inside the policy, else why it is not (DENIED,
        NOT_ALLOWED). Deny wins over allow. A source with no host (a malformed link) is
        judged only by an allow list, which it is not on."""
        host = (host or "").lower().rstrip(".")
        if host and any(covers(rule, host) for rule in self.deny):
            return DENIED
        if self.allow and not (host and any(covers(rule, host) for rule in self.allow)):
            return NOT_ALLOWED
        return None

    def describe(self) -> str:
        """One line for the plan and `council doctor`."""
        parts = ([f"allow {', '.join(self.allow)} (and their subdomains; nothing else)"]
                 if self.allow else []) + (
            [f"deny {', '.join(self.deny)} (and their subdomains)"] if self.deny else [])
        line = "; ".join(parts) or "none (sources from any domain)"
        return line + ("; private addresses may be fetched (your own config)"
                       if self.allow_private else "")


def both(first: Policy, second: Policy) -> Policy | None:
    """The policy a source must meet to be inside `first` and inside `second` (a project's
    config on top of the user's own, which it may narrow, never widen): every deny rule of
    either; with one allow list, that list; with two, the domains both cover (a rule of one
    that lies under a rule of the other). None when two allow lists share no domain: no
    source could be inside both."""
    deny = tuple(dict.fromkeys((*first.deny, *second.deny)))
    if not first.allow or not second.allow:
        return Policy(first.allow or second.allow, deny)
    inside = dict.fromkeys(
        [rule for rule in second.allow if any(covers(u, rule) for u in first.allow)]
        + [rule for rule in first.allow if any(covers(p, rule) for p in second.allow)])
    allow = tuple(rule for rule in inside  # a rule another one covers says nothing more
                  if not any(other != rule and covers(other, rule) for other in inside))
    return Policy(allow, deny) if allow else None


def as_stored(policy: Policy) -> dict[str, Any] | None:
    """A policy in the form a run stores it (RunOptions.sources), or None for no rule.
    `allow_private` is stored only when set."""
    if not policy and not policy.allow_private:
        return None
    return {ALLOW: list(policy.allow), DENY: list(policy.deny),
            **({PRIVATE: True} if policy.allow_private else {})}


def merge(stored: Mapping[str, Any] | None, allow: Iterable[str] = (),
          deny: Iterable[str] = ()) -> dict[str, Any] | None:
    """A config file's policy with the command line's rules added (both normalised): the
    stored form, or None when there is no rule at all."""
    base = Policy.of(stored)
    return as_stored(Policy(tuple(normalise_all([*base.allow, *allow])),
                            tuple(normalise_all([*base.deny, *deny])), base.allow_private))
