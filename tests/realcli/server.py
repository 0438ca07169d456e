"""A scripted model server for running the real claude, codex and gemini CLIs offline.

It speaks just enough of three wire APIs, with streaming (SSE) replies, for each CLI's agent loop:

- Anthropic Messages    ``POST /v1/messages[?beta=true]``                      (claude)
- OpenAI Responses      ``POST /v1/responses``                                 (codex)
- Gemini                ``POST /v1beta/models/<model>:streamGenerateContent``  (gemini)
                        and ``:generateContent`` for side calls (router, web search)

The conversation logic is stateless: every CLI sends the whole history with each request.

- The report path is ``^Report file: (.+)$`` in the first user text that holds it.
- ``t`` is the number of file-writing tool calls already in the history.
- If the last input item is a tool result, the reply is a short text message (ends the turn:
  this is when claude's Stop / gemini's AfterAgent hook fires, or codex's turn completes).
- Otherwise (the prompt, a hook continuation, a codex resume prompt) the reply is one tool call
  that writes the report for turn ``t + 1``: claude ``Write``, codex ``apply_patch`` (or, where
  codex offers none, for a model outside its catalog, ``exec_command`` writing it with ``cat``),
  gemini ``write_file``. The report ends with the marker once the turn reaches ``finish_after``.
- With no report path the reply is the text ``OK.``, or the ``text`` of the first of the
  api's ``answers`` whose ``contains`` is in the conversation's user text (a judge's prompt).

Script (a dict, or the path of a JSON file), per api name ``anthropic``/``openai``/``gemini``::

    {"finish_after": 2,     # turn whose report first ends with the marker
     "status": null,        # e.g. 500: answer every request of this api with it
     "status_count": null,  # only the first N requests of this api get `status`
     "retry_after": null,   # a Retry-After header (seconds) on those answers
     "delay": 0.0,          # seconds to wait before answering
     "hostile": [],         # paths a misbehaving agent tries to write before its report
     "quote_marker": false, # every turn also quotes the marker inline and in fenced code
     "probe": [],           # reads an injected page would ask for, before the first report
     "after_report": [],    # calls a turned agent makes once its report is complete
     "reports": {},         # per report file name: settings that apply to that report only
     "tool_calls": [],      # anthropic: a main session's calls of the tools it was offered
     "verdicts": {},        # claim id → the verdict every verifier gives it
     "answers": [],         # [{"contains": str, "text": str}]: replies to report-less prompts
     "write": null,         # a text every report write puts in place of the scripted one
     "cite": null,          # a base URL the reports and claims cite (a page server's)
     "fault": null}         # a vendor's refusal, from a chosen request on (below)

``hostile`` paths may start with ``{dir}``, the report's folder (the agent's own). Before its
first report write, each agent's model asks for one write per hostile path, each with the
CLI's own write tool; after the CLI answers one (denied, one hopes) it asks for the next, then
goes on as usual. Writes to hostile paths do not count as turns.

``probe`` entries are what a prompt-injected model would try to read, asked for one by one
before the agent's first report write (after the CLI answers one, the next; then on as usual;
probes do not count as turns). A string is a call of the CLI's own read tool: a path for
claude (``Read``) and gemini (``read_file``), a shell command for codex (``exec_command``). A
dict ``{"tool": name, "args": {...}}`` is any other call, sent as given: claude's ``Glob``,
``Grep`` or ``WebFetch``, gemini's ``list_directory``, ``grep_search`` or ``glob``, codex's
``view_image`` or an ``exec_command`` asking ``"sandbox_permissions": "require_escalated"``.
What the CLI answers comes back in the next request, which the log keeps with ``log_bodies``.
``{report}`` (the report's path as the prompt gives it) and ``{dir}`` (its folder) are
replaced in every string of an entry: ``{dir}/refinement-inputs/claude-report.md`` is an
input council copied into the agent's folder.

``after_report`` entries are calls of the same forms, made one by one after the report write
that completes the report (turn ``finish_after`` or later) and before the text that ends the
turn: what an agent turned by a page does once council would take its report as finished
(for codex, ``ln -sf ~/.ssh/id_ed25519 {report}`` or ``mkfifo``), with ``{report}`` and
``{dir}`` replaced as in probes. They do not count as turns.

``reports`` maps a report file's name (``keylink-report.md``) to settings that replace the
api's own for conversations writing that report: one agent of several on the same CLI, or
one phase of an agent, can be scripted apart (``{"openai": {"finish_after": 1, "reports":
{"codex-report.md": {"after_report": ["mkfifo x"]}}}}``).

``tool_calls`` (anthropic only) scripts a main session that uses tools it was offered, an
MCP server's say (claude names them ``mcp__<server>__<tool>``). In a conversation with no
report path whose request offers the first entry's tool, the model makes the entries' calls
one by one, each ``{"tool": name, "args": {...}}``, once the previous one's result is back;
an entry with ``"until": REGEX`` is called again until its latest result matches (a poll).
After the last entry it answers ``FINAL_TEXT``. The log keeps the last call's result
(``tool_result``, its first 20,000 characters). While the due tool is not offered yet
but claude's ``ToolSearch`` is (claude 2.1.33x defers MCP tools' definitions), the model
selects it there first; while claude's ``WaitForMcpServers`` is (its MCP servers are still
connecting), it calls that first; each at most WAITS times, as a model that needs the tool
would. A codex ``probe`` of a tool codex 0.171 defers (an MCP tool, offered only through its
``tool_search`` tool) searches for it first, then calls it by its namespace and name.
``{run_id}`` in a string of ``args`` is the first council run id
(``YYYYMMDD-HHMMSS-xxxxxx``) any tool result held::

    {"anthropic": {"tool_calls": [
        {"tool": "mcp__council__start_research", "args": {"topic": "Tides?"}},
        {"tool": "mcp__council__research_status", "args": {"run_id": "{run_id}", "wait": 30},
         "until": "phase: done"},
        {"tool": "mcp__council__get_report", "args": {"run_id": "{run_id}"}}]}}

``fault`` answers model requests with one of the vendor's own refusals (FAULTS: the bodies
and headers each vendor sends), from a chosen request on, for a count or a time::

    {"openai": {"fault": {"name": "usage_limit",  # a name of FAULTS[api], or "cut", "stall"
                          "from": 1,       # the api's Nth model request (1: the first) on
                          "from_turn": null,  # or: the first request of report turn N on
                          "count": null,   # only so many faulted requests, then normal ones
                          "seconds": null, # or only for so long after the first fault
                          "models": null,  # only requests for these models (gemini's chain)
                          "retry_after": null, "resets_in": null, "retry_delay": null,
                          "message": null}}}  # the body's error message, in its place

- ``retry_after`` (seconds) replaces a fault's Retry-After header, or adds one; ``resets_in``
  (seconds from now) sets the reset a plan limit names; ``retry_delay`` a Google RetryInfo's
  ``retryDelay`` (``"60s"``). ``message`` replaces the text of the body's error message (a
  server that says what it likes: escape sequences, markup).
- ``cut``: the stream starts (HTTP 200, the first events, part of a text) and the connection
  closes before the response ends.
- ``stall``: nothing is sent, not even headers, until the client gives up (it closes the
  connection) or ``release_stalls()`` is called. ``stall_stream`` sends the headers and the
  first events, then nothing. No sleep: the handler waits on an event and on the socket, and
  a test waits for a stall to start or end with ``wait_stalls()``.
- A request's turn (``from_turn``) is the report turn it works on: the turn it would write, or
  for the answer to a write's result, the turn just written.
- The log line of a faulted request says ``fault <name>`` in ``answer``.

Each request is logged as one JSON line. Stdlib only.

    with ScriptedServer({"anthropic": {"finish_after": 3}}, log_path) as srv:
        env["ANTHROPIC_BASE_URL"] = srv.url
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import re
import select
import shlex
import socket
import stat
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

MARKER = "<!-- RESEARCH_COMPLETE -->"
REPORT_RE = re.compile(r"^Report file: (.+)$", re.MULTILINE)
APIS = ("anthropic", "openai", "gemini")
CLI_OF = {"anthropic": "claude", "openai": "codex", "gemini": "gemini"}
DEFAULTS: dict[str, Any] = {"finish_after": 2, "status": None, "delay": 0.0, "hostile": [],
                            "status_count": None, "retry_after": None, "probe": [],
                            "after_report": [], "reports": {}, "tool_calls": [],
                            "answers": [], "write": None, "verdicts": {}, "fault": None,
                            "cite": None}
LOGGED_HEADERS = ("x-claude-code-session-id", "session-id", "thread-id", "user-agent")
FINAL_TEXT = "Report updated."
HOSTILE = "written by an agent that was told to stay in its folder\n"

# The read tool a probe given as a string uses, per api (a dict names its own tool).
PROBE_TOOLS = {"anthropic": "Read", "openai": "exec_command", "gemini": "read_file"}

# File-writing tools, per api, counted to find the turn number.
WRITE_TOOLS = {
    "anthropic": {"Write", "Edit", "MultiEdit"},
    "openai": {"apply_patch"},
    "gemini": {"write_file", "replace"},
}

# The end of a report written through codex's shell, where codex offers no apply_patch (a
# model outside its bundled catalog, docs/local.md): the call counts as a write.
SHELL_WRITE = "COUNCIL_MOCK_REPORT"

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_mock{next(_ids):06d}{int(time.time() * 1000) % 10**6:06d}"


# --------------------------------------------------------------------------- the report
def report(cli: str, n: int, finish_after: int, quote_marker: bool = False,
           cite: str | None = None) -> str:
    """The mock report after turn n: one section per turn, the marker once n >= finish_after.
    With quote_marker every turn also quotes the marker, inline and in fenced code."""
    lines = [
        "# Mock report",
        "",
        "## Executive Summary",
        "",
        f"Scripted research by the {cli} seat of the mock council.",
    ]
    for k in range(1, n + 1):
        lines += [
            "",
            f"## Turn {k}",
            "",
            f"Finding {k} from {cli}: the scripted server answered turn {k}. "
            f"Source: {cite or 'https://example.org'}/{cli}/{k}",
        ]
        if quote_marker:
            lines += ["", f"A finished report ends with {MARKER} on a line of its own:", "",
                      "```markdown", "## Sources", MARKER, "```"]
    if n >= finish_after:
        lines += ["", MARKER]
    return "\n".join(lines) + "\n"


def content(cli: str, conv: Conversation, n: int, finish_after: int,
            quote_marker: bool = False, write: str | None = None,
            verdicts: Mapping[str, str] | None = None, cite: str | None = None) -> str:
    """What a turn writes: `write` when the script gives it (with the marker once due);
    council's JSON answers (the claims list, a verifier's verdicts) for those files, read
    from the prompt; a follow-up answer (`council ask`) resting on the first claim its
    prompt lists; the mock report otherwise. `verdicts` (the script's) gives a claim id its
    verdict in place of the usual one. `cite` (the script's) is the base URL the reports and
    the claims cite in place of https://example.org; each claim then cites `{cite}/shared`
    too, so every verifier is given one page in common."""
    path = conv.report_path or ""
    text = "\n".join(conv.texts)
    if write is not None:
        return write + (f"\n{MARKER}\n" if n >= finish_after else "")
    if path.endswith("ask-answer.md"):
        found = re.search(r"^- (c\d+) \((\w+)\): Scripted claim \d+, made by (\w+)\.", text,
                          re.M)
        said = (f"From the run's evidence: {found.group(1)} ({found.group(2)}) says so; "
                f"see https://example.org/{found.group(3)}/1.\n" if found else
                "The run's evidence does not answer this.\n")
        return said + (f"\n{MARKER}\n" if n >= finish_after else "")
    if path.endswith("scope-draft.json"):
        return json.dumps({
            "questions": [{"id": f"q{i}", "question": f"Scripted sub-question {i}?"}
                          for i in range(1, 4)],
            "dimensions": [{"id": f"d{i}", "dimension": f"Scripted dimension {i}"}
                           for i in range(1, 4)]}) + "\n"
    if path.endswith(("claims-draft.json", "recheck-draft.json")):  # either judgement
        found = re.search(r'"agent" is one of: ([^;\n]+);', text)
        agents = [a.strip() for a in found.group(1).split(",")] if found else [cli]
        answer: dict[str, Any] = {"claims": [
            {"id": f"c{i}", "agent": agent, "claim": f"Scripted claim {i}, made by {agent}.",
             "sources": [f"{cite or 'https://example.org'}/{agent}/1",
                         *([f"{cite}/shared"] if cite else [])]}
            for i, agent in enumerate(agents, 1)]}
        if "judge the reports against that checklist" in text:  # the run has a scope
            questions = list(dict.fromkeys(re.findall(r"^- (q\d+): ", text, re.M)))
            dimensions = list(dict.fromkeys(re.findall(r"^- (d\d+): ", text, re.M)))
            answer["questions"] = [
                {"id": q, "status": ("answered", "partial", "open")[min(i, 2)],
                 "claims": [f"c{i + 1}"] if i < len(agents) else []}
                for i, q in enumerate(questions)]
            answer["dimensions"] = [{"id": d, "covered": i < 2}
                                    for i, d in enumerate(dimensions)]
        return json.dumps(answer) + "\n"
    if path.endswith("-verdicts.json"):
        ids = list(dict.fromkeys(re.findall(r"^- (c\d+): ", text, re.M)))
        return json.dumps({"verdicts": [
            {"id": cid, "verdict": (verdicts or {}).get(
                cid, "CONTRADICTED" if i == 0 else "SUPPORTED"),
             "evidence": f"scripted evidence about {cid} (https://example.org/evidence)"}
            for i, cid in enumerate(ids)]}) + "\n"
    return report(cli, n, finish_after, quote_marker, cite)


def edit_call(conv: Conversation, history: list[tuple[str, str]],
              settings: Mapping[str, Any]) -> dict[str, Any]:
    """A claude seat offered Edit but not Write (a --since run's synthesis, which patches the
    earlier report already in its report file): Read the file first, as claude requires, then
    one Edit per turn: before turn ``finish_after`` the first ``Finding`` line gets a sentence
    added, at it the marker goes after the last line. Nothing else of the file is touched."""
    path = conv.report_path or ""
    if not any(name == "Read" for name, _ in history):
        return {"name": "Read", "input": {"file_path": path}}
    text = plain_text(Path(path)) or ""
    lines = [line for line in text.splitlines() if line.strip()]
    n = conv.t + 1
    if n < int(settings.get("finish_after") or DEFAULTS["finish_after"]):
        old = next((line for line in lines if line.startswith("Finding ")
                    and text.count(line) == 1), lines[0] if lines else "")
        return {"name": "Edit", "input": {"file_path": path, "old_string": old,
                                          "new_string": old + " Checked again."}}
    old = lines[-1] if lines else ""
    return {"name": "Edit", "input": {"file_path": path, "old_string": old,
                                      "new_string": old + "\n\n" + MARKER}}


def update_patch(rel_path: str, old: str, new: str) -> str:
    """An apply_patch ``*** Update File`` turning `old` into `new`.

    The hunk's context is the last line the two share before they differ (for an appended turn:
    the file's current last section line); lines after it are removed and added. With nothing
    shared, the hunk replaces every line."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    common = 0
    while (common < min(len(old_lines), len(new_lines))
           and old_lines[common] == new_lines[common]):
        common += 1
    # A blank context line would match the first blank line of the file: back off to text.
    ctx = common
    while ctx > 0 and not old_lines[ctx - 1].strip():
        ctx -= 1
    hunk = [f" {line}" for line in old_lines[ctx - 1:ctx]] if ctx else []
    hunk += [f"-{line}" for line in old_lines[ctx:]]
    hunk += [f"+{line}" for line in new_lines[ctx:]]
    return "*** Begin Patch\n*** Update File: " + rel_path + "\n@@\n" + "\n".join(hunk) + \
        "\n*** End Patch\n"


def add_patch(rel_path: str, content: str) -> str:
    body = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {rel_path}\n{body}*** End Patch\n"


# --------------------------------------------------------------------------- conversations
class Conversation:
    """What the server needs from one request: report path, t, and what the last item is."""

    def __init__(self, report_path: str | None, t: int, last_is_tool_result: bool,
                 model: str | None, cwd: str | None = None,
                 texts: list[str] | None = None, targets: list[str] | None = None,
                 probes: int = 0, last_is_probe: bool = False, since_write: int = 0) -> None:
        self.texts = texts or []
        self.probes = probes  # probe calls already made
        self.since_write = since_write  # calls other than writes since the last write
        self.last_is_probe = last_is_probe
        self.targets = targets or []  # the path of each file-writing call, in order
        self.report_path = report_path
        self.t = t
        self.last_is_tool_result = last_is_tool_result
        self.model = model
        self.cwd = cwd


def _is_probe(api: str, call: str) -> bool:
    """Whether a tool call of the history was a probe: the server's only calls are probes,
    hostile writes and report writes, so any call but a write."""
    return bool(call) and call not in WRITE_TOOLS[api]


def probe_call(api: str, probe: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A probe entry as (tool name, arguments) for `api`."""
    if isinstance(probe, Mapping):
        return str(probe["tool"]), dict(probe.get("args") or {})
    if api == "openai":
        return "exec_command", {"cmd": probe, "login": False, "yield_time_ms": 2000}
    return PROBE_TOOLS[api], {"file_path": probe}


def filled(entry: Any, conv: Conversation) -> Any:
    """A ``probe`` or ``after_report`` entry with ``{report}`` and ``{dir}`` replaced, in
    every string of it, by the report's path and folder."""
    path = conv.report_path or ""
    folder = str(Path(path).parent) if path else ""
    if isinstance(entry, str):
        return entry.replace("{report}", path).replace("{dir}", folder)
    if isinstance(entry, Mapping):
        return {k: filled(v, conv) for k, v in entry.items()}
    if isinstance(entry, list):
        return [filled(v, conv) for v in entry]
    return entry


def after_call(api: str, entry: str | Mapping[str, Any],
               conv: Conversation) -> tuple[str, dict[str, Any]]:
    """An ``after_report`` entry as (tool name, arguments)."""
    return probe_call(api, filled(entry, conv))


def for_report(settings: Mapping[str, Any], conv: Conversation) -> dict[str, Any]:
    """The api's settings, with those ``reports`` gives for this conversation's report file."""
    name = Path(conv.report_path).name if conv.report_path else None
    own = (settings.get("reports") or {}).get(name) if name else None
    if not own:
        return dict(settings)
    return {**settings, **{k: v for k, v in own.items() if v is not None or k == "status"}}


def plain_text(path: Path, limit: int = 64 << 20) -> str | None:
    """The text of the plain file at `path`, or None: a link is not followed, a FIFO is not
    waited on and a file over `limit` bytes (a sparse terabyte) is not read, whatever an
    agent left at its report's name."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return handle.read(limit).decode("utf-8", errors="replace")


def _first_report_path(texts: list[str]) -> str | None:
    for text in texts:
        match = REPORT_RE.search(text)
        if match:
            return match.group(1).strip()
    return None


WAIT_TOOL = "WaitForMcpServers"  # claude offers it while an MCP server is connecting
WAITS = 5
# claude 2.1.33x defers the definitions of most tools, MCP tools included: the model names
# one in a ToolSearch call (`select:<name>`) and can call it from the next request on.
SEARCH_TOOL = "ToolSearch"
RUN_ID_RE = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")


def anthropic_tool_history(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each tool call of the conversation, in order, as (tool name, its result's text; ""
    while none came back)."""
    names: dict[str, str] = {}
    order: list[str] = []
    results: dict[str, str] = {}
    for message in body.get("messages") or []:
        blocks = message.get("content")
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
                order.append(str(block.get("id")))
            elif block.get("type") == "tool_result":
                given = block.get("content")
                parts = [{"text": given}] if isinstance(given, str) else given or []
                results[str(block.get("tool_use_id"))] = "\n".join(
                    str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return [(names[i], results.get(i, "")) for i in order]


def next_tool_call(entries: list[Mapping[str, Any]], history: list[tuple[str, str]]
                   ) -> tuple[str, dict[str, Any]] | None:
    """The ``tool_calls`` entry due after `history`, as (tool name, arguments), or None
    when every entry is done."""
    due = 0
    for name, result in history:
        if due < len(entries) and name == entries[due]["tool"]:
            until = entries[due].get("until")
            if until is None or re.search(str(until), result):
                due += 1
    if due >= len(entries):
        return None
    found = next((m.group(0) for _, result in history
                  if (m := RUN_ID_RE.search(result)) is not None), "")

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{run_id}", found)
        if isinstance(value, Mapping):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    return str(entries[due]["tool"]), fill(dict(entries[due].get("args") or {}))


def offers(body: Mapping[str, Any], tool: str) -> bool:
    """Whether the request offers the model this tool."""
    return any(isinstance(t, dict) and t.get("name") == tool for t in body.get("tools") or [])


def anthropic_conversation(body: Mapping[str, Any]) -> Conversation:
    user_texts: list[str] = []
    targets: list[str] = []
    t = probes = since = 0
    last_call = ""
    last: Mapping[str, Any] | None = None
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "system":  # Claude Code puts context blocks there; tolerate them
            continue
        last = message
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if role == "user" and block.get("type") == "text":
                user_texts.append(str(block.get("text", "")))
            if role == "assistant" and block.get("type") == "tool_use":
                last_call = str(block.get("name"))
                probes += last_call not in WRITE_TOOLS["anthropic"]
                since = 0 if last_call in WRITE_TOOLS["anthropic"] else since + 1
            if (role == "assistant" and block.get("type") == "tool_use"
                    and block.get("name") in WRITE_TOOLS["anthropic"]):
                t += 1
                given = block.get("input")
                targets.append(str(given.get("file_path") if isinstance(given, dict) else ""))
    last_is_tool = False
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), list):
        last_is_tool = any(isinstance(b, dict) and b.get("type") == "tool_result"
                           for b in last["content"])
    return Conversation(_first_report_path(user_texts), t, last_is_tool, body.get("model"),
                        texts=user_texts, targets=targets, probes=probes,
                        last_is_probe=last_is_tool and _is_probe("anthropic", last_call),
                        since_write=since)


def openai_deferred(body: Mapping[str, Any], tool: str) -> bool:
    """Whether codex hides `tool` behind its `tool_search` tool (codex 0.171 defers MCP
    tools: "Deferred tool namespaces: mcp__web"): it offers tool_search but not the tool,
    and no tool_search of the conversation has been answered yet, so the model searches."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if not any(t.get("type") == "tool_search" for t in tools):
        return False
    if any(t.get("name") == tool for t in tools):
        return False
    items = body.get("input")
    return not any(isinstance(i, dict) and i.get("type") == "tool_search_output"
                   for i in items or [] if isinstance(items, list))


def openai_found(body: Mapping[str, Any], tool: str) -> tuple[str, str] | None:
    """`tool` (`mcp__web__search`) as an answered tool_search returned it: (its namespace,
    its name in it), `("mcp__web", "search")`; the model calls it by both."""
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("type") != "tool_search_output":
            continue
        for space in item.get("tools") or []:
            for inner in space.get("tools") or [] if isinstance(space, dict) else []:
                if f"{space.get('name')}__{inner.get('name')}" == tool:
                    return str(space.get("name")), str(inner.get("name"))
    return None


def openai_conversation(body: Mapping[str, Any]) -> Conversation:
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    items = [i for i in items or [] if isinstance(i, dict)]
    user_texts: list[str] = []
    targets: list[str] = []
    t = probes = since = 0
    last_call = ""
    cwd = None
    for item in items:
        kind = item.get("type", "message")
        if kind in ("custom_tool_call", "function_call"):
            last_call = str(item.get("name"))
            if last_call == "exec_command" and SHELL_WRITE in str(item.get("arguments")):
                last_call = "apply_patch"  # a report written through the shell
            probes += last_call not in WRITE_TOOLS["openai"]
            since = 0 if last_call in WRITE_TOOLS["openai"] else since + 1
        if kind == "message" and item.get("role") == "user":
            content = item.get("content")
            parts = [{"text": content}] if isinstance(content, str) else content or []
            for part in parts:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    user_texts.append(part["text"])
                    found = re.search(r"<cwd>(.*?)</cwd>", part["text"])
                    if found:
                        cwd = found.group(1).strip()
        elif kind in ("custom_tool_call", "function_call") and \
                last_call in WRITE_TOOLS["openai"]:
            t += 1
            found = re.search(r"^\*\*\* (?:Add|Update) File: (.+)$",
                              str(item.get("input") or item.get("arguments") or ""), re.M)
            targets.append(found.group(1).strip() if found else "")
    last_kind = None
    for item in reversed(items):
        kind = item.get("type", "message")
        if kind == "reasoning":
            continue
        last_kind = kind
        break
    last_is_tool = last_kind in ("function_call_output", "custom_tool_call_output")
    return Conversation(_first_report_path(user_texts), t, last_is_tool, body.get("model"), cwd,
                        texts=user_texts, targets=targets, probes=probes,
                        last_is_probe=last_is_tool and _is_probe("openai", last_call),
                        since_write=since)


def gemini_conversation(body: Mapping[str, Any], model: str | None) -> Conversation:
    user_texts: list[str] = []
    targets: list[str] = []
    t = probes = since = 0
    last_call = ""
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    for content in contents:
        role = content.get("role", "user")
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if role == "user" and isinstance(part.get("text"), str):
                user_texts.append(part["text"])
            call = part.get("functionCall")
            if role == "model" and isinstance(call, dict):
                last_call = str(call.get("name"))
                probes += last_call not in WRITE_TOOLS["gemini"]
                since = 0 if last_call in WRITE_TOOLS["gemini"] else since + 1
            if role == "model" and isinstance(call, dict) and \
                    call.get("name") in WRITE_TOOLS["gemini"]:
                t += 1
                targets.append(str((call.get("args") or {}).get("file_path")))
    last_is_tool = bool(contents) and any(
        isinstance(p, dict) and "functionResponse" in p for p in contents[-1].get("parts") or [])
    return Conversation(_first_report_path(user_texts), t, last_is_tool, model,
                        texts=user_texts, targets=targets, probes=probes,
                        last_is_probe=last_is_tool and _is_probe("gemini", last_call),
                        since_write=since)


# --------------------------------------------------------------------------- wire formats
def sse(event: str | None, data: Mapping[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


USAGE_IN, USAGE_OUT = 120, 30


def anthropic_events(model: str, tool: dict[str, Any] | None, text: str | None) -> Iterator[bytes]:
    msg_id = _id("msg")
    yield sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": USAGE_IN, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
    if tool is not None:
        block = {"type": "tool_use", "id": _id("toolu"), "name": tool["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text or ""}
        stop = "end_turn"
    yield sse("content_block_start",
              {"type": "content_block_start", "index": 0, "content_block": block})
    yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": USAGE_OUT}})
    yield sse("message_stop", {"type": "message_stop"})


def anthropic_message(model: str, tool: dict[str, Any] | None, text: str | None) -> dict[str, Any]:
    if tool is not None:
        content = [{"type": "tool_use", "id": _id("toolu"), "name": tool["name"],
                    "input": tool["input"]}]
    else:
        content = [{"type": "text", "text": text or ""}]
    return {"id": _id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if tool else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT}}


def openai_events(model: str, patch: str | None, text: str | None,
                  call: tuple[str, dict[str, Any]] | None = None,
                  search: str | None = None,
                  namespace: str | None = None) -> Iterator[bytes]:
    resp_id = _id("resp")
    base = {"id": resp_id, "object": "response", "created_at": int(time.time()),
            "model": model, "output": []}
    yield sse("response.created",
              {"type": "response.created", "response": {**base, "status": "in_progress"}})
    item: dict[str, Any]
    if search is not None:  # codex's own tool_search, run by codex ("execution": "client")
        item = {"type": "tool_search_call", "id": _id("tsc"), "call_id": _id("call"),
                "status": "completed", "execution": "client",
                # BM25 over the tools' names and descriptions: the words, not `mcp__a__b`
                "arguments": {"query": " ".join(w for w in search.split("__") if w != "mcp"),
                              "limit": 8}}
        yield sse("response.output_item.added", {"type": "response.output_item.added",
                                                 "output_index": 0,
                                                 "item": {**item, "status": "in_progress"}})
    elif call is not None:  # a JSON function call: exec_command (codex's shell), view_image, ...
        item = {"type": "function_call", "id": _id("fc"), "call_id": _id("call"),
                                "name": call[0], "arguments": json.dumps(call[1]),
                                "status": "completed"}
        if namespace is not None:  # a tool a tool_search returned: named in its namespace
            item["namespace"] = namespace
        yield sse("response.output_item.added", {"type": "response.output_item.added",
                                                 "output_index": 0,
                                                 "item": {**item, "status": "in_progress"}})
    elif patch is not None:
        item = {"type": "custom_tool_call", "id": _id("ctc"),
                                "call_id": _id("call"), "name": "apply_patch", "input": patch,
                                "status": "completed"}
        yield sse("response.output_item.added", {"type": "response.output_item.added",
                                                 "output_index": 0,
                                                 "item": {**item, "status": "in_progress"}})
    else:
        item_id = _id("msg")
        body = text or ""
        part = {"type": "output_text", "text": body, "annotations": []}
        item = {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
                "content": [part]}
        yield sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": 0,
            "item": {**item, "status": "in_progress", "content": []}})
        yield sse("response.content_part.added", {
            "type": "response.content_part.added", "item_id": item_id, "output_index": 0,
            "content_index": 0, "part": {**part, "text": ""}})
        yield sse("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
            "content_index": 0, "delta": body})
        yield sse("response.output_text.done", {
            "type": "response.output_text.done", "item_id": item_id, "output_index": 0,
            "content_index": 0, "text": body})
    yield sse("response.output_item.done",
              {"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": USAGE_OUT, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": USAGE_IN + USAGE_OUT}
    yield sse("response.completed", {"type": "response.completed", "response": {
        **base, "status": "completed", "output": [item], "usage": usage}})


def gemini_usage() -> dict[str, int]:
    return {"promptTokenCount": USAGE_IN, "candidatesTokenCount": USAGE_OUT,
            "totalTokenCount": USAGE_IN + USAGE_OUT}


def gemini_chunks(model: str, parts: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Text is split over two chunks; the last chunk has finishReason STOP and usageMetadata."""
    if len(parts) == 1 and "text" in parts[0] and len(parts[0]["text"]) > 1:
        text = parts[0]["text"]
        half = len(text) // 2
        yield {"candidates": [{"content": {"role": "model", "parts": [{"text": text[:half]}]},
                               "index": 0}], "modelVersion": model}
        parts = [{"text": text[half:]}]
    yield {"candidates": [{"content": {"role": "model", "parts": parts},
                           "finishReason": "STOP", "index": 0}],
           "usageMetadata": gemini_usage(), "modelVersion": model}


def dummy_from_schema(schema: Any) -> Any:
    """A value that satisfies a (Gemini or JSON) schema well enough for side calls."""
    if not isinstance(schema, dict):
        return "mock"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: dummy_from_schema(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return max(1, low) if isinstance(low, int | float) else 1
    if kind == "boolean":
        return False
    return "mock"


ERROR_NAMES = {400: ("invalid_request_error", "INVALID_ARGUMENT"),
               401: ("authentication_error", "UNAUTHENTICATED"),
               403: ("permission_error", "PERMISSION_DENIED"),
               404: ("not_found_error", "NOT_FOUND"),
               429: ("rate_limit_error", "RESOURCE_EXHAUSTED"),
               529: ("overloaded_error", "UNAVAILABLE"),
               503: ("overloaded_error", "UNAVAILABLE")}


def error_body(api: str, status: int) -> dict[str, Any]:
    anthropic_type, google_status = ERROR_NAMES.get(status, ("api_error", "INTERNAL"))
    message = f"scripted error {status} from the mock server"
    if api == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    if api == "openai":
        kind = "server_error" if status >= 500 else anthropic_type
        return {"error": {"type": kind, "code": kind, "message": message, "param": None}}
    return {"error": {"code": status, "message": message, "status": google_status}}


# --------------------------------------------------------------------------- vendor faults
# Each vendor's refusals as ../shared/notes/vendor-faults.md recorded them: (status, body,
# headers). `{reset}` in a header or body is the reset's epoch seconds, `{resets_in}` the
# seconds until it, `{retry_delay}` a RetryInfo delay; `retry_after` headers are replaced by the
# fault's own when it gives one.
ANTHROPIC_RATE = ("This request would exceed the rate limit for your organization "
                  "(7f3a1c2e-0000-4000-8000-000000000000) of 50,000 input tokens per minute. "
                  "For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can "
                  "see the response headers for current usage. Please reduce the prompt length "
                  "or the maximum tokens requested, or try again later. You may also contact "
                  "sales at https://www.anthropic.com/contact-sales to discuss your options for "
                  "a rate limit increase.")
OPENAI_QUOTA = ("You exceeded your current quota, please check your plan and billing details. "
                "For more information on this error, read the docs: "
                "https://platform.openai.com/docs/guides/error-codes/api-errors.")
OPENAI_RATE = ("Rate limit reached for gpt-5.5 in organization org-mock on tokens per min "
               "(TPM): Limit 30000, Used 27000, Requested 6000. Please try again in 7.0s. Visit "
               "https://platform.openai.com/account/rate-limits to learn more.")
GOOGLE_QUOTA = ("You exceeded your current quota, please check your plan and billing details. "
                "For more information on this error, head to: "
                "https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current "
                "usage, head to: https://ai.dev/usage?tab=rate-limit. ")


def google_quota(quota_id: str, metric: str, limit: int) -> dict[str, Any]:
    """Google's 429 RESOURCE_EXHAUSTED with its QuotaFailure, Help and RetryInfo details."""
    return {"error": {
        "code": 429,
        "message": GOOGLE_QUOTA + f"\n* Quota exceeded for metric: {metric}, limit: {limit}, "
                   "model: {model}\nPlease retry in {retry_delay}.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": metric, "quotaId": quota_id,
                             "quotaDimensions": {"location": "global", "model": "{model}"},
                             "quotaValue": str(limit)}]},
            {"@type": "type.googleapis.com/google.rpc.Help",
             "links": [{"description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo",
             "retryDelay": "{retry_delay}"}]}}


FAULTS: dict[str, dict[str, tuple[int, dict[str, Any], dict[str, str]]]] = {
    "anthropic": {
        "rate_limit": (429, {"type": "error", "error": {
            "type": "rate_limit_error", "message": ANTHROPIC_RATE},
            "request_id": "req_011CMockRateLimit"},
            {"retry-after": "8", "x-should-retry": "true"}),
        "plan_limit": (429, {"type": "error", "error": {
            "type": "rate_limit_error",
            "message": "This request would exceed your account's rate limit. "
                       "Please try again later."},
            "request_id": "req_011CMockPlanLimit"},
            {"anthropic-ratelimit-unified-status": "rejected",
             "anthropic-ratelimit-unified-reset": "{reset}",
             "anthropic-ratelimit-unified-representative-claim": "five_hour",
             "retry-after": "{resets_in}"}),
        "overloaded": (529, {"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}}, {}),
        "auth": (401, {"type": "error", "error": {
            "type": "authentication_error", "message": "invalid x-api-key"}}, {}),
    },
    "openai": {
        "usage_limit": (429, {"error": {
            "type": "usage_limit_reached", "message": "The usage limit has been reached",
            "plan_type": "plus", "resets_at": "{reset}", "resets_in_seconds": "{resets_in}"}},
            {}),
        "quota": (429, {"error": {"message": OPENAI_QUOTA, "type": "insufficient_quota",
                                  "param": None, "code": "insufficient_quota"}}, {}),
        "rate_limit": (429, {"error": {"message": OPENAI_RATE, "type": "tokens",
                                       "param": None, "code": "rate_limit_exceeded"}}, {}),
        "overloaded": (503, {"error": {"message": "The server is overloaded or not ready yet.",
                                       "type": "server_error", "param": None, "code": None}},
                       {}),
        "auth": (401, {"error": {
            "message": "Incorrect API key provided: dummy. You can find your API key at "
                       "https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}, {}),
    },
    "gemini": {
        "minute_quota": (429, google_quota(
            "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "generativelanguage.googleapis.com/generate_content_free_tier_requests", 10), {}),
        "daily_quota": (429, google_quota(
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
            "generativelanguage.googleapis.com/generate_content_free_tier_requests", 250), {}),
        "overloaded": (503, {"error": {"code": 503, "message": "The model is overloaded. "
                                       "Please try again later.", "status": "UNAVAILABLE"}}, {}),
        "auth": (401, {"error": {
            "code": 401,
            "message": "Request had invalid authentication credentials. Expected OAuth 2 "
                       "access token, login cookie or other valid authentication credential.",
            "status": "UNAUTHENTICATED",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "reason": "ACCESS_TOKEN_EXPIRED",
                         "domain": "googleapis.com",
                         "metadata": {"service": "generativelanguage.googleapis.com",
                                      "method": "google.ai.generativelanguage.v1beta."
                                                "GenerativeService.StreamGenerateContent"}}]}},
            {}),
    },
}
# Faults every api has: they are made of its own stream, not of an error body.
STREAM_FAULTS = ("cut", "stall", "stall_stream")
FAULT_DEFAULTS: dict[str, Any] = {"name": None, "from": 1, "from_turn": None, "count": None,
                                  "seconds": None, "models": None, "retry_after": None,
                                  "resets_in": 9000, "retry_delay": "60s", "message": None}


def fault_answer(api: str, fault: Mapping[str, Any], model: str, now: float
                 ) -> tuple[int, Any, dict[str, str]]:
    """A named HTTP fault of `api` as (status, body, headers), its placeholders filled."""
    status, body, headers = FAULTS[api][str(fault["name"])]
    resets_in = int(fault["resets_in"])
    values = {"{reset}": str(int(now) + resets_in), "{resets_in}": str(resets_in),
              "{retry_delay}": str(fault["retry_delay"]), "{model}": model}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            if value in ("{reset}", "{resets_in}"):  # a number in the vendor's JSON
                return int(values[value])
            for key, text in values.items():
                value = value.replace(key, text)
            return value
        if isinstance(value, Mapping):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    filled_headers = {name: str(fill(text)) for name, text in headers.items()}
    if fault["retry_after"] is not None:
        filled_headers["retry-after"] = str(fault["retry_after"])
    filled = fill(body)
    if fault.get("message") is not None:  # every vendor's body says it in error.message
        filled["error"]["message"] = str(fault["message"])
    return status, filled, filled_headers


def request_turn(api: str, body: Mapping[str, Any], model: str | None) -> int:
    """The report turn a model request works on: the one it would write (a prompt, a hook's
    continuation), or the one just written (the answer to a write's result)."""
    conv = {"anthropic": anthropic_conversation, "openai": openai_conversation}.get(api)
    found = conv(body) if conv else gemini_conversation(body, model)
    return found.t if found.last_is_tool_result else found.t + 1


def cut_stream(api: str, model: str) -> Iterator[bytes]:
    """The first events of a streamed text answer, up to part of its text."""
    if api == "anthropic":
        events = list(anthropic_events(model, None, "A partial answer that never ends"))
        yield from events[:3]  # message_start, content_block_start, the first delta
    elif api == "openai":
        yield from list(openai_events(model, None, "A partial answer that never ends"))[:3]
    else:
        chunk = {"candidates": [{"content": {"role": "model",
                                             "parts": [{"text": "A partial answer "}]},
                                 "index": 0}], "modelVersion": model}
        yield ("data: " + json.dumps(chunk) + "\r\n\r\n").encode()


def is_model_request(api: str, path: str, method: str) -> bool:
    """A request that asks the model for an answer (not a count, a listing, a websocket)."""
    if method != "POST":
        return False
    if api == "anthropic":
        return urlsplit(path).path.endswith("/messages")
    if api == "openai":
        return urlsplit(path).path.endswith("/responses")
    return api == "gemini" and (":generateContent" in path or ":streamGenerateContent" in path)


# --------------------------------------------------------------------------- the server
def load_script(script: Mapping[str, Any] | str | Path | None) -> dict[str, Any]:
    if script is None:
        return {}
    if isinstance(script, str | Path):
        return dict(json.loads(Path(script).read_text(encoding="utf-8")))
    return dict(script)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 120  # an idle keep-alive connection is dropped after this
    _record: dict[str, Any] | None = None  # the current request's log line, until logged

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests go to the JSON log instead

    # ---- plumbing
    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "").lower()
        if encoding == "gzip":
            data = gzip.decompress(data)
        elif encoding == "deflate":
            data = zlib.decompress(data)
        return data

    def _flush_log(self) -> None:
        """Log the request before answering it: once a client has its answer, the log has it."""
        record, self._record = self._record, None
        if record is not None:
            record["ms"] = round((time.time() - record["time"]) * 1000)
            self.server.log(record)

    def _send_json(self, status: int, payload: Any,
                   headers: Mapping[str, str] | None = None) -> None:
        self._flush_log()
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":  # a body after HEAD would corrupt a keep-alive connection
            self.wfile.write(raw)
        self.wfile.flush()

    def _send_sse(self, chunks: Iterator[bytes], end: bool = True) -> None:
        """A 200 event stream of `chunks`; `end` False leaves it unfinished (a cut stream)."""
        self._flush_log()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        if end:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    # ---- dispatch
    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def _handle(self, method: str) -> None:
        started = time.time()
        raw = self._body() if method == "POST" else b""
        split = urlsplit(self.path)
        path, query = split.path, parse_qs(split.query)
        api = classify(path)
        record: dict[str, Any] = {
            "time": started, "api": api, "method": method, "path": self.path,
            "headers": {h: self.headers[h] for h in LOGGED_HEADERS if h in self.headers},
            "bytes": len(raw),  # the request body as the CLI sent it, decompressed
        }
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = {}
            record["bad_json"] = raw[:200].decode(errors="replace")
        self._record = record
        if self.server.log_bodies:
            record["body"] = body
        settings = self.server.settings(api)
        if settings["delay"]:
            time.sleep(float(settings["delay"]))
        try:
            fault = model = None
            if api in APIS and is_model_request(api, self.path, method):
                model = self._model(api, path, body)
                fault = self.server.take_fault(api, settings, body, model)
            if fault is not None:
                self._fault(api, fault, model or "mock-model", record)
            elif api in APIS and settings["status"] and self.server.take_error(api, settings):
                status = int(settings["status"])
                record["answer"] = f"status {status}"
                headers = ({"retry-after": str(settings["retry_after"])}
                           if settings["retry_after"] is not None else {})
                self._send_json(status, error_body(api, status), headers)
            elif self.headers.get("upgrade", "").lower() == "websocket":
                record["answer"] = "404 websocket"
                self._send_json(404, {"error": "no websockets here"})
            elif api == "anthropic" and path.endswith("/messages") and method == "POST":
                self._anthropic(body, settings, record)
            elif api == "openai" and path.endswith("/responses") and method == "POST":
                self._openai(body, settings, record)
            elif api == "gemini" and method == "POST" and (
                    ":generateContent" in path or ":streamGenerateContent" in path):
                self._gemini(path, query, body, settings, record)
            else:
                self._other(api, path, method, body, record)
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.server.log({"time": started, "api": api, "path": self.path,
                             "client_gone": type(exc).__name__})
        except Exception as exc:  # a bug here: say so in the log and to the client
            record["server_error"] = repr(exc)
            if self._record is not None:  # nothing sent yet
                record["answer"] = "500 server bug"
                self._send_json(500, {"error": {"message": f"mock server bug: {exc!r}"}})
            else:
                self.server.log({"time": started, "api": api, "path": self.path,
                                 "server_error": repr(exc)})
            self.close_connection = True
        finally:
            self._flush_log()

    # ---- faults
    @staticmethod
    def _model(api: str, path: str, body: Mapping[str, Any]) -> str | None:
        if api == "gemini":
            match = re.search(r"/models/([^/:]+):", path)
            return match.group(1) if match else None
        return str(body["model"]) if body.get("model") else None

    def _fault(self, api: str, fault: Mapping[str, Any], model: str,
               record: dict[str, Any]) -> None:
        name = str(fault["name"])
        record.update(answer=f"fault {name}", model=model)
        if name in FAULTS[api]:
            status, payload, headers = fault_answer(api, fault, model, time.time())
            self._send_json(status, payload, headers)
        elif name == "cut":
            self._send_sse(cut_stream(api, model), end=False)
            self.close_connection = True
        elif name == "stall_stream":
            self._send_sse(cut_stream(api, model), end=False)
            self._stall(record)
            self.close_connection = True
        elif name == "stall":
            self._flush_log()
            self._stall(record)
            self.close_connection = True
        else:
            raise ValueError(f"no fault {name!r} for {api}: {sorted(FAULTS[api])}, "
                             f"{', '.join(STREAM_FAULTS)}")

    def _stall(self, record: dict[str, Any]) -> None:
        """Answer nothing until the client closes the connection or the test releases it;
        logged when it ends, with who ended it."""
        with self.server.stalls:
            self.server.stalls_started += 1
            self.server.stalls.notify_all()
        ended = "released"
        while not self.server.release.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.2)
            if readable:
                try:
                    gone = self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    gone = True
                if gone:
                    ended = "client gave up"
                    break
        self.server.log({"time": time.time(), "api": record.get("api"),
                         "path": record.get("path"), "stall_ended": ended,
                         "stalled_s": round(time.time() - float(record["time"]), 1)})
        with self.server.stalls:
            self.server.stalls_ended.append(ended)
            self.server.stalls.notify_all()

    # ---- per api
    def _anthropic(self, body: Mapping[str, Any], settings: Mapping[str, Any],
                   record: dict[str, Any]) -> None:
        conv = anthropic_conversation(body)
        settings = for_report(settings, conv)
        model = str(body.get("model") or "mock-model")
        tool = text = None
        calls = settings.get("tool_calls") or []
        if conv.report_path is None and calls and (offers(body, calls[0]["tool"])
                                                   or offers(body, WAIT_TOOL)
                                                   or offers(body, SEARCH_TOOL)):
            history = anthropic_tool_history(body)
            if history:  # what the last call gave the model, for the test to read
                record["tool_result"] = history[-1][1][:20000]
            due = next_tool_call(calls, history)
            waited = sum(name == WAIT_TOOL for name, _ in history)
            searched = sum(name == SEARCH_TOOL for name, _ in history)
            if due is not None and not offers(body, due[0]):
                if offers(body, SEARCH_TOOL) and searched < WAITS:
                    due = (SEARCH_TOOL, {"query": f"select:{due[0]}"})
                elif offers(body, WAIT_TOOL) and waited < WAITS:
                    due = (WAIT_TOOL, {})
            if due is None:
                text = FINAL_TEXT
                record["answer"] = "tool_calls done"
            else:
                tool = {"name": due[0], "input": due[1]}
                record["answer"] = f"tool_call {due[0]} {json.dumps(due[1], sort_keys=True)}"
            if body.get("stream"):
                self._send_sse(anthropic_events(model, tool, text))
            else:
                self._send_json(200, anthropic_message(model, tool, text))
            return
        answer = _decide(conv, record, settings)
        if answer.startswith("probe:"):
            name, args = probe_call("anthropic", filled(settings["probe"][conv.probes], conv))
            tool = {"name": name, "input": args}
        elif answer.startswith("after:"):
            name, args = after_call("anthropic", settings["after_report"][conv.since_write],
                                    conv)
            tool = {"name": name, "input": args}
        elif answer.startswith("hostile:"):
            tool = {"name": "Write", "input": {"file_path": answer[8:], "content": HOSTILE}}
        elif answer == "tool" and not offers(body, "Write") and offers(body, "Edit"):
            tool = edit_call(conv, anthropic_tool_history(body), settings)
            record["answer"] = f"tool {tool['name']} turn {conv.t + 1}"
        elif answer == "tool":
            n = conv.t + 1
            tool = {"name": "Write", "input": {
                "file_path": conv.report_path,
                "content": content("claude", conv, n, settings["finish_after"],
                              bool(settings.get("quote_marker")), settings.get("write"),
                              settings.get("verdicts"), settings.get("cite"))}}
            record["answer"] = f"tool Write turn {n}"
        else:
            text = answer
        if body.get("stream"):
            self._send_sse(anthropic_events(model, tool, text))
        else:
            self._send_json(200, anthropic_message(model, tool, text))

    def _openai(self, body: Mapping[str, Any], settings: Mapping[str, Any],
                record: dict[str, Any]) -> None:
        conv = openai_conversation(body)
        settings = for_report(settings, conv)
        model = str(body.get("model") or "mock-model")
        patch = text = None
        answer = _decide(conv, record, settings)
        if answer.startswith(("probe:", "after:")):
            call = (probe_call("openai", filled(settings["probe"][conv.probes], conv))
                    if answer.startswith("probe:") else
                    after_call("openai", settings["after_report"][conv.since_write], conv))
            if openai_deferred(body, call[0]):
                record["answer"] = f"tool_search {call[0]}"
                self._send_sse(openai_events(model, None, None, search=call[0]))
                return
            found = openai_found(body, call[0])
            if found is not None:
                self._send_sse(openai_events(model, None, None, call=(found[1], call[1]),
                                             namespace=found[0]))
                return
            self._send_sse(openai_events(model, None, None, call=call))
            return
        if answer.startswith("hostile:"):
            patch = add_patch(answer[8:], HOSTILE)
        elif answer == "tool":
            assert conv.report_path is not None
            n = conv.t + 1
            new = content("codex", conv, n, settings["finish_after"],
                              bool(settings.get("quote_marker")), settings.get("write"),
                              settings.get("verdicts"), settings.get("cite"))
            target = Path(conv.report_path)
            if not target.is_absolute() and conv.cwd:
                target = Path(conv.cwd) / target
            # Stateless, but on the same machine: patch the file as it is on disk (a plain
            # file only: never what a link the agent made points to).
            old = plain_text(target)
            if offers(body, "exec_command") and not offers(body, "apply_patch"):
                # a model codex has no metadata for: its shell writes the report
                command = (f"cat > {shlex.quote(conv.report_path)} <<'{SHELL_WRITE}'\n"
                           f"{new}\n{SHELL_WRITE}\n")
                record["answer"] = f"tool exec_command write turn {n}"
                self._send_sse(openai_events(model, None, None, call=(
                    "exec_command", {"cmd": command, "login": False, "yield_time_ms": 2000})))
                return
            if old is None:
                patch = add_patch(conv.report_path, new)
                record["answer"] = f"tool apply_patch add turn {n}"
            else:
                patch = update_patch(conv.report_path, old, new)
                record["answer"] = f"tool apply_patch update turn {n}"
        else:
            text = answer
        self._send_sse(openai_events(model, patch, text))

    def _gemini(self, path: str, query: Mapping[str, list[str]], body: Mapping[str, Any],
                settings: Mapping[str, Any], record: dict[str, Any]) -> None:
        match = re.search(r"/models/([^/:]+):", path)
        model = match.group(1) if match else "mock-model"
        record["model"] = model
        streaming = ":streamGenerateContent" in path
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        tools = body.get("tools") or []
        parts: list[dict[str, Any]]
        if schema:  # router and other structured side calls
            parts = [{"text": json.dumps(dummy_from_schema(schema))}]
            record["answer"] = "side: schema"
        elif any(isinstance(tool, dict) and "googleSearch" in tool for tool in tools):
            parts = [{"text": "The mock server has no web search results for this query."}]
            record["answer"] = "side: web search"
        else:
            conv = gemini_conversation(body, model)
            settings = for_report(settings, conv)
            answer = _decide(conv, record, settings)
            if answer.startswith("probe:"):
                name, args = probe_call("gemini", filled(settings["probe"][conv.probes], conv))
                parts = [{"functionCall": {"name": name, "args": args}}]
            elif answer.startswith("after:"):
                name, args = after_call("gemini", settings["after_report"][conv.since_write],
                                        conv)
                parts = [{"functionCall": {"name": name, "args": args}}]
            elif answer.startswith("hostile:"):
                parts = [{"functionCall": {"name": "write_file", "args": {
                    "file_path": answer[8:], "content": HOSTILE}}}]
            elif answer == "tool":
                n = conv.t + 1
                parts = [{"functionCall": {"name": "write_file", "args": {
                    "file_path": conv.report_path,
                    "content": content("gemini", conv, n, settings["finish_after"],
                              bool(settings.get("quote_marker")), settings.get("write"),
                              settings.get("verdicts"), settings.get("cite"))}}}]
                record["answer"] = f"tool write_file turn {n}"
            else:
                parts = [{"text": answer}]
        chunks = list(gemini_chunks(model, parts))
        if streaming and query.get("alt") == ["sse"]:
            self._send_sse(("data: " + json.dumps(c) + "\r\n\r\n").encode() for c in chunks)
        elif streaming:  # JSON array of chunks
            self._send_json(200, chunks)
        else:
            merged = dict(chunks[-1])
            if len(chunks) > 1:
                text = "".join(c["candidates"][0]["content"]["parts"][0].get("text", "")
                               for c in chunks)
                merged["candidates"] = [{**chunks[-1]["candidates"][0],
                                         "content": {"role": "model", "parts": [{"text": text}]}}]
            self._send_json(200, merged)

    def _other(self, api: str, path: str, method: str, body: Mapping[str, Any],
               record: dict[str, Any]) -> None:
        if path.endswith("/count_tokens") or path.endswith(":countTokens"):
            payload: Any = {"input_tokens": USAGE_IN, "totalTokens": USAGE_IN}
        elif path.rstrip("/").endswith("/models") and method == "GET":
            # The script's `models` (a self-hosted server's listing), in the OpenAI shape
            # (`data`) and the Gemini API's (`models`, named `models/<id>`).
            served = [str(m) for m in self.server.script.get("models") or []]
            payload = {"object": "list",
                       "data": [{"id": m, "object": "model"} for m in served],
                       "models": [{"name": f"models/{m}"} for m in served]}
        else:
            record["answer"] = "404"
            self._send_json(404, {"error": {"message": f"mock: nothing at {method} {path}"}})
            return
        record["answer"] = "200 stub"
        self._send_json(200, payload)


def hostile_paths(conv: Conversation, settings: Mapping[str, Any]) -> list[str]:
    folder = str(Path(conv.report_path).parent) if conv.report_path else ""
    return [str(p).replace("{dir}", folder) for p in settings.get("hostile") or []]


def _decide(conv: Conversation, record: dict[str, Any],
            settings: Mapping[str, Any] | None = None) -> str:
    """'tool' for a report-writing tool call, ('hostile', path) for a write the agent must be
    refused, else the text to answer with."""
    hostile = hostile_paths(conv, settings or {})
    if hostile:
        conv.t = len([t for t in conv.targets if t not in hostile])
    record.update(report_path=conv.report_path, t=conv.t,
                  last_is_tool_result=conv.last_is_tool_result)
    if conv.model:
        record["model"] = conv.model
    if conv.report_path is None:
        said = "\n".join(conv.texts)
        for i, entry in enumerate((settings or {}).get("answers") or []):
            if isinstance(entry, Mapping) and str(entry.get("contains", "")) in said:
                record["answer"] = f"text answers[{i}]"
                return str(entry.get("text", ""))
        record["answer"] = "text OK."
        return "OK."
    probes = [p if isinstance(p, str) else json.dumps(p, sort_keys=True)
              for p in filled((settings or {}).get("probe") or [], conv)]
    if conv.t == 0 and conv.probes < len(probes) and (conv.last_is_probe or
                                                     not conv.last_is_tool_result):
        record["answer"] = f"probe {probes[conv.probes]}"
        return "probe:" + probes[conv.probes]
    if conv.t == 0 and conv.last_is_probe:
        record["answer"] = "tool"
        return "tool"  # every probe answered: on to the report
    tried = [t for t in conv.targets if t in hostile]
    after_hostile = conv.last_is_tool_result and conv.targets and conv.targets[-1] in hostile
    if conv.t == 0 and len(tried) < len(hostile) and (after_hostile or
                                                      not conv.last_is_tool_result):
        record["answer"] = f"hostile write {hostile[len(tried)]}"
        return "hostile:" + hostile[len(tried)]
    after = (settings or {}).get("after_report") or []
    finished = conv.t >= int((settings or {}).get("finish_after") or DEFAULTS["finish_after"])
    if (finished and conv.last_is_tool_result and not after_hostile
            and conv.since_write < len(after)
            and (conv.since_write == 0 or conv.last_is_probe)):
        entry = filled(after[conv.since_write], conv)
        shown = entry if isinstance(entry, str) else json.dumps(entry, sort_keys=True)
        record["answer"] = f"after_report {shown}"
        return f"after:{conv.since_write}"
    if conv.last_is_tool_result and not after_hostile:
        record["answer"] = "text"
        return FINAL_TEXT
    return "tool"


def classify(path: str) -> str:
    if path.startswith("/v1/messages"):
        return "anthropic"
    if path.startswith("/v1/responses"):
        return "openai"
    if path.startswith("/v1beta/") or ":generateContent" in path or \
            ":streamGenerateContent" in path or ":countTokens" in path:
        return "gemini"
    return "other"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, script: dict[str, Any], log_path: Path | None,
                 log_bodies: bool = False) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.script = script
        self.log_path = log_path
        self.log_bodies = log_bodies
        self._lock = threading.Lock()
        self.errors_sent: dict[str, int] = {}
        self.model_requests: dict[str, int] = {}  # per api, every model request so far
        self.faults_sent: dict[str, int] = {}
        self.fault_started: dict[str, float] = {}  # per api, when its first fault was sent
        self.release = threading.Event()  # ends every stall
        self.stalls = threading.Condition()  # notified as a stall starts and as it ends
        self.stalls_started = 0
        self.stalls_ended: list[str] = []  # how each ended: "client gave up", "released"

    def take_fault(self, api: str, settings: Mapping[str, Any], body: Mapping[str, Any],
                   model: str | None) -> dict[str, Any] | None:
        """The scripted fault this model request of `api` gets, or None (counted either way:
        `from` is the api's Nth model request)."""
        given = settings.get("fault")
        with self._lock:
            number = self.model_requests[api] = self.model_requests.get(api, 0) + 1
            if not given:
                return None
            fault = {**FAULT_DEFAULTS, **given}
            if number < int(fault["from"]):
                return None
            if fault["models"] is not None and model not in fault["models"]:
                return None
            if (fault["from_turn"] is not None
                    and request_turn(api, body, model) < int(fault["from_turn"])):
                return None
            sent = self.faults_sent.get(api, 0)
            if fault["count"] is not None and sent >= int(fault["count"]):
                return None
            started = self.fault_started.get(api)  # the first fault starts the clock
            if (started is not None and fault["seconds"] is not None
                    and time.monotonic() - started > float(fault["seconds"])):
                return None
            self.fault_started.setdefault(api, time.monotonic())
            self.faults_sent[api] = sent + 1
            return fault

    def take_error(self, api: str, settings: Mapping[str, Any]) -> bool:
        """Whether this request of `api` gets the scripted error (`status_count` limits it
        to the first N)."""
        if settings["status_count"] is None:
            return True
        with self._lock:
            used = self.errors_sent.get(api, 0)
            if used >= int(settings["status_count"]):
                return False
            self.errors_sent[api] = used + 1
            return True

    def settings(self, api: str) -> dict[str, Any]:
        own = self.script.get(api) or {}
        return {**DEFAULTS, **{k: v for k, v in own.items() if v is not None or k == "status"}}

    def log(self, record: Mapping[str, Any]) -> None:
        if self.log_path is None:
            return
        line = json.dumps(record, sort_keys=True) + "\n"
        with self._lock, self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(line)


class ScriptedServer:
    """The server on 127.0.0.1 in a daemon thread; a context manager.

    `script` may be replaced while it runs (``srv.script = {...}``). `log_bodies` adds each
    request's JSON body to its log line (large: claude and gemini send ~30-100 KB each)."""

    def __init__(self, script: Mapping[str, Any] | str | Path | None = None,
                 log_path: str | Path | None = None, port: int = 0,
                 log_bodies: bool = False) -> None:
        self._script = load_script(script)
        self.log_bodies = log_bodies
        self.log_path = Path(log_path) if log_path is not None else None
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def script(self) -> dict[str, Any]:
        return self._script

    @script.setter
    def script(self, value: Mapping[str, Any] | str | Path | None) -> None:
        self._script = load_script(value)
        if self._server is not None:
            self._server.script = self._script

    def start(self) -> ScriptedServer:
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._server = _Server(self._port, self._script, self.log_path, self.log_bodies)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="scripted-model-server", daemon=True)
        self._thread.start()
        return self

    def wait_stalls(self, started: int = 0, ended: int = 0, timeout: float = 30) -> list[str]:
        """Wait until at least `started` stalls began and `ended` ended (each is notified, no
        polling); how the ended ones ended."""
        assert self._server is not None, "server not started"
        server = self._server
        with server.stalls:
            server.stalls.wait_for(lambda: server.stalls_started >= started
                                   and len(server.stalls_ended) >= ended, timeout)
            return list(server.stalls_ended)

    def release_stalls(self) -> None:
        """Let every stalled request end (its client gets no answer: the connection closes)."""
        if self._server is not None:
            self._server.release.set()

    def stop(self) -> None:
        if self._server is not None:
            self._server.release.set()
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self, api: str | None = None) -> list[dict[str, Any]]:
        """The logged requests so far (optionally of one api)."""
        if self.log_path is None or not self.log_path.exists():
            return []
        out = [json.loads(line) for line in
               self.log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [r for r in out if api is None or r.get("api") == api]

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON script file")
    parser.add_argument("--log", help="JSONL request log")
    parser.add_argument("--log-bodies", action="store_true", help="log request bodies too")
    args = parser.parse_args(argv)
    with ScriptedServer(args.script, args.log, args.port, args.log_bodies) as srv:
        print(srv.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
