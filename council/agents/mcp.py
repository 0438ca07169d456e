"""A seat's own MCP servers (`mcp_servers:` in its config): what every CLI's format shares.
Each adapter writes them as its CLI takes them: claude a `--mcp-config` file (beside
`--strict-mcp-config`, so only these count), codex one `-c mcp_servers={...}` inline table,
gemini `mcpServers` in the seat's workspace settings.

What a server sees of the environment: only the basics a process needs (agents/allowlist's
BASIC and NETWORK) and the variables its `env` names. codex already starts a server with just
those; claude and gemini hand a server their own environment (their vendor's key among it),
so there each command runs through `env -u NAME …`, which drops every other variable the CLI
was given.

A server's `env` names, for each of its variables, the variable of council's environment
that holds the value (`{REGION: COUNCIL_MCP_REGION}`): the value is read when the CLI starts
(`given`) and goes in the CLI's environment, never in a file or on a command line. claude's
`--mcp-config` and gemini's settings say `${COUNCIL_MCP_REGION}`, which each CLI expands from
its own environment when it reads them; codex, which expands nothing, is handed `REGION`
itself and forwards it by name (`env_vars`).

Pure: the callers write the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from council.agents.allowlist import BASIC, BASIC_PREFIXES, NETWORK
from council.errors import ConfigError
from council.runoptions import McpServer


def given(servers: Sequence[McpServer], environ: Mapping[str, str],
          seat: str = "") -> dict[str, str]:
    """The variables of council's environment (`environ`) the servers' `env` names, with
    their values: what the CLI's environment must hold for them. ConfigError, naming the
    server and the variable, when one is not set."""
    values: dict[str, str] = {}
    for server in servers:
        for name, source in server.env:
            if source not in environ:
                raise ConfigError(
                    f"agents.{seat}.mcp_servers.{server.name}.env: {name} is read from "
                    f"{source}, a variable of council's environment that is not set (env "
                    f"maps the server's variables to council's: {name}: COUNCIL_MCP_{name})")
            values[source] = environ[source]
    return values


def reference(source: str) -> str:
    """How claude's and gemini's MCP settings name a variable of the CLI's environment:
    each expands `${NAME}` when it reads them."""
    return "${" + source + "}"


def dropped(cli_env: Iterable[str], server: McpServer) -> list[str]:
    """The variables of the CLI's environment (`cli_env`: names) a server must not inherit:
    every one but the basics and the ones its own `env` sets."""
    own = {name for name, _ in server.env}
    return sorted(n for n in set(cli_env) if n not in BASIC and n not in NETWORK
                  and not n.startswith(BASIC_PREFIXES) and n not in own)


def stdio(server: McpServer, cli_env: Iterable[str]) -> tuple[str, list[str]]:
    """The command and arguments that start `server` without the CLI's other variables."""
    unset = [arg for name in dropped(cli_env, server) for arg in ("-u", name)]
    if not unset:
        return str(server.command), list(server.args)
    return "env", [*unset, "--", str(server.command), *server.args]


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


def toml_value(value: Any, quoted: bool = False) -> str:
    """A TOML inline value: a string (toml_string), a list, a table. `quoted`: the table's
    keys as quoted strings (a user's server may be named `a.b`); otherwise they are bare, as
    every inner key is (codex's own, or an env name, checked as [A-Za-z_][A-Za-z0-9_]*)."""
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    items = ", ".join(f"{toml_string(str(k)) if quoted else k}={toml_value(v)}"
                      for k, v in value.items())
    return "{" + items + "}"


def names(servers: Sequence[McpServer]) -> list[str]:
    return [server.name for server in servers]
