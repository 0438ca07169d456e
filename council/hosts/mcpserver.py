"""`council mcp`: council as a Model Context Protocol server on stdin/stdout, so that any MCP
client (Claude Desktop, Cursor, VS Code, Zed, Windsurf, Goose, Claude Code, Gemini CLI,
Codex) can start a research council, follow it, and read its report. What each tool does is
mcptools.py's; this module puts it on the protocol.

It is built on the official SDK's low-level `Server` (mcp 2.x), not on `MCPServer` (what
FastMCP is called in mcp 2), because council needs what MCPServer decides for itself:

- A failed call's text is the line `council` prints for the same mistake. MCPServer puts
  "Error executing tool NAME: " before every tool error, and turns a bad argument into
  pydantic's multi-line validation report.
- Each tool answers with a text written for the model and the same facts as structured
  data; MCPServer derives the text from the data.
- The arguments are declared once (`council run`'s options in options.py, the tools' own in
  mcptools.py), and the same declaration gives the JSON Schemas and the checks (in the
  command line's words); MCPServer derives schemas from Python signatures.

The low-level server still does the protocol: the handshake of every version the SDK speaks,
the capabilities (from the handlers given), progress tokens, and stdio framing (while it
serves, fd 1 points at stderr, so nothing stray can corrupt the protocol).

Task-augmented tool calls (spec 2025-11-25) are not offered: mcp 2.3 does not serve them (its
method tables leave tasks/* out of 2025-11-25 on purpose, and the 2026-07-28 revision moves
tasks to an extension it does not ship). Every client can do what they would: start_research
answers at once, and research_status can wait (up to MAX_WAIT s at a time) for the run's end.

Progress: a progress token is only good until its request is answered, and start_research
answers at once, so it reports its own steps (checking, created, supervised); research_status
with `wait` reports the run's phase and percentage while it waits, as long as the client
stays connected.

Each call runs in a worker thread (council's I/O blocks: preflight runs each CLI's
`--version`, a cancel waits for the supervisor to stop its agents), so calls run side by
side and the server keeps answering. An error a user can act on is a tool error in one line;
anything else is a tool error too, naming a crash log, as the command line does. The server
keeps serving either way.
"""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)

from council import __version__
from council.errors import CouncilError
from council.hosts import mcptools
from council.hosts.mcptools import Answer, Call
from council.run import crash
from council.views.status import INTERRUPTED

Context = ServerRequestContext[Any, Any]
Report = Callable[[float, str], Coroutine[Any, Any, None]]
POLL_S = 1.0  # how often a waiting research_status reads the run's state
log = logging.getLogger("council.mcp")

INSTRUCTIONS = (
    "council runs a research council of AI coding CLIs (claude, codex, gemini) on a topic: "
    "they research in parallel, read and check each other's work, and one writes a final "
    "report. A run takes minutes to an hour. start_research answers at once with a run id; "
    "research_status (with wait) follows it; get_report gives the report once it is done.")


def tools() -> list[Tool]:
    """The tools, as tools/list shows them."""
    return [Tool(name=spec.name, title=spec.title, description=spec.description,
                 input_schema=mcptools.input_schema(spec.params), output_schema=spec.output,
                 annotations=ToolAnnotations(title=spec.title, read_only_hint=spec.read_only,
                                             destructive_hint=False,
                                             idempotent_hint=spec.idempotent,
                                             open_world_hint=spec.name == "start_research"))
            for spec in mcptools.TOOLS]


def result(answer: Answer) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=answer.text)],
                          structured_content=answer.data)


