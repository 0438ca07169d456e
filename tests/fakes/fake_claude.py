# mypy: ignore-errors
# (untyped, as it was as the script bin/claude; ruff checks it)
"""Fake Claude Code CLI (2.1.197 behaviour), headless ``-p`` only. See tests/fakes/README.md.

The code of bin/claude, kept as a module so that Python compiles it once for the
suite's thousands of starts, not at each."""

import json
import os
import re
import sys
import time

import _common as C

VERSION = "2.1.197"
FLAGS = {
    "-p": "print",
    "--print": "print",
    "--verbose": "verbose",
    "--include-hook-events": "include_hook_events",
    "--no-session-persistence": "no_persist",
    "--dangerously-skip-permissions": "skip_perms",
    "--include-partial-messages": "partial",
    "--disable-slash-commands": "no_slash",
    "--strict-mcp-config": "strict_mcp",
    "-c": "continue",
    "--continue": "continue",
    "-v": "version",
    "--version": "version",
    "-h": "help",
    "--help": "help",
}
VALUES = {
    "--settings": "settings",
    "--permission-mode": "permission_mode",
    "--output-format": "output_format",
    "--model": "model",
    "-r": "resume",
    "--resume": "resume",
    "--session-id": "session_id",
    "--max-turns": "max_turns",
    "--append-system-prompt": "append_system_prompt",
    "--system-prompt": "system_prompt",
    "--system-prompt-file": "system_prompt_file",
    "--fallback-model": "fallback_model",
    "--setting-sources": "setting_sources",
}
VARIADIC = {
    "--allowedTools": "allowed",
    "--allowed-tools": "allowed",
    "--disallowedTools": "disallowed",
    "--disallowed-tools": "disallowed",
    "--add-dir": "add_dir",
    "--mcp-config": "mcp_config",
    "--plugin-dir": "plugin_dir",
    "--tools": "tools",
}
CHOICES = {
    "output_format": ("text", "json", "stream-json"),
    "permission_mode": ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"),
}
ALIASES = {
    "haiku": "claude-haiku-4-5-20251001",
    "sonnet": "claude-sonnet-5",
    "opus": "claude-opus-4-8",
    "opus[1m]": "claude-opus-4-8",
    "fable": "claude-fable-5",
}
TOOLS = [
    "Task",
    "Bash",
    "Glob",
    "Grep",
    "ExitPlanMode",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "TodoWrite",
    "WebSearch",
    "BashOutput",
    "KillShell",
    "SlashCommand",
]
HOOK_EVENTS = ("UserPromptSubmit", "Stop", "StopFailure")
COMMAND_NAME_RE = re.compile(r"^[A-Za-z0-9:._-]+$")  # what `/word` must look like to be a command
API_500 = (
    "API Error: 500 Internal server error. This is a server-side issue, usually temporary "
    "— try again in a moment. If it persists, check status.claude.com."
)

# The vendor's refusals claude 2.1.332 retries on its own (crash_kind): its last words, the
# HTTP status, the api_retry events' `error` and the result's api_error_type (docs/faults.md).
API_FAULTS = {
    "rate_limit": (
        "API Error: Request rejected (429) · This request would exceed the rate limit for your "
        "organization (7f3a1c2e-0000-4000-8000-000000000000) of 50,000 input tokens per "
        "minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits.",
        429, "rate_limit", "rate_limit_error"),
    "overloaded": (
        "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again "
        "in a moment.", 529, "overloaded", "overloaded_error"),
    "auth": ("Invalid API key · Fix external API key", 401, "authentication_failed",
             "authentication_error"),
}

# An HTTP 400 as claude 2.1.332 words it (not retried).
API_400 = ('API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
           '"message":"messages: text content blocks must be non-empty"}}')


def split_tools(values):
    """'Read,Write' / 'Read Write' / 'Bash(git log:*)' -> names (no split inside parentheses)."""
    names = []
    for v in values:
        cur, depth = "", 0
        for ch in v:
            depth += ch == "("
            depth -= ch == ")"
            if ch in ", " and depth == 0:
                if cur:
                    names.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            names.append(cur)
    return names


