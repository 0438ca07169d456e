"""Secrets out of every file council writes.

The allow-lists (agents/environment.py) keep council's secrets out of each agent's reach;
this is the second line, for a value that got through anyway (a login helper's error that
echoes a key, a model that was handed one, a report that is a link to /proc/self/environ).
Before council writes a file, it replaces:

- the value of every variable of its own environment whose name looks like a secret, and the
  token values of the CLIs' login files (logins.py says where they are), by `REDACTED:NAME`
  (`REDACTED:codex-login` for a login file's);
- each of those values also in the forms it takes in transit: inside base64 (a file an agent
  base64'd, an image tool's payload), percent-encoded (a URL's query string) and escaped in a
  JSON string;
- the password of any `scheme://user:password@host`, by `REDACTED:url-password`;
- anything shaped like a well-known token (a GitHub, OpenAI, Anthropic, Slack, AWS, Google,
  GitLab, npm, Stripe, Hugging Face, SendGrid, PyPI, Docker Hub, DigitalOcean, Square,
  Shopify or Linear token, or a JWT), by `REDACTED:<shape>`, whether council knows its value
  or not.

The mark holds no space or bracket, so a URL that held a secret stays one URL and a YAML or
markdown value stays what it was. An agent's own files (its report and its CLI's logs) are
scrubbed in place when its turn in a phase ends, before anything is published from them,
and the run's progress.log names the agent and the variable or shape, never the value.

Imported by the hooks' event writer, so it keeps to the standard library's lightest modules:
`re` (7 ms, with `enum`) is imported only for a text that holds a token's first letters or a
`://`, or is longer than 4 KB, and a login file is parsed by a few lines here rather than by
`json` (which imports `re`)."""

from __future__ import annotations

import binascii
import codecs
import contextlib
import os
import time

from council.store import agentfs, logins

TYPE_CHECKING = False  # not typing's: its import would add ~20 ms to every hook
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Iterator, Mapping
    from io import RawIOBase
    from pathlib import Path

# A variable is a secret when its name holds one of these (case-insensitive)...
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                "PRIVATE")
# ...or has one of these as a part between underscores (SIGNING_SALT, AUTHORIZATION_VALUE;
# not GIT_AUTHOR_NAME, whose part is AUTHOR)...
SECRET_PARTS = frozenset({"SALT", "AUTHORIZATION", "BEARER"})
# ...or one of these, weaker evidence (COOKIE_MODE=disabled is a setting)...
WEAK_WORDS = ("CREDS", "COOKIE", "WEBHOOK")
# ...or one of these parts (AUTH_HEADER, HTTP_AUTH_VALUE; AUTH_MODE=none is a setting)...
WEAK_PARTS = frozenset({"AUTH"})
# ...or ends with one of these: GITHUB_PAT, LDAP_PASS, MYSQL_PWD, NPM_CONFIG__AUTH,
# SENTRY_DSN, STRIPE_SK (a secret key) and DOCKER_AUTH_CONFIG (registry logins, base64) are
# secrets, but PWD and OLDPWD are folders and SSH_AUTH_SOCK is a socket.
WEAK_ENDINGS = ("_PAT", "_PASS", "_PWD", "_AUTH", "_DSN", "_SK", "_AUTH_CONFIG", "SESSION_ID",
                "SESSIONID")
