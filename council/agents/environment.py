"""What each agent CLI sees of council's environment: an allow-list, never the whole of it.

Agents read pages anyone can write, and whatever reaches a model can leave in a report or a
fetched URL. A variable an agent does not need must not be within its reach: the other
vendors' keys, cloud and git tokens, database URLs. So every CLI process gets the basics a
process needs (where it runs, its locale and terminal, how to reach the network), the
variables council's own hooks need, and its own vendor's variables (credentials, base URL,
the CLI's settings); a seat's `env` names any others to pass, a corporate proxy's for example.
docs/containment.md has the table."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Any process: where it runs, its user, locale and terminal.
BASIC = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM",
                   "COLORTERM", "NO_COLOR", "TZ", "TMPDIR"})
BASIC_PREFIXES = ("LC_", "XDG_")
# Reaching the network as the user's machine does: proxies and certificate bundles.
NETWORK = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy",
                     "https_proxy", "all_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
                     "NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "REQUESTS_CA_BUNDLE",
                     "CURL_CA_BUNDLE"})
# council's hooks run inside each CLI with council's interpreter. Not PYTHONPATH: the hooks
# run `python -I`, which ignores it, and any other Python an agent's tools start would put
# an empty or relative entry of it (the agent's folder) first on sys.path.
COUNCIL = frozenset({"VIRTUAL_ENV"})
COUNCIL_PREFIXES = ("COUNCIL_",)


@dataclass(frozen=True)
class Vendor:
    """A CLI's own variables: by prefix, by name, and by prefix only when a switch says the
    CLI uses that cloud (claude on Bedrock needs the AWS keys; claude elsewhere must not see
    them)."""

    prefixes: tuple[str, ...]
    names: frozenset[str] = frozenset()
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()


VENDORS = {
    "claude": Vendor(("ANTHROPIC_", "CLAUDE_", "DISABLE_"),
                     frozenset({"MAX_THINKING_TOKENS", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT",
                                "BASH_DEFAULT_TIMEOUT_MS"}),
                     when=(("CLAUDE_CODE_USE_BEDROCK", ("AWS_",)),
                           ("CLAUDE_CODE_USE_VERTEX", ("GOOGLE_", "CLOUD_ML_", "VERTEX_")))),
    "codex": Vendor(("OPENAI_", "CODEX_")),
    "gemini": Vendor(("GEMINI_", "GOOGLE_", "CLOUDSDK_")),
}


def codex_provider_keys(environ: Mapping[str, str]) -> set[str]:
    """The `env_key` of every model provider in codex's config.toml: a key codex itself is
    told to read (a custom provider's, such as a local server's)."""
    home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME") or Path.home()) / ".codex")
    try:
        data = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    providers = data.get("model_providers")
    if not isinstance(providers, dict):
        return set()
    return {str(p["env_key"]) for p in providers.values()
            if isinstance(p, dict) and isinstance(p.get("env_key"), str)}


def rules(cli: str, environ: Mapping[str, str], extra: Iterable[str] = (),
          vendor_vars: bool = True) -> tuple[frozenset[str], tuple[str, ...]]:
    """The names and the prefixes `cli` may see, given council's environment. Without
    `vendor_vars` (a seat on a server the user runs), none of its vendor's: no key, login
    token or base URL of the user's reaches a seat whose CLI talks to another server."""
    vendor = VENDORS[cli] if vendor_vars else Vendor(())
    names = BASIC | NETWORK | COUNCIL | vendor.names | set(extra)
    if cli == "codex" and vendor_vars:
        names |= codex_provider_keys(environ)
    prefixes = [*BASIC_PREFIXES, *COUNCIL_PREFIXES, *vendor.prefixes]
    for switch, more in vendor.when:
        if environ.get(switch, "").strip().lower() not in ("", "0", "false"):
            prefixes.extend(more)
    return frozenset(names), tuple(prefixes)


def agent_env(cli: str, environ: Mapping[str, str] | None = None,
              extra: Iterable[str] = (), vendor_vars: bool = True) -> dict[str, str]:
    """The part of `environ` (council's own, by default) that `cli` may see."""
    environ = os.environ if environ is None else environ
    names, prefixes = rules(cli, environ, extra, vendor_vars)
    return {name: value for name, value in environ.items()
            if name in names or name.startswith(prefixes)}