def parse(argv):
    o = {k: [] for k in ("allowed", "disallowed", "add_dir", "mcp_config", "plugin_dir",
                         "tools")}
    o["positional"] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            o["positional"] += argv[i:]
            break
        if not a.startswith("-") or a == "-":
            o["positional"].append(a)
            continue
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in FLAGS and not eq:
            o[FLAGS[name]] = True
        elif name in VALUES:
            if not eq:
                if i >= len(argv):
                    raise SystemExit(
                        usage_error(f"error: option '{name} <value>' argument missing")
                    )
                val = argv[i]
                i += 1
            key = VALUES[name]
            if key in CHOICES and val not in CHOICES[key]:
                raise SystemExit(
                    usage_error(
                        f"error: option '{name} <{key}>' argument '{val}' is invalid. "
                        f"Allowed choices are {', '.join(CHOICES[key])}."
                    )
                )
            o[key] = val
        elif name in VARIADIC:
            vals = [val] if eq else []
            while not eq and i < len(argv) and not argv[i].startswith("-"):
                vals.append(argv[i])
                i += 1
            if not vals:
                raise SystemExit(
                    usage_error(f"error: option '{name} <values...>' argument missing")
                )
            o[VARIADIC[name]] += vals
        else:
            raise SystemExit(usage_error(f"error: unknown option '{name}'"))
    if len(o["positional"]) > 1:
        raise SystemExit(
            usage_error(
                f"error: too many arguments. Expected 1 argument but got {len(o['positional'])}."
            )
        )
    return o


def usage_error(msg):
    C.err(msg)
    return 1


def project_dir_name(cwd):
    return "".join(ch if ch.isalnum() else "-" for ch in cwd)


def command_hooks(cfg, into, env=None, root=None):
    """Append the command hooks of a settings/hooks.json object to ``into`` (event -> list)."""
    for ev in HOOK_EVENTS:
        for group in ((cfg or {}).get("hooks") or {}).get(ev) or []:
            for h in (group or {}).get("hooks") or []:
                if isinstance(h, dict) and h.get("type") == "command" and h.get("command"):
                    if root:
                        h = {**h, "command": h["command"].replace("${CLAUDE_PLUGIN_ROOT}", root)}
                    into[ev].append({**h, "env": env or {}})


def parse_command_file(text):
    """commands/<name>.md -> (frontmatter dict, body). Frontmatter: `key: value` lines between
    a leading `---` line and the next `---` line; the body is everything after that line."""
    lines = text.splitlines(True)
    meta = {}
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], 1):
            if line.strip() == "---":
                for entry in lines[1:i]:
                    key, sep, val = entry.partition(":")
                    if sep and key.strip():
                        meta[key.strip()] = val.strip()
                return meta, "".join(lines[i + 1 :])
    return meta, text


def load_plugin(path, home):
    """--plugin-dir DIR -> {name, path, commands: {cmd: (meta, body)}, hooks: {event: [...]}}."""
    root = os.path.abspath(path)
    manifest = C.load_json_file(os.path.join(root, ".claude-plugin", "plugin.json")) or {}
    name = str(manifest.get("name") or os.path.basename(root))
    commands = {}
    cdir = os.path.join(root, "commands")
    for fn in sorted(os.listdir(cdir)) if os.path.isdir(cdir) else []:
        if fn.endswith(".md"):
            with open(os.path.join(cdir, fn), encoding="utf-8") as fh:
                commands[fn[:-3]] = parse_command_file(fh.read())
    data = os.path.join(
        home, ".claude", "plugins", "data", re.sub(r"[^\w-]", "-", name + "-inline")
    )
    os.makedirs(data, exist_ok=True)
    hooks = {ev: [] for ev in HOOK_EVENTS}
    env = {"CLAUDE_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_DATA": data}
    command_hooks(C.load_json_file(os.path.join(root, "hooks", "hooks.json")), hooks, env, root)
    return {"name": name, "path": root, "commands": commands, "hooks": hooks}


