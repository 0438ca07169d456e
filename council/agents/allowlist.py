"""The allow-list's parts: what any CLI process may see of council's environment (the basics,
the network, council's own hooks' variables) and what a CLI may see of its own vendor's
(clis.py's prefixes, names and switches). environment.py puts them together for a CLI, with
what its adapter adds; the adapters read these parts (an MCP server of a seat's sees only
the basics: mcp.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from council.clis import Cli

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


def rules(cli: Cli, environ: Mapping[str, str], extra: Iterable[str] = (),
          vendor_vars: bool = True) -> tuple[frozenset[str], tuple[str, ...]]:
    """The names and the prefixes `cli` may see, given council's environment. Without
    `vendor_vars` (a seat on a server the user runs), none of its vendor's: no key, login
    token or base URL of the user's reaches a seat whose CLI talks to another server. A
    vendor's cloud prefixes pass only when its switch is set (claude on Bedrock needs the
    AWS keys; claude elsewhere must not see them)."""
    names = BASIC | NETWORK | COUNCIL | set(extra)
    prefixes = [*BASIC_PREFIXES, *COUNCIL_PREFIXES]
    if vendor_vars:
        names |= set(cli.names)
        prefixes.extend(cli.prefixes)
        for switch, more in cli.when:
            if environ.get(switch, "").strip().lower() not in ("", "0", "false"):
                prefixes.extend(more)
    return frozenset(names), tuple(prefixes)


def visible(cli: Cli, environ: Mapping[str, str], extra: Iterable[str] = (),
            vendor_vars: bool = True) -> dict[str, str]:
    """The part of `environ` that `cli` may see, `extra` names included."""
    names, prefixes = rules(cli, environ, extra, vendor_vars)
    return {name: value for name, value in environ.items()
            if name in names or name.startswith(prefixes)}