# A connection string is a secret under these names (or one ending with `_` and one of them,
# TEST_DATABASE_URL), even where it holds no password; any other *_URL or *_URI variable only
# when it carries a user (`scheme://user@host`), and any variable at all when it carries a
# password (HTTPS_PROXY=http://user:password@proxy).
URL_NAMES = frozenset({
    "DATABASE_URL", "REDIS_URL", "REDIS_TLS_URL", "MONGODB_URI", "MONGODB_URL", "MONGO_URL",
    "MONGO_URI", "POSTGRES_URL", "POSTGRESQL_URL", "MYSQL_URL", "AMQP_URL", "RABBITMQ_URL",
    "CLOUDAMQP_URL", "BROKER_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND",
})
# ...and its value is long enough to be one: a short value ("1", "true", "dummy") replaced
# wherever it occurs would mangle the text and hide nothing.
MIN_LENGTH = 8
# Never a secret, whatever the rules above would say of the name.
NOT_SECRET = frozenset({"PATH", "PWD", "OLDPWD", "HOME", "SHELL", "USER", "LOGNAME", "TERM",
                        "LANG", "TMPDIR", "HOSTNAME", "MAIL", "EDITOR", "PAGER",
                        "SSH_AUTH_SOCK"})
NOT_SECRET_PREFIXES = ("XDG_", "LC_")
LOGIN_LIMIT = 1 << 20  # a login file is a few KB; read no more than this of one
RECHECK = 5.0  # seconds between looks at whether a login file changed (a token refresh)
_CHUNK = 1 << 20
_RUN = 16384  # the longest run of token characters a shape matches: a chunked scrub keeps
# this much (three of it, for a JWT) to catch a token that straddles two chunks
_HOLD = 1 << 24  # a chunked scrub holds at most this much text undecided (see _scrubbed)

Secrets = list[tuple[str, str]]  # (name, value), longest value first