class Claude:
    def __init__(self, argv):
        self.argv = argv
        self.cwd = os.getcwd()
        self.seat = os.path.basename(self.cwd)
        self.log = C.Log("claude", self.seat)
        self.started = False
        self.rbase = 0  # session turns before the report path was known
        self.last_uuid = None
        self.unwritten = []  # transcript lines not yet on disk (see record)
        self.prompt_id = C.uuid4()  # one per typed prompt: its UserPromptSubmit and every Stop

    def start_log(self, stdin_prompt=False):
        if not self.started:
            self.started = True
            self.log("start", argv=self.argv, cwd=self.cwd, stdin_prompt=stdin_prompt)

    def die(self, code, msg=None):
        self.start_log()
        if msg:
            C.err(msg)
        C.finish(self.log, code)

    # ------------------------------------------------------------ setup
    def load_settings(self, spec, sources=None):
        """`sources`: --setting-sources (e.g. "user"), the file layers loaded; the --settings
        flag's own layer always is (seen with 2.1.197)."""
        home = os.environ.get("HOME") or os.path.expanduser("~")
        wanted = {s.strip() for s in sources.split(",")} if sources is not None else None
        files = [
            ("user", os.path.join(home, ".claude", "settings.json")),
            ("project", os.path.join(self.cwd, ".claude", "settings.json")),
            ("local", os.path.join(self.cwd, ".claude", "settings.local.json")),
        ]
        layers = [C.load_json_file(path) for source, path in files
                  if wanted is None or source in wanted]
        if spec:
            if spec.lstrip().startswith("{"):
                layers.append(C.parse_json_obj(spec))  # invalid inline JSON: silently ignored
            elif not os.path.exists(spec):
                self.die(1, f"Error: Settings file not found: {spec}")
            else:
                layers.append(C.load_json_file(spec))
        layers = [s for s in layers if s]
        hooks = {ev: [] for ev in HOOK_EVENTS}
        perms = {"allow": [], "deny": [], "defaultMode": None}
        for s in layers:
            command_hooks(s, hooks)
            p = s.get("permissions") or {}
            perms["allow"] += p.get("allow") or []
            perms["deny"] += p.get("deny") or []
            perms["defaultMode"] = p.get("defaultMode") or perms["defaultMode"]
        for plugin in self.plugins.values():  # plugin hooks run after the settings' hooks
            for ev in HOOK_EVENTS:
                hooks[ev] += plugin["hooks"][ev]
        if any(s.get("disableAllHooks") for s in layers):
            hooks = {ev: [] for ev in HOOK_EVENTS}
        return hooks, perms

    def expand(self, prompt):
        """Slash commands -> (first user message, unknown command or None)."""
        text = prompt.strip()
        name, _, args = text[1:].partition(" ")
        if not text.startswith("/") or not COMMAND_NAME_RE.match(name):
            return prompt, None
        plugin, _, cmd = name.partition(":")
        found = (self.plugins.get(plugin) or {}).get("commands", {}).get(cmd)
        if not found or self.no_slash:
            return None, "/" + name
        meta, body = found
        self.allowed += split_tools([meta.get("allowed-tools") or ""])
        self.log("command", name=name, args=args)
        return (
            f"<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n"
            f"<command-args>{args}</command-args>\n" + body.replace("$ARGUMENTS", args)
        ), None

    def can_write(self, path):
        def has(lst):
            return any(t == "Write" or t.startswith("Write(") for t in lst)

        if has(self.disallowed):
            return False
        if has(self.allowed) or self.mode == "bypassPermissions":
            return True
        if self.mode in ("acceptEdits", "auto"):
            return any(C.inside(path, d) for d in [self.cwd, *self.add_dirs])
        return False

    def run(self):
        try:
            o = parse(self.argv)
        except SystemExit as e:
            self.die(int(e.code))
        if o.get("version"):
            C.out(f"{VERSION} (Claude Code)\n")
            sys.exit(0)
        if o.get("help"):
            C.out("Usage: claude [options] [command] [prompt]\n(fake claude test double)\n")
            sys.exit(0)
        if not o.get("print"):
            self.die(1, "fake claude: only --print (-p) mode is implemented")
        self.fmt = o.get("output_format", "text")
        if self.fmt == "stream-json" and not o.get("verbose"):
            self.die(1, "Error: When using --print, --output-format=stream-json requires --verbose")
        self.mode = "bypassPermissions" if o.get("skip_perms") else o.get("permission_mode")
        if (
            self.mode == "bypassPermissions"
            and os.getuid() == 0
            and os.environ.get("IS_SANDBOX") != "1"
            and not os.environ.get("CLAUDE_CODE_BUBBLEWRAP")
        ):
            self.die(
                1,
                "--dangerously-skip-permissions cannot be used with root/sudo privileges "
                "for security reasons",
            )
        stdin_prompt = False
        if o["positional"]:
            prompt = o["positional"][0]
        else:
            if C.stdin_is_tty():
                self.die(
                    1,
                    "Error: Input must be provided either through stdin or as a prompt "
                    "argument when using --print",
                )
            prompt, stdin_prompt = C.read_stdin_all(), True
        self.start_log(stdin_prompt)
        home = os.environ.get("HOME") or os.path.expanduser("~")
        self.plugins = {}
        for d in o["plugin_dir"]:
            if not os.path.isdir(d):
                C.err(f"Plugin directory not found: {d}")
                continue
            plugin = load_plugin(d, home)
            self.plugins.setdefault(plugin["name"], plugin)
        self.no_slash = bool(o.get("no_slash"))
        self.hooks, perms = self.load_settings(o.get("settings"), o.get("setting_sources"))
        self.mode = self.mode or perms["defaultMode"] or "default"
        self.allowed = split_tools(o["allowed"]) + perms["allow"]
        self.disallowed = split_tools(o["disallowed"]) + perms["deny"]
        # `--tools`: the built-in tools offered at all; the model writes its report with Write,
        # or, offered Edit and not Write, edits the file (a --since synthesis patching it).
        offered = split_tools(o["tools"]) if o["tools"] else None
        self.write_tool = ("Write" if offered is None or "Write" in offered
                           else "Edit" if "Edit" in offered else None)
        self.add_dirs = [os.path.abspath(d) for d in o["add_dir"]]
        model = o.get("model") or "claude-opus-4-8"
        self.model = ALIASES.get(model, model)
        self.persist = not o.get("no_persist")
        pdir = os.path.join(home, ".claude", "projects", project_dir_name(self.cwd))
        base_turns, stored_report = 0, None
        if o.get("continue") and not o.get("resume"):
            found = sorted(
                (os.path.getmtime(os.path.join(pdir, f)), f[: -len(".jsonl")])
                for f in (os.listdir(pdir) if os.path.isdir(pdir) else [])
                if f.endswith(".jsonl")
            )
            if not found:
                self.die(1, "No conversation found to continue")
            o["resume"] = found[-1][1]
        if o.get("resume"):
            self.sid = o["resume"]
            state = self.load_state(os.path.join(pdir, f"{self.sid}.jsonl"))
            if state is None:
                msg = f"No conversation found with session ID: {self.sid}"
                if self.fmt != "text":
                    C.emit(
                        {
                            "type": "result",
                            "subtype": "error_during_execution",
                            "is_error": True,
                            "num_turns": 0,
                            "session_id": self.sid,
                            "errors": [msg],
                        }
                    )
                self.die(1, msg)
            base_turns, stored_report = state.get("turns", 0), state.get("report")
            self.rbase = state.get("report_base", 0)
        elif o.get("session_id"):
            self.sid = o["session_id"]
            if not C.UUID_RE.match(self.sid):
                self.die(1, "Error: Invalid session ID. Must be a valid UUID.")
            if os.path.exists(os.path.join(pdir, f"{self.sid}.jsonl")):
                self.die(1, f"Error: Session ID {self.sid} is already in use.")
        else:
            self.sid = C.uuid4()
        self.transcript = os.path.join(pdir, f"{self.sid}.jsonl")
        self.typed = prompt
        message, unknown = self.expand(prompt)
        self.report = C.report_from_prompt(message, self.cwd) or stored_report
        if self.report and not stored_report:
            self.rbase = base_turns  # report turns count from the first turn that has one
        self.phase = C.phase_of(self.report)
        self.b = C.Behaviour(C.load_behaviour("claude", self.seat, self.phase))
        C.setup_process(self.b, self.log, self.cwd, on_term=None)
        self.max_turns = int(o["max_turns"]) if o.get("max_turns") else 0
        self.loop(message, unknown, base_turns, o.get("include_hook_events"))

    # ------------------------------------------------------------ persistence
    def load_state(self, path):
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return None
        state = {}
        for line in lines:
            rec = C.parse_json_obj(line)
            if rec and rec.get("type") == "fake-state":
                state = rec
            elif rec and rec.get("uuid"):
                self.last_uuid = rec["uuid"]
        return state

    def record(self, kind, content=None, **state):
        """Queue one transcript line (a user/assistant message, or the fake's own state).

        Like the real CLI in print mode, the transcript lags behind the hooks: a turn's lines
        reach the file only after that turn's Stop hooks have run (the real 2.1.197 had not
        created the file at the first Stop in 4 of 5 `-p --output-format json` runs), and
        never with --no-session-persistence."""
        if not self.persist:
            return
        rec = {"type": kind, **state}
        if content is not None:
            uid = C.uuid4()
            rec = {
                "parentUuid": self.last_uuid,
                "type": kind,
                "message": {"role": kind, "content": content},
                "uuid": uid,
            }
            self.last_uuid = uid
        rec.update(sessionId=self.sid, cwd=self.cwd, timestamp=C.iso_now(), version=VERSION)
        self.unwritten.append(json.dumps(rec, ensure_ascii=False) + "\n")

    def flush_transcript(self):
        if self.unwritten:
            os.makedirs(os.path.dirname(self.transcript), exist_ok=True)
            with open(self.transcript, "a", encoding="utf-8") as fh:
                fh.write("".join(self.unwritten))
            self.unwritten = []

    # ------------------------------------------------------------ output
    def stream(self, obj):
        if self.fmt == "stream-json":
            C.emit({**obj, "session_id": self.sid})

    def assistant(self, content):
        self.stream(
            {
                "type": "assistant",
                "parent_tool_use_id": None,
                "uuid": C.uuid4(),
                "message": {
                    "id": "msg_" + C.uuid4().replace("-", "")[:24],
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": content,
                    "stop_reason": None,
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                },
            }
        )

    def user(self, content):
        self.stream(
            {
                "type": "user",
                "parent_tool_use_id": None,
                "uuid": C.uuid4(),
                "message": {"role": "user", "content": content},
            }
        )

    def finish(self, result, code):
        self.flush_transcript()
        if self.fmt == "text":
            C.out(
                (
                    result.get("result")
                    if "result" in result
                    else f"Error: Reached max turns ({self.max_turns})"
                )
                + "\n"
            )
        else:
            C.emit(result)
        C.finish(self.log, code)

    def result(self, n, text, **extra):
        return {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "api_error_status": None,
            "duration_ms": int((time.monotonic() - self.t0) * 1000),
            "duration_api_ms": 10 * n,
            "num_turns": n,
            "result": text,
            "stop_reason": "end_turn",
            "session_id": self.sid,
            "total_cost_usd": round(0.01 * n, 4),
            "usage": {
                "input_tokens": 100 * n,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 20 * n,
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
            },
            "modelUsage": {
                self.model: {
                    "inputTokens": 100 * n,
                    "outputTokens": 20 * n,
                    "costUSD": round(0.01 * n, 4),
                    "contextWindow": 200000,
                    "maxOutputTokens": 64000,
                }
            },
            "permission_denials": self.denials,
            "terminal_reason": "completed",
            "uuid": C.uuid4(),
            **extra,
        }

    # ------------------------------------------------------------ hooks
    def run_hooks(self, event, payload):
        env = {
            **os.environ,
            "CLAUDE_PROJECT_DIR": self.cwd,
            "CLAUDE_CODE_SESSION_ID": self.sid,
            "CLAUDECODE": "1",
            "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
            "CLAUDE_EFFORT": "high",
            "CLAUDE_CODE_CHILD_SESSION": "1",
        }
        results = []
        for h in self.hooks[event]:
            hid = C.uuid4()
            if self.hook_events:
                self.stream(
                    {
                        "type": "system",
                        "subtype": "hook_started",
                        "hook_id": hid,
                        "hook_name": event,
                        "hook_event": event,
                        "uuid": C.uuid4(),
                    }
                )
            rc, so, se, timed_out = C.run_hook(
                ["/bin/sh", "-c"],
                h["command"],
                self.cwd,
                {**env, **h["env"]},
                payload,
                float(h.get("timeout") or 600),
                socket_stdin=True,  # as 2.1.197 (seen): a socket on the hook's stdin
            )
            self.log(
                "hook",
                hook_event=event,
                payload=payload,
                stdout=so,
                stderr=se,
                exit_code=rc,
                timed_out=timed_out,
            )
            outcome = "cancelled" if timed_out else ("success" if rc == 0 else "error")
            if self.hook_events:
                self.stream(
                    {
                        "type": "system",
                        "subtype": "hook_response",
                        "hook_id": hid,
                        "hook_name": event,
                        "hook_event": event,
                        "output": so + se,
                        "stdout": so,
                        "stderr": se,
                        "exit_code": rc,
                        "outcome": outcome,
                        "uuid": C.uuid4(),
                    }
                )
            results.append((h["command"], rc, so, se, timed_out))
        return results

    def submit(self, message, prompt_id):
        """UserPromptSubmit hooks get the prompt as typed (before a command's expansion).

        A block sends nothing to the model: the turn's result is the reason (exit 0,
        num_turns 0). Plain stdout or additionalContext reach the model as extra context."""
        payload = {
            "session_id": self.sid,
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "prompt_id": prompt_id,
            "permission_mode": self.mode,
            "hook_event_name": "UserPromptSubmit",
            "prompt": self.typed,
        }
        context = []
        for _command, rc, so, se, timed_out in self.run_hooks("UserPromptSubmit", payload):
            obj = C.parse_json_obj(so) if rc == 0 else None
            reason = (
                se.strip() if rc == 2
                else (obj.get("reason") or "") if obj and obj.get("decision") == "block"
                else None
            )
            if reason is not None and not timed_out:
                text = (
                    f"UserPromptSubmit operation blocked by hook:\n{reason}\n\n"
                    f"Original prompt: {self.typed}"
                )
                self.stream(
                    {
                        "type": "system",
                        "subtype": "informational",
                        "content": text,
                        "level": "warning",
                        "prevent_continuation": True,
                        "uuid": C.uuid4(),
                    }
                )
                res = self.result(0, text, stop_reason=None, total_cost_usd=0)
                del res["terminal_reason"]
                self.finish(res, 0)
            if rc == 0 and not timed_out:
                extra = (obj.get("hookSpecificOutput") or {}).get("additionalContext") if obj \
                    else so.strip()
                if extra:
                    context.append(f"UserPromptSubmit hook additional context: {extra}")
        if context:
            self.log("context", text=context)
        return "\n\n".join([message, *context])

    def stop_decision(self, results):
        """-> ("stop", None) | ("prevent", reason) | ("block", feedback)"""
        blocks = []
        for command, rc, so, se, timed_out in results:
            if timed_out:
                continue
            if rc == 2:
                blocks.append(f"Stop hook feedback:\n[{command}]: {se.strip()}")
                continue
            obj = C.parse_json_obj(so) if rc == 0 else None
            if not obj:
                continue
            if obj.get("continue") is False:
                return "prevent", obj.get("stopReason")
            if obj.get("decision") == "block":
                blocks.append("Stop hook feedback:\n" + (obj.get("reason") or "Blocked by hook"))
            ctx = (obj.get("hookSpecificOutput") or {}).get("additionalContext")
            if ctx:
                blocks.append(
                    f"<system-reminder>\nStop hook additional context: {ctx}\n</system-reminder>"
                )
        return ("block", "\n".join(blocks)) if blocks else ("stop", None)

    # ------------------------------------------------------------ main loop
    def adopt_report(self, message, turn):
        """A main session learns its report path from a later user message (a Stop hook's)."""
        report = C.report_from_prompt(message, self.cwd)
        if not report or report == self.report:
            return  # a resumed main session takes up the newest report it is asked for
        self.report, self.phase, self.rbase = report, C.phase_of(report), turn - 1
        self.b = C.Behaviour(C.load_behaviour("claude", self.seat, self.phase))

    def loop(self, prompt, unknown, base_turns, hook_events):
        self.t0 = time.monotonic()
        self.hook_events = hook_events
        self.denials = []
        b = self.b
        self.stream(
            {
                "type": "system",
                "subtype": "init",
                "cwd": self.cwd,
                "session_id": self.sid,
                "tools": [t for t in TOOLS if t not in self.disallowed],
                "mcp_servers": [],
                "model": self.model,
                "permissionMode": self.mode,
                "slash_commands": [
                    f"{p['name']}:{c}" for p in self.plugins.values() for c in p["commands"]
                ],
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": VERSION,
                "output_style": "default",
                "agents": [],
                "skills": [],
                "plugins": [
                    {"name": p["name"], "path": p["path"], "source": f"{p['name']}@inline"}
                    for p in self.plugins.values()
                ],
                "uuid": C.uuid4(),
            }
        )
        if b.hang:
            C.hang_forever()
        if unknown:  # handled locally: no model request, no hook
            self.finish(self.result(0, f"Unknown command: {unknown}"), 0)
        cap = int(os.environ.get("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "8") or 8)
        prompt_id = self.prompt_id
        prompt = self.submit(prompt, prompt_id)
        message, n, blocks_in_row, active = prompt, 0, 0, False
        while True:
            n += 1
            if self.max_turns and n > self.max_turns:
                msg = f"Reached maximum number of turns ({self.max_turns})"
                res = self.result(
                    n - 1,
                    None,
                    subtype="error_max_turns",
                    is_error=True,
                    terminal_reason="max_turns",
                    errors=[msg],
                )
                del res["result"]
                self.finish(res, 1)
            turn = base_turns + n
            self.record("user", message)
            if n > 1:
                self.adopt_report(message, turn)
            b = self.b
            rturn = turn - self.rbase  # the behaviour keys count turns from the report's first
            b.sleep()
            if n == 1 and b.flood_bytes:
                if self.fmt == "stream-json":
                    C.flood(
                        b.flood_bytes,
                        lambda i, pad: json.dumps(
                            {
                                "type": "system",
                                "subtype": "status",
                                "status": "noise",
                                "seq": i,
                                "data": pad,
                                "session_id": self.sid,
                            }
                        ),
                    )
                else:
                    C.flood(b.flood_bytes, stream=sys.stderr)
            tool_used = b.wants_write(rturn, self.report) and self.write_tool is not None
            self.log(
                "turn",
                turn=turn,
                session=self.sid,
                phase=self.phase,
                report=self.report,
                tool_call=tool_used,
                tool=self.write_tool if tool_used else None,
                report_turn=rturn if self.report else None,
            )
            if b.crashes_on(rturn, f"claude-{self.seat}"):
                self.crash(n, prompt_id, turn)
            wrote = False
            if tool_used:
                tid = "toolu_" + C.uuid4().replace("-", "")[:24]
                use = {
                    "type": "tool_use",
                    "id": tid,
                    "name": self.write_tool,
                    "input": {"file_path": self.report, "content": f"(turn {rturn})"},
                }
                self.assistant([use])
                self.record("assistant", [use])
                if self.can_write(self.report):
                    kind = C.write_report(
                        self.report, "claude", self.seat, rturn, b.marker_due(rturn),
                        b.content, b.pad_bytes,
                    )
                    wrote = True
                    res = (
                        (
                            f"File created successfully at: {self.report} (file state is "
                            "current in your context — no need to Read it back)"
                        )
                        if kind == "add"
                        else f"The file {self.report} has been updated successfully."
                    )
                else:
                    res = (
                        f"Claude requested permissions to write to {self.report}, "
                        "but you haven't granted it yet."
                    )
                    self.denials.append(
                        {
                            "tool_name": "Write",
                            "tool_use_id": tid,
                            "tool_input": {"file_path": self.report},
                        }
                    )
                tool_result = {
                    "type": "tool_result",
                    "tool_use_id": tid,
                    "content": res,
                    "is_error": not wrote,
                }
                self.user([tool_result])
                self.record("user", [tool_result])
            if not self.report:
                text = "Acknowledged."
            else:
                text = f"Turn {rturn}: " + (
                    "report updated." if wrote else "no changes to the report."
                )
            self.assistant([{"type": "text", "text": text}])
            self.record("assistant", [{"type": "text", "text": text}])
            self.record("fake-state", turns=turn, report=self.report, report_base=self.rbase)
            self.log("turn_end", turn=turn, session=self.sid, wrote=wrote)
            if b.hang_after_turn and rturn >= b.hang_after_turn:
                self.flush_transcript()  # a stuck agent has long since written its turn
            b.hang_after(rturn)
            if tool_used:
                blocks_in_row = 0
            payload = {
                "session_id": self.sid,
                "transcript_path": self.transcript,
                "cwd": self.cwd,
                "prompt_id": prompt_id,
                "permission_mode": self.mode,
                "effort": {"level": "high"},
                "hook_event_name": "Stop",
                "stop_hook_active": active,
                "last_assistant_message": text,
                "background_tasks": [],
                "session_crons": [],
            }
            decision, info = self.stop_decision(self.run_hooks("Stop", payload))
            self.flush_transcript()
            if decision == "prevent":
                self.finish(
                    self.result(n, text, terminal_reason="stop_hook_prevented"), b.exit_code
                )
            if decision == "stop":
                self.finish(self.result(n, text), b.exit_code)
            blocks_in_row += 1
            if cap and blocks_in_row > cap:
                self.finish(self.result(n, ""), b.exit_code)
            active = True
            message = info
            self.stream(
                {
                    "type": "system",
                    "subtype": "notification",
                    "key": "stop-hook-error",
                    "text": "Stop hook error occurred · ctrl+o to see",
                    "uuid": C.uuid4(),
                }
            )
            self.user([{"type": "text", "text": message}])

    def own_retries(self, status, error):
        """claude's own retries of a failed request (CLAUDE_CODE_MAX_RETRIES, default 10,
        at most 15): an `api_retry` event each, then the wait it names: the vendor's
        retry-after for a 429, else its doubling backoff from 0.5 s (capped at 32 s)."""
        try:
            retries = int(os.environ.get("CLAUDE_CODE_MAX_RETRIES", "10"))
        except ValueError:
            retries = 10
        retries = min(max(retries, 0), 15)
        for attempt in range(1, retries + 1):
            delay = (self.b.retry_after * 1000 if status == 429
                     else min(500 * 2 ** (attempt - 1), 32000))
            self.stream({"type": "system", "subtype": "api_retry", "attempt": attempt,
                         "max_retries": retries, "retry_delay_ms": int(delay),
                         "error_status": status, "error": error, "uuid": C.uuid4()})
            time.sleep(delay / 1000)

    def crash(self, n, prompt_id, turn):
        # The session keeps the failed turn's prompt (the report it names), as the real
        # transcript does; the failed request was no model turn: a resume repeats it.
        self.record("fake-state", turns=turn - 1, report=self.report, report_base=self.rbase)
        kind = self.b.crash_kind
        if kind in API_FAULTS:
            said, status, error, error_type = API_FAULTS[kind]
            self.own_retries(status, error)
        else:
            said, status = (API_400, 400) if kind == "bad_request" else (API_500, 500)
            error_type = None
        self.flush_transcript()
        self.assistant([{"type": "text", "text": said}])
        payload = {
            "session_id": self.sid,
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "prompt_id": prompt_id,
            "permission_mode": self.mode,
            "hook_event_name": "StopFailure",
            "error": "server_error",
            "last_assistant_message": said,
        }
        self.run_hooks("StopFailure", payload)
        res = self.result(n, said, is_error=True, api_error_status=status,
                          **({"api_error_type": error_type,
                              "terminal_reason": "api_error"} if error_type else {}))
        del res["terminal_reason"]
        self.finish(res, 1)


def main() -> None:
    Claude(sys.argv[1:]).run()
