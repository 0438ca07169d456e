"""A seat's own MCP servers (`mcp_servers:` in its config), as each CLI takes them: claude
a `--mcp-config` file (beside `--strict-mcp-config`, so only these count), codex one
`-c mcp_servers={...}` inline table, gemini `mcpServers` in the seat's workspace settings.

What a server sees of the environment: only the basics a process needs (agents/environment's
BASIC and NETWORK) and the variables its `env` names. codex already starts a server with just
those; claude and gemini hand a server their own environment (their vendor's key among it),
so there each command runs through `env -u NAME …`, which drops every other variable the CLI
was given. Only names reach a command line, never a value: the values of `env` go in the
CLI's own settings (claude's file and gemini's are in folders no agent can write).

Pure: the callers write the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from council.agents.environment import BASIC, BASIC_PREFIXES, NETWORK
from council.runoptions import McpServer


def dropped(cli_env: Iterable[str], server: McpServer) -> list[str]:
    """The variables of the CLI's environment (`cli_env`: names) a server must not inherit:
    every one but the basics and the ones its own `env` sets."""
    own = {name for name, _ in server.env}
    return sorted(n for n in set(cli_env) if n not in BASIC and n not in NETWORK
                  and not n.startswith(BASIC_PREFIXES) and n not in own)


def _stdio(server: McpServer, cli_env: Iterable[str]) -> tuple[str, list[str]]:
    """The command and arguments that start `server` without the CLI's other variables."""
    unset = [arg for name in dropped(cli_env, server) for arg in ("-u", name)]
    if not unset:
        return str(server.command), list(server.args)
    return "env", [*unset, "--", str(server.command), *server.args]


def claude_config(servers: Sequence[McpServer], cli_env: Iterable[str]) -> dict[str, Any]:
    """The `--mcp-config` file's content: `{"mcpServers": {name: …}}`."""
    table: dict[str, Any] = {}
    for server in servers:
        if server.url is not None:
            table[server.name] = {"type": "http", "url": server.url}
            continue
        command, args = _stdio(server, cli_env)
        table[server.name] = {"type": "stdio", "command": command, "args": args,
                              "env": dict(server.env)}
    return {"mcpServers": table}


def claude_allowed(servers: Sequence[McpServer]) -> list[str]:
    """The `--allowedTools` rules that let claude call every tool of the seat's servers
    (`mcp__<server>`): in `-p` a tool with no allow rule is refused, not asked about."""
    return [f"mcp__{server.name}" for server in servers]


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (a quoted key): `"`, `\\` and every control character
    escaped, so a server named `a.b`, `a b` or `x"=y` stays one key."""
    out = []
    for char in text:
        if char in ('"', "\\") or ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml(value: Any, quoted: bool = False) -> str:
    """A TOML inline value: a string (toml_string), a list, a table. `quoted`: the table's
    keys as quoted strings (a user's server may be named `a.b`); otherwise they are bare, as
    every inner key is (codex's own, or an env name, checked as [A-Za-z_][A-Za-z0-9_]*)."""
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    items = ", ".join(f"{toml_string(str(k)) if quoted else k}={_toml(v)}"
                      for k, v in value.items())
    return "{" + items + "}"


def codex_table(servers: Sequence[McpServer], disabled: Sequence[str]) -> str | None:
    """The one `mcp_servers={...}` override: each server of the user's config (`disabled`)
    turned off, each of the seat's defined, or None when there is neither. One inline table,
    because codex splits a `-c` key at every dot. codex gives a stdio server only its basic
    variables and the ones `env` sets; `required`, so a seat never runs without its server.
    A seat server with a user server's name is refused by
    the caller: the override would merge into the user's entry, not replace it."""
    table: dict[str, Any] = {name: {"enabled": False} for name in disabled}
    for server in servers:
        # required: codex waits for the server before the first model request (else its
        # tools may be missing from the first turns) and exits if it fails to start.
        # approve: the user trusted the server; `codex exec` never asks, so a tool that
        # needs approval is refused ("requires approval, but approval policy is never").
        table[server.name] = ({"url": server.url} if server.url is not None else
                              {"command": server.command, "args": list(server.args),
                               "env": dict(server.env)}) | {
            "required": True, "default_tools_approval_mode": "approve"}
    return None if not table else _toml(table, quoted=True)


def gemini_servers(servers: Sequence[McpServer], cli_env: Iterable[str]) -> dict[str, Any]:
    """The workspace settings' `mcpServers`. `trust: true`: the user named the server, and
    headless gemini refuses a tool call that would need a confirmation."""
    table: dict[str, Any] = {}
    for server in servers:
        if server.url is not None:
            table[server.name] = {"httpUrl": server.url, "trust": True}
            continue
        command, args = _stdio(server, cli_env)
        table[server.name] = {"command": command, "args": args, "env": dict(server.env),
                              "trust": True}
    return table


def gemini_core(servers: Sequence[McpServer]) -> list[str]:
    """The `tools.core` entries that let gemini offer the servers' tools (`mcp_<server>_*`):
    a `tools.core` list denies every tool it does not name, at a priority above a trusted
    server's allow (gemini 0.61's policy: "Core Tools Allowlist Enforcement"), so without
    them the model is offered none ("Tool mcp_web_search not found")."""
    return [f"mcp_{server.name}_*" for server in servers]


def names(servers: Sequence[McpServer]) -> list[str]:
    return [server.name for server in servers]
