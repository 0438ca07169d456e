"""A seat's failure as its vendor said it: what kind of no it was, how long the vendor asked
council to wait or when its limit resets, which models answered, and the CLI's own words.

Each CLI's module reads its own output into one `Failure` (`classify` at the end of
agents/claude.py, codex.py, gemini.py); this module holds the type and the parsing every
vendor shares: Retry-After, Google's RetryInfo durations, "try again in 7.0s", codex's "try
again at Nov 30th, 2026 12:53 AM", claude's "resets 3:50pm (Asia/Tokyo)". The parsers are pure:
each takes the moment and the timezone to read a clock time against. Stdlib only."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class Kind(enum.StrEnum):
    """What the vendor's no means for the seat."""

    # A subscription's usage window is spent (claude's session, weekly or monthly limit; a
    # ChatGPT plan's usage limit): nothing gets through until its reset.
    PLAN_LIMIT = "plan_limit"
    # An API key's billing quota, credits, or a daily quota: until the day turns or someone
    # pays. `window` says "day" for a daily quota.
    QUOTA = "quota"
    # A per-minute limit (requests or tokens per minute, Google's per-minute quota): it clears
    # in seconds, usually by the vendor's `wait`.
    RATE_LIMIT = "rate_limit"
    # The vendor's servers refuse or fail (Anthropic 529, OpenAI/Google 503, a 5xx, a model
    # at capacity): try again shortly.
    OVERLOADED = "overloaded"
    # The login or key is refused (401, 403, an expired or reused token).
    AUTH = "auth"
    # The answer started and its stream ended before it was whole.
    STREAM_CUT = "stream_cut"
    # No answer came: the request timed out, or the server could not be reached.
    NO_ANSWER = "no_answer"
    # Anything else: the CLI's own trouble, or one council cannot read.
    CRASH = "crash"


# Kinds that clear on their own within a phase: retried with the vendor's wait.
PASSING = frozenset({Kind.RATE_LIMIT, Kind.OVERLOADED, Kind.STREAM_CUT, Kind.NO_ANSWER})

MESSAGE_LIMIT = 500  # the CLI's message is kept to one line of this many characters


@dataclass(frozen=True)
class Failure:
    """One failed CLI process, read from its own output."""

    kind: Kind
    message: str  # the CLI's own words, one line
    wait: float | None = None  # seconds the vendor asked to wait (Retry-After, RetryInfo, …)
    resets_at: datetime | None = None  # aware: when the vendor said the limit clears
    window: str | None = None  # the limit's window where said: minute, day, five_hour, …
    status: int | None = None  # the HTTP status, where the CLI names it
    models: tuple[str, ...] = ()  # the models that answered before it failed

    @property
    def passing(self) -> bool:
        """Whether the fault clears on its own (retry with `wait`) rather than at a reset or
        by someone's hand."""
        return self.kind in PASSING

    def until(self, now: datetime) -> datetime | None:
        """When the vendor said to try again: its reset, else now plus its wait."""
        if self.resets_at is not None:
            return self.resets_at
        return now + timedelta(seconds=self.wait) if self.wait is not None else None


def one_line(text: str | None, limit: int = MESSAGE_LIMIT) -> str:
    """The CLI's words as one bounded line: whitespace runs (newlines too) become one space,
    and control characters go."""
    cleaned = "".join(c if c.isprintable() else " " for c in text or "")
    return " ".join(cleaned.split())[:limit]


# --------------------------------------------------------------------------- waits
def retry_after(value: str | None, now: datetime) -> float | None:
    """An HTTP Retry-After header's wait in seconds: delta-seconds (`8`, `1.5`) or an HTTP
    date (`Wed, 21 Oct 2026 07:28:00 GMT`), read against `now`; never negative."""
    text = (value or "").strip()
    if not text:
        return None
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    from email.utils import parsedate_to_datetime  # ~30 ms, and only for the date form

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|"
    r"d|days?)(?![a-z])", re.I)
UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration(text: str | None) -> float | None:
    """A written span in seconds: Google's `60s` / `0.5s` / `33.47ms`, OpenAI's `7.0s`,
    `1m12.5s`, `6h5m`, codex's `4 days 6 hours 37 minutes`. None when it names none."""
    total, found = 0.0, False
    for number, unit in DURATION_PART.findall(text or ""):
        unit = unit.lower()
        key = "ms" if unit == "ms" or unit.startswith("milli") else unit[0]
        total += float(number) * UNIT_SECONDS[key]
        found = True
    return total if found else None


