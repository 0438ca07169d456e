"""A tiny stdio MCP search server for the real-CLI tests: one tool, `search(query)`, that
returns fixed results. A seat's `mcp_servers` offers it to each CLI
(test_seat_tools_real.py); it answers offline, and its URLs are found nowhere else, so a
model request holding one proves the tool's result came back. It also writes what it saw of
its environment to $SEARCH_LOG (names only), so a test can check no secret reached it, and,
when it is given $SEARCH_KEY, the key's sha256 and whether a process above it (the CLI that
started it) holds the key on its command line (test_mcp_env_real.py)."""

from __future__ import annotations

import hashlib
import json
import os

from mcp.server.mcpserver import MCPServer  # mcp 2.x: FastMCP renamed

RESULTS = ["https://tides.example.org/mcp-search-result-1",
           "https://tides.example.org/mcp-search-result-2"]

app = MCPServer("search")


@app.tool()
def search(query: str) -> str:
    """Search the web: result URLs for the query."""
    log = os.environ.get("SEARCH_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"query": query, "env": sorted(os.environ),
                                     **_key_seen()}) + "\n")
    return "\n".join(f"{url} ({query})" for url in RESULTS)


def _key_seen() -> dict[str, object]:
    """What became of $SEARCH_KEY: its sha256, and the command lines of the processes above
    this one (up to the CLI) that hold it, read while they run."""
    key = os.environ.get("SEARCH_KEY")
    if not key:
        return {}
    above: list[str] = []
    holding: list[str] = []
    pid = os.getppid()
    while pid > 1 and len(above) < 6:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                parent = int(handle.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
        above.append(os.path.basename(argv[0].decode(errors="replace")))
        if key.encode() in b"\0".join(argv):
            holding.append(above[-1])
        pid = parent
    return {"key_sha256": hashlib.sha256(key.encode()).hexdigest(), "above": above,
            "argv_holding_key": holding}


if __name__ == "__main__":
    app.run("stdio")