# Token shapes. Each pattern is one pass over a text, and starts with a fixed string, which
# `re` finds fast (one of several it does not: `[sr]k_` is ten times slower than `sk_`). So
# one pattern holds several shapes only where they share that start and no match of one can
# begin inside a match of another and run past it (finditer would not see it). Each entry:
# ((the mark's name, the fixed strings its tokens start with), ...), and the pattern. A
# match must not follow a letter or digit ("task-…" holds no "sk-" key); `_plausible` asks
# more of the shapes whose prefix alone is common in prose. RUN is the longest run of one
# (_RUN).
SHAPES = (
    ((("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),),
     r"g(?:h[pousr]_[A-Za-z0-9]{30,RUN}|ithub_pat_[A-Za-z0-9_]{30,RUN})"),
    ((("gitlab-token", ("glpat-",)),), r"glpat-[A-Za-z0-9_-]{20,RUN}"),
    # Stripe's secret keys: `sk_live_` or `sk_test_` and 24 to 99 letters and digits.
    ((("anthropic-key", ("sk-ant-",)), ("openai-key", ("sk-",)),
      ("stripe-key", ("sk_live_", "sk_test_"))),
     r"sk(?:-ant-[A-Za-z0-9_-]{20,RUN}|-(?!ant-)[A-Za-z0-9_-]{20,RUN}"
     r"|_(?:live|test)_[A-Za-z0-9]{20,RUN})"),
    ((("stripe-key", ("rk_live_", "rk_test_")),), r"rk_(?:live|test)_[A-Za-z0-9]{20,RUN}"),
    ((("slack-token", ("xox", "xapp-")),),
     r"x(?:ox[abeprs]-[A-Za-z0-9-]{10,RUN}|app-[0-9]+-[A-Za-z0-9-]{20,RUN})"),
    ((("aws-access-key", ("AKIA", "ASIA")), ("google-api-key", ("AIza",))),
     r"A(?:[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])|Iza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-]))"),
    ((("google-oauth-token", ("ya29.",)),), r"ya29\.[A-Za-z0-9_-]{20,RUN}"),
    ((("npm-token", ("npm_",)),), r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    # Hugging Face: 34 letters and digits of both cases (`_plausible`): not hf_hub_download.
    ((("huggingface-token", ("hf_",)),), r"hf_[A-Za-z0-9]{30,RUN}"),
    # SendGrid: `SG.`, 22 characters, a dot, 43 characters.
    ((("sendgrid-key", ("SG.",)),),
     r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
    # PyPI's tokens are macaroons: `pypi-` and the base64 of a version byte and a location.
    ((("pypi-token", ("pypi-AgE",)),), r"pypi-AgE[A-Za-z0-9_-]{40,RUN}"),
    # Docker Hub's personal and organisation tokens; DigitalOcean's: 64 hex digits.
    ((("docker-token", ("dckr_pat_", "dckr_oat_")),
      ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"))),
     r"d(?:ckr_(?:pat|oat)_[A-Za-z0-9_-]{20,RUN}|o[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9]))"),
    # Square's access tokens and OAuth secrets; Shopify's admin, shared-secret, custom and
    # private app tokens (32 hex digits); Linear's API keys.
    ((("square-token", ("sq0atp-", "sq0csp-")),),
     r"sq0(?:atp-[A-Za-z0-9_-]{22,RUN}|csp-[A-Za-z0-9_-]{40,RUN})"),
    ((("shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_")),),
     r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32,RUN}(?![A-Za-z0-9])"),
    ((("linear-key", ("lin_api_",)),), r"lin_api_[A-Za-z0-9]{32,RUN}(?![A-Za-z0-9])"),
    ((("jwt", ("eyJ",)),),
     r"eyJ[A-Za-z0-9_-]{8,RUN}\.[A-Za-z0-9_-]{8,RUN}\.[A-Za-z0-9_-]{8,RUN}"),
    # The password of scheme://user:password@host: up to the authority's last @ (a password
    # with an unescaped @ is hidden whole), never past a space, quote or the path.
    ((("url-password", ("://",)),),
     r"://[^\s/?#@:\"'<>`]{0,RUN}:(?P<pw>[^\s/?#\"'<>`]{1,RUN})@"),
)
# A text up to this long is searched for a shape's fixed strings before its pattern is
# fetched; a longer one goes to the patterns, which find a fixed prefix faster than `find`.
_SHORT = 4096
_STARTS = tuple(tuple(t for _, starts in shapes for t in starts) for shapes, _ in SHAPES)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_MARK = "REDACTED:"


def mark(name: str) -> str:
    """What stands for a secret: no space or bracket, so a URL that held it stays one URL and
    a YAML or markdown value stays what it was."""
    return f"{_MARK}{name}"


# --- which values are secrets ---------------------------------------------------------------

_STRONG, _WEAK, _URLISH, _OTHER, _NEVER = range(5)
_kinds: dict[str, int] = {}


def _kind(name: str) -> int:
    """What a variable's name says of its value (cached: the same few names, many calls)."""
    kind = _kinds.get(name)
    if kind is None:
        upper = name.upper()
        parts = set(upper.split("_"))
        if upper in NOT_SECRET or upper.startswith(NOT_SECRET_PREFIXES):
            kind = _NEVER
        elif any(w in upper for w in SECRET_WORDS) or upper in URL_NAMES or any(
                upper.endswith("_" + n) for n in URL_NAMES) or parts & SECRET_PARTS:
            kind = _STRONG
        elif (any(w in upper for w in WEAK_WORDS) or upper.endswith(WEAK_ENDINGS)
              or parts & WEAK_PARTS):
            kind = _WEAK
        elif upper.endswith(("_URL", "_URI")):
            kind = _URLISH
        else:
            kind = _OTHER
        _kinds[name] = kind
    return kind


def _userinfo(value: str) -> tuple[str, str | None] | None:
    """The user and password of a `scheme://user[:password]@host…` value, or None. Plain
    string work, no `re`: this runs for every variable holding `://`."""
    at = value.find("://")
    if at <= 0:
        return None
    rest = value[at + 3:]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return None
    info = authority.rpartition("@")[0]
    user, colon, password = info.partition(":")
    return user, (password if colon else None)


def is_secret(name: str, value: str) -> bool:
    """Whether the variable `name`=`value` holds a secret."""
    if len(value) < MIN_LENGTH:
        return False
    kind = _kind(name)
    if kind == _STRONG:
        return True
    if kind == _WEAK:  # one lowercase word ("disabled", "optional") is a setting
        return not (value.isalpha() and value.islower())
    if kind == _NEVER or "://" not in value:
        return False
    info = _userinfo(value)
    if info is None:
        return False
    return kind == _URLISH or bool(info[1])


def _environ_secrets(env: Mapping[str, str]) -> Secrets:
    """(name, value) of each secret variable, and (name, password) for a URL's password, as
    written and percent-decoded (it may travel on its own)."""
    found = []
    for name, value in env.items():
        if is_secret(name, value):
            found.append((name, value))
            info = _userinfo(value) if "://" in value else None
            if info and info[1]:
                found += [(name, p) for p in dict.fromkeys((info[1], _unquote(info[1])))
                          if len(p) >= MIN_LENGTH]
    return found


def login_secrets(paths: Mapping[str, str | os.PathLike[str]]) -> Secrets:
    """The token values in the login files at `paths` (name → path; the name is the mark's):
    each string value under a secret-looking key ("access_token", "OPENAI_API_KEY") or
    shaped like a token (long, one word, digits and both cases), long enough to be a secret.
    Read bounded and without blocking (agentfs); a file that is missing, unreadable, not a
    plain file or not JSON holds none."""
    found = []
    for name, path in paths.items():
        data = _read_own(path)
        if data is None:
            continue
        for key, value in _json_strings(data.decode("utf-8", "replace")):
            if _login_value(key, value):
                found.append((name, value))
    return found


def _read_own(path: str | os.PathLike[str]) -> bytes | None:
    """A login file of the user's own: a link the user made (a dotfiles manager's) is
    followed, once, but what it points to must be a plain file, read bounded."""
    try:
        return agentfs.read(path, LOGIN_LIMIT)
    except agentfs.UnsafeFile:
        if not os.path.islink(path):
            return None  # a FIFO or a device would block or never end
        try:
            return agentfs.read(os.path.realpath(path), LOGIN_LIMIT)
        except OSError:
            return None
    except OSError:
        return None


def _login_value(key: str | None, value: str) -> bool:
    if len(value) < MIN_LENGTH or any(c.isspace() for c in value):
        return False
    if key is not None and _kind(key) in (_STRONG, _WEAK):
        return True
    # Unknown keys (a login format may change): only what looks random, so a timestamp, a
    # plan name ("default_claude_max_20x") or an account's UUID is not mistaken for one.
    return (len(value) >= 20 and any(c.isdigit() for c in value)
            and any(c.islower() for c in value) and any(c.isupper() for c in value))


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


def _json_strings(text: str) -> Iterator[tuple[str | None, str]]:
    """(key, value) for each string value of a JSON text, its key the nearest one before it
    (a list's items share their list's). Tolerant: a cut or broken file yields what it can."""
    key: str | None = None
    i = 0
    while (start := text.find('"', i)) >= 0:
        value, i = _json_string(text, start + 1)
        j = i
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if text.startswith(":", j):
            key = value
        else:
            yield key, value


def _json_string(text: str, i: int) -> tuple[str, int]:
    """The JSON string starting after its quote at `i`, decoded, and where it ends."""
    parts: list[str] = []
    while True:
        quote = text.find('"', i)
        if quote < 0:
            return "".join(parts) + text[i:], len(text)
        slash = text.find("\\", i, quote)
        if slash < 0:
            parts.append(text[i:quote])
            return "".join(parts), quote + 1
        parts.append(text[i:slash])
        code = text[slash + 1:slash + 2]
        if code == "u":
            with contextlib.suppress(ValueError):
                parts.append(chr(int(text[slash + 2:slash + 6], 16)))
            i = slash + 6
        else:
            parts.append(_ESCAPES.get(code, code))
            i = slash + 2


_login_cache: dict[tuple[tuple[str, str], ...], tuple[float, tuple[object, ...], Secrets]] = {}


def _stat(path: str) -> object:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def _own_logins() -> Secrets:
    """The CLIs' login-file secrets, cached per process: secrets() runs on every state write
    and event. A login that changes mid-run (a CLI refreshing its OAuth token) is rare but
    happens, so the files' stat is looked at again after RECHECK seconds, and the values
    they held before are kept too (an agent may have copied the old token)."""
    paths = logins.login_files(os.environ, os.path.expanduser("~"))
    key = tuple(paths.items())
    now = time.monotonic()
    cached = _login_cache.get(key)
    if cached is not None and now - cached[0] < RECHECK:
        return cached[2]
    signature = tuple(_stat(p) for p in paths.values())
    if cached is not None and cached[1] == signature:
        _login_cache[key] = (now, signature, cached[2])
        return cached[2]
    found = login_secrets({f"{cli}-login": p for cli, p in paths.items()})
    if cached is not None:
        found = list(dict.fromkeys(cached[2] + found))
    _login_cache[key] = (now, signature, found)
    return found


# --- the forms a value travels in -------------------------------------------------------------

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset(b"0123456789ABCDEFabcdef")


def _percent(data: bytes, safe: bytes = b"", lower: bool = False) -> str:
    hexes = "%%%02x" if lower else "%%%02X"
    return "".join(chr(b) if b in _UNRESERVED or b in safe else hexes % b for b in data)


def _unquote(value: str) -> str:
    if "%" not in value:
        return value
    out, i, data = bytearray(), 0, value.encode("utf-8", "surrogateescape")
    while i < len(data):
        code = data[i + 1:i + 3]
        if data[i] == 0x25 and len(code) == 2 and all(c in _HEX for c in code):  # %XX
            out.append(int(code, 16))
            i += 3
        else:
            out.append(data[i])
            i += 1
    return out.decode("utf-8", "surrogateescape")


def _json_escaped(value: str) -> str:
    out = []
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif " " <= c < "\x7f":
            out.append(c)
        elif c in "\n\r\t\b\f":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}[c])
        elif ord(c) > 0xFFFF:
            high, low = divmod(ord(c) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(c):04x}")
    return "".join(out)


def forms(value: str) -> list[str]:
    """`value` as it may travel: as is; inside base64, standard or URL-safe, at each of the
    three alignments, keeping only the characters no neighbouring byte shares; percent-
    encoded (as Python's quote, JavaScript's encodeURIComponent and a form would, either
    case of hex); and escaped in a JSON string. Those long enough to be a secret."""
    out = [value]
    data = value.encode("utf-8", "surrogateescape")
    for shift in range(3):
        encoded = binascii.b2a_base64(b"\0" * shift + data, newline=False).decode("ascii")
        core = encoded[-(-8 * shift // 6):8 * (shift + len(data)) // 6]
        out += [core, core.replace("+", "-").replace("/", "_")]
    for safe in (b"", b"/", b"!'()*"):
        for lower in (False, True):
            quoted = _percent(data, safe, lower)
            out += [quoted, quoted.replace("%20", "+")]
    out.append(_json_escaped(value))
    return [f for f in dict.fromkeys(out) if len(f) >= MIN_LENGTH]


_expanded: dict[tuple[tuple[str, str], ...], Secrets] = {}


def _expand(raw: Secrets) -> Secrets:
    """Each secret in each of its forms, longest first (cached: the same few secrets)."""
    key = tuple(raw)
    found = _expanded.get(key)
    if found is None:
        pairs: dict[str, str] = {}
        for name, value in raw:
            for form in forms(value):
                pairs.setdefault(form, name)
        found = sorted(((name, form) for form, name in pairs.items()),
                       key=lambda item: (-len(item[1]), item[0]))
        if len(_expanded) > 64:
            _expanded.clear()
        _expanded[key] = found
    return found


def secrets(environ: Mapping[str, str] | None = None) -> Secrets:
    """The secrets to hide, each in every form it may travel in, longest first: the
    secret-looking variables of `environ` and the passwords in its URLs, and, for council's
    own environment (the default), the token values of the CLIs' login files."""
    if environ is None:
        return list(_expand(_environ_secrets(os.environ) + _own_logins()))
    return list(_expand(_environ_secrets(environ)))


# --- finding and replacing --------------------------------------------------------------------

_patterns: dict[int, list[re.Pattern[str]]] = {}


def _compiled() -> list[re.Pattern[str]]:
    """The shapes' patterns (compiled once per _RUN: tests shrink it to try small chunks)."""
    found = _patterns.get(_RUN)
    if found is None:
        import re

        found = [re.compile(p.replace("RUN", str(_RUN))) for _, p in SHAPES]
        _patterns[_RUN] = found
    return found


def _longest() -> int:
    """The most characters a shape matches, and the look-ahead past it."""
    return 3 * _RUN + 32


def _plausible(name: str, token: str) -> bool:
    """More than a prefix for the shapes whose prefix alone is common: an OpenAI-style key
    has a digit and an upper-case letter, or is long (hex keys); a Slack token, a digit; a
    Hugging Face token, letters of both cases (an identifier has one)."""
    if name == "openai-key" and not token.startswith(("sk-proj-", "sk-svcacct-", "sk-admin-")):
        return (any(c.isdigit() for c in token)
                and (any(c.isupper() for c in token) or len(token) >= 35))
    if name == "slack-token":
        return any(c.isdigit() for c in token)
    if name == "huggingface-token":
        return any(c.isupper() for c in token) and any(c.islower() for c in token[3:])
    return True


Span = tuple[int, int, str, int]  # start, end, the mark's name, where its match began


def _spans(value: str, found: Secrets, pos: int = 0) -> list[Span]:
    """Where each secret and token shape stands in `value` from `pos`, overlaps merged (the
    longest part names the whole), in order."""
    spans: list[Span] = []
    for name, secret in found:
        at = value.find(secret, pos)
        while at >= 0:
            spans.append((at, at + len(secret), name, at))
            at = value.find(secret, at + 1)
    short = len(value) - pos <= _SHORT
    for i, (shapes, _) in enumerate(SHAPES):
        if short:  # no `re` for a plain line (the hooks'), nor a pass per shape
            for fixed in _STARTS[i]:
                if value.find(fixed, pos) >= 0:
                    break
            else:
                continue
        for match in _compiled()[i].finditer(value, pos):
            start, end = origin = match.span()
            name = next((n for n, starts in shapes if value.startswith(starts, start)),
                        shapes[-1][0])
            if name == "url-password":
                start, end = match.span("pw")
                if value.startswith(_MARK, start):
                    continue  # scrubbed already
            elif start and value[start - 1] in _TOKEN_CHARS:
                continue  # inside a word: "task-…", a longer base64 run
            elif not _plausible(name, value[start:end]):
                continue
            spans.append((start, end, name, origin[0]))
    return _merged(spans)


def _merged(spans: list[Span]) -> list[Span]:
    spans.sort(key=lambda s: (s[0], s[0] - s[1]))
    out: list[Span] = []
    for start, end, name, origin in spans:
        if out and start < out[-1][1]:
            first, last, held, began = out[-1]
            longer = held if last - first >= end - start else name
            out[-1] = (first, max(last, end), longer, min(began, origin))
        else:
            out.append((start, end, name, origin))
    return out


def _replaced(value: str, spans: list[Span], start: int, stop: int) -> str:
    parts, at = [], start
    for first, last, name, _ in spans:
        parts += [value[at:first], mark(name)]
        at = last
    parts.append(value[at:stop])
    return "".join(parts)


def _names(spans: list[Span], names: list[str]) -> None:
    for _, _, name, _ in spans:
        if name not in names:
            names.append(name)


def text(value: str, found: Secrets | None = None) -> tuple[str, list[str]]:
    """`value` with every secret and token shape replaced, and the names of those it held,
    in order. `found` is a list from secrets() (council's own by default)."""
    spans = _spans(value, secrets() if found is None else found)
    if not spans:
        return value, []
    names: list[str] = []
    _names(spans, names)
    return _replaced(value, spans, 0, len(value)), names


def clean(value: str) -> str:
    """`value` with every secret and token shape replaced."""
    return text(value)[0]


def holds(value: str, found: Secrets | None = None) -> bool:
    """Whether `value` holds a secret or a token shape: whether text() would change it."""
    return bool(_spans(value, secrets() if found is None else found))


# --- files ---------------------------------------------------------------------------------------


def scrub_file(path: Path, found: Secrets | None = None,
               limit: int | None = None) -> list[str]:
    """Replace every secret and token shape in the file at `path`, in place and atomically,
    reading it in chunks (a report or log may be far larger than memory should hold); the
    names of those it held. A file that holds none is only read; a missing file holds none.

    The file is read through one handle that follows no link (agentfs): anything but a plain
    file (a link to ~/.ssh/id_ed25519 or /proc/self/environ, a FIFO, a hard link to a file of
    the user's) is removed, without following it, and agentfs.UnsafeFile raised, saying what
    stood there; a file larger than `limit` bytes (a sparse terabyte) raises UnsafeFile
    before a byte is read. A file that held a secret but could not be rewritten raises
    OSError, and keeps no copy."""
    found = secrets() if found is None else found
    try:
        fd = agentfs.open_regular(path)
    except FileNotFoundError:
        return []
    except agentfs.UnsafeFile:
        with contextlib.suppress(OSError):
            agentfs.remove(path.parent, path.name)
        raise
    with os.fdopen(fd, "rb", buffering=0) as handle:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise agentfs.UnsafeFile(f"{path} is {size:,} bytes, over the {limit:,} council "
                                     "reads")
        names: list[str] = []
        for _ in _scrubbed(_pieces(handle), found, names, output=False):
            pass
        if not names:
            return []
        handle.seek(0)
        names = []
        agentfs.write(path.parent, path.name, _scrubbed(_pieces(handle), found, names))
    return names


def _pieces(handle: RawIOBase) -> Iterator[bytes]:
    while chunk := handle.read(_CHUNK):
        yield chunk


def _scrubbed(pieces: Iterable[bytes], found: Secrets, names: list[str],
              output: bool = True) -> Iterator[bytes]:
    """The bytes of `pieces` with every secret and shape replaced (their names added to
    `names`), chunk by chunk. Bytes that are not UTF-8 pass through unchanged (decoded with
    surrogateescape). A match may straddle two chunks, so the last `keep` characters (the
    longest match) stay undecided until more text comes; a match that begins before that
    tail but ends inside it waits too, with everything after its start. Without `output`
    it only finds the names (and yields nothing but empty chunks)."""
    decode = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode
    keep = max([len(s) for _, s in found] + [_longest()])
    buf, pos = "", 0  # buf[:pos] is written already: the character before a match is read
    for piece in pieces:
        buf += decode(piece)
        if len(buf) - pos <= keep:
            continue
        spans = _spans(buf, found, pos)
        limit = len(buf) - keep if len(buf) - pos < _HOLD else len(buf)
        cut, chosen = limit, []
        for span in spans:
            if span[3] >= cut:
                break
            if span[1] > limit:  # may be longer than what has come: decide with more
                cut = span[3]
                break
            chosen.append(span)
        if cut <= pos:
            continue
        _names(chosen, names)
        yield _replaced(buf, chosen, pos, cut).encode("utf-8", "surrogateescape") if output \
            else b""
        back = min(cut, 16)
        buf, pos = buf[cut - back:], back
    buf += decode(b"", final=True)
    spans = _spans(buf, found, pos)
    _names(spans, names)
    yield _replaced(buf, spans, pos, len(buf)).encode("utf-8", "surrogateescape") if output \
        else b""
