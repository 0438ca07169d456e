"""A tiny stdio MCP search server for the real-CLI tests: one tool, `search(query)`, that
returns fixed results. A seat's `mcp_servers` offers it to each CLI
(test_seat_tools_real.py); it answers offline, and its URLs are found nowhere else, so a
model request holding one proves the tool's result came back. It also writes what it saw of
its environment to $SEARCH_LOG (names only), so a test can check no secret reached it."""

from __future__ import annotations

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
            handle.write(json.dumps({"query": query, "env": sorted(os.environ)}) + "\n")
    return "\n".join(f"{url} ({query})" for url in RESULTS)


if __name__ == "__main__":
    app.run("stdio")