def failure(exc: BaseException, tool: str) -> CallToolResult:
    """A tool error: the command line's one line for a CouncilError; for anything else,
    one line naming the crash log that holds the traceback."""
    if isinstance(exc, CouncilError):
        text = mcptools.error_line(exc)
    else:
        where = crash.write_log(exc, f"mcp {tool}")
        text = (f"council: internal error ({crash.summary(exc)}); "
                + (f"details in {where}" if where else "no crash log could be written"))
        log.error("%s", text)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build(base: Path) -> Server[Any]:
    """The server, serving the runs of the research folder `base`."""
    instance = secrets.token_hex(8)  # this process: a request id means nothing past it

    async def list_tools(ctx: Context, params: PaginatedRequestParams | None
                         ) -> ListToolsResult:
        return ListToolsResult(tools=tools())

    async def call_tool(ctx: Context, params: CallToolRequestParams) -> CallToolResult:
        spec = mcptools.BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}: council has "
                           f"{', '.join(mcptools.BY_NAME)}")
        report = _reporter(ctx)
        try:
            args = mcptools.parse(spec.params, spec.name, params.arguments)
            if spec.name == "start_research":
                call = Call(base, instance, ctx.request_id, _from_thread(report))
                answer = await anyio.to_thread.run_sync(spec.run, args, call)
                await report(100, f"run {answer.data['run_id']}: {answer.data['phase']}")
            elif spec.name == "research_status" and args["wait"]:
                answer = await wait(args, Call(base, instance, ctx.request_id), report)
            else:
                answer = await anyio.to_thread.run_sync(
                    spec.run, args, Call(base, instance, ctx.request_id))
        except Exception as exc:  # the server keeps serving whatever one call does
            return failure(exc, spec.name)
        return result(answer)

    async def list_resources(ctx: Context, params: PaginatedRequestParams | None
                             ) -> ListResourcesResult:
        found = await anyio.to_thread.run_sync(mcptools.resources, base)
        return ListResourcesResult(resources=[
            Resource(uri=e.uri, name=e.name, mime_type=e.mime_type, description=e.description,
                     size=e.size) for e in found])

    async def list_templates(ctx: Context, params: PaginatedRequestParams | None
                             ) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=[
            ResourceTemplate(uri_template=address, name=name, mime_type=mime,
                             description=what)
            for address, name, mime, what in mcptools.templates()])

    async def read_resource(ctx: Context, params: ReadResourceRequestParams
                            ) -> ReadResourceResult:
        address = str(params.uri)
        try:
            text, mime = await anyio.to_thread.run_sync(mcptools.read_resource, address, base)
        except CouncilError as exc:
            raise MCPError(INVALID_PARAMS, mcptools.error_line(exc), {"uri": address}) from exc
        return ReadResourceResult(contents=[
            TextResourceContents(uri=address, mime_type=mime, text=text)])

    return Server("council", version=__version__, title="Research council",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources,
                  on_list_resource_templates=list_templates, on_read_resource=read_resource)


def _reporter(ctx: Context) -> Report:
    """Progress notifications for this request: nothing unless the client sent a progress
    token (the SDK drops them then), and nothing once it is gone."""
    async def report(percent: float, message: str) -> None:
        try:
            await ctx.session.report_progress(percent, 100, message)
        except Exception as exc:  # a client that left: the call's answer is what matters
            log.debug("progress not sent: %s", exc)

    return report


def _from_thread(report: Report) -> Callable[[float, str], None]:
    """`report`, callable from the worker thread a call runs in."""
    def note(percent: float, message: str) -> None:
        anyio.from_thread.run(report, percent, message)

    return note


async def wait(args: dict[str, Any], call: Call, report: Report) -> Answer:
    """research_status with `wait`: the run's status once it has ended (or stands still,
    interrupted), or after `wait` seconds; its phase and percentage as progress meanwhile."""
    deadline = anyio.current_time() + args["wait"]
    shown: tuple[str, int] | None = None
    while True:
        answer = await anyio.to_thread.run_sync(mcptools.run_status, args, call)
        args = {**args, "run_id": answer.data["id"]}  # this run, though a newer starts
        phase, percent = answer.data["phase"], answer.data["percent"]
        if (phase, percent) != shown:
            shown = (phase, percent)
            events = [a["last_event"] for a in answer.data["agents"] if a["last_event"]]
            await report(percent, f"{phase} {percent}%" + (f": {events[-1]}" if events else ""))
        left = deadline - anyio.current_time()
        if answer.data["ended"] or phase == INTERRUPTED or left <= 0:
            return answer
        await anyio.sleep(min(POLL_S, left))  # reading the run's state again, not a sync


def serve(base: Path) -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="council mcp: %(levelname)s %(name)s: %(message)s")
    anyio.run(_serve, base)


async def _serve(base: Path) -> None:
    server = build(base)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