TRY_AGAIN_IN = re.compile(
    r"(?:try again|retry) in\s+"
    r"((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)", re.I)
RETRY_AFTER_WORDS = re.compile(r"suggested retry after\s+(\d+(?:\.\d+)?(?:ms|s))", re.I)


def try_again_in(text: str | None) -> float | None:
    """The wait a message names: "Please try again in 7.0s", "try again in 4 days 6 hours 37
    minutes", gemini's "Please retry in 60s" and "Suggested retry after 60s"."""
    found = TRY_AGAIN_IN.search(text or "") or RETRY_AFTER_WORDS.search(text or "")
    return duration(found.group(1)) if found else None


# --------------------------------------------------------------------------- clock times
MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?"
DATE = r"([A-Z][a-z]{2,8})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}))?,?"
TRY_AGAIN_AT = re.compile(rf"try again at\s+(?:{DATE}\s+)?{CLOCK}", re.I)
RESETS = re.compile(rf"resets\s+(?:at\s+)?(?:{DATE}\s+(?:at\s+)?)?{CLOCK}"
                    r"(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?", re.I)


def zone(name: str | None, fallback: tzinfo) -> tzinfo:
    """The IANA zone `name` (claude names the user's: `Asia/Tokyo`), else `fallback`."""
    if not name:
        return fallback
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return fallback


def _clock(hour: str, minute: str | None, meridiem: str | None) -> tuple[int, int] | None:
    h, m = int(hour), int(minute or 0)
    if meridiem:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if meridiem.lower().startswith("p") else 0)
    if h > 23 or m > 59:
        return None
    return h, m


def _when(groups: tuple[str | None, ...], now: datetime, tz: tzinfo) -> datetime | None:
    """(month, day, year, hour, minute, am/pm) as the first such moment at or after `now`
    in `tz`: a time without a date is today's, or tomorrow's once today's has passed; a date
    without a year is this year's, or next year's."""
    month_name, day, year, hour, minute, meridiem = groups
    if hour is None:
        return None
    clock = _clock(hour, minute, meridiem)
    if clock is None:
        return None
    local = now.astimezone(tz)
    try:
        if month_name is None:
            when = local.replace(hour=clock[0], minute=clock[1], second=0, microsecond=0)
            return when if when >= local else when + timedelta(days=1)
        month = MONTHS.get(month_name[:3].lower())
        if month is None or day is None:
            return None
        when = local.replace(year=int(year) if year else local.year, month=month,
                             day=int(day), hour=clock[0], minute=clock[1], second=0,
                             microsecond=0)
        if year is None and when < local - timedelta(days=1):
            when = when.replace(year=when.year + 1)
        return when
    except ValueError:  # Feb 30th and the like
        return None


def try_again_at(text: str | None, now: datetime, tz: tzinfo | None = None) -> datetime | None:
    """codex's reset: "try again at Nov 30th, 2026 12:53 AM", "… at Nov 30th, 12:53 AM", or
    the same day's "try again at 7:15 PM", in codex's local time `tz` (default: `now`'s)."""
    found = TRY_AGAIN_AT.search(text or "")
    if found is None:
        return None
    return _when(found.groups(), now, tz or now.tzinfo or UTC)


def resets(text: str | None, now: datetime, tz: tzinfo | None = None) -> datetime | None:
    """claude's reset: "resets 3:50pm (Asia/Tokyo)", "resets 1pm (Europe/Lisbon)", "resets
    Dec 2, 5pm (…)": in the zone it names, else `tz` (default: `now`'s)."""
    found = RESETS.search(text or "")
    if found is None:
        return None
    *when, name = found.groups()
    return _when(tuple(when), now, zone(name, tz or now.tzinfo or UTC))


def epoch(value: object) -> datetime | None:
    """Epoch seconds (a number, or digits in a string) as an aware UTC time; milliseconds
    are taken for what they are."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(r"\d+(?:\.\d+)?", value.strip()):
        value = float(value)
    if not isinstance(value, int | float) or value <= 0:
        return None
    seconds = value / 1000 if value > 1e11 else value
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


PACIFIC = "America/Los_Angeles"


def next_pacific_midnight(now: datetime) -> datetime | None:
    """When a Google daily quota resets: midnight Pacific time (Google's documented reset),
    or None where the zone database is missing."""
    try:
        pacific = ZoneInfo(PACIFIC)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    local = now.astimezone(pacific)
    return (local + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
