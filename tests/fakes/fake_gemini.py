# mypy: ignore-errors
# (untyped, as it was as the script bin/gemini; ruff checks it)
"""Fake Gemini CLI (0.61.0 behaviour), headless mode only. See tests/fakes/README.md.

The code of bin/gemini, kept as a module so that Python compiles it once for the
suite's thousands of starts, not at each."""

import contextlib
import json
import os
import signal
import sys
import time

import _common as C

VERSION = "0.61.0"
FLAGS = {
    "-y": "yolo",
    "--yolo": "yolo",
    "--skip-trust": "skip_trust",
    "-d": "debug",
    "--debug": "debug",
    "-v": "version",
    "--version": "version",
    "-h": "help",
    "--help": "help",
}
VALUES = {
    "-m": "model",
    "--model": "model",
    "-o": "output_format",
    "--output-format": "output_format",
    "-p": "prompt",
    "--prompt": "prompt",
    "--approval-mode": "approval_mode",
    "--session-id": "session_id",
    "-r": "resume",
    "--resume": "resume",
}
ARRAYS = {"--include-directories": "include_dirs", "-e": "extensions", "--extensions": "extensions",
          "--allowed-mcp-server-names": "allowed_mcp_server_names"}
CHOICES = {
    "output_format": ("text", "json", "stream-json"),
    "approval_mode": ("default", "auto_edit", "yolo", "plan"),
}
UNTRUSTED = (
    "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, "
    "set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in "
    "interactive mode. For more details, see "
    "https://geminicli.com/docs/cli/trusted-folders/#headless-and-automated-environments"
)
API_500 = "[API Error: Internal error encountered.]"
API_400 = "[API Error: Request contains an invalid argument.]"
MAX_CONTINUATIONS = 100
# .env loading (0.61 settings.ts loadEnvironment): an untrusted folder takes only these...
DOTENV_UNTRUSTED = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT",
                    "GOOGLE_CLOUD_LOCATION")
# ...and a project's .env (one not under a .gemini folder) never these.
DOTENV_EXCLUDED = ("DEBUG", "DEBUG_MODE", "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
                   "GEMINI_CLI_IDE_SERVER_STDIO_ARGS")


class ArgError(Exception):
    pass


def parse(argv):
    o = {"include_dirs": [], "extensions": [], "allowed_mcp_server_names": [], "positional": []}
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
        name, eq, val = a.partition("=")
        if name in FLAGS:
            o[FLAGS[name]] = val.lower() != "false" if eq else True
        elif name in VALUES:
            key = VALUES[name]
            if not eq:
                if i < len(argv) and not argv[i].startswith("-"):
                    val = argv[i]
                    i += 1
                elif key == "resume":
                    val = "latest"
                else:
                    raise ArgError(f"Not enough arguments following: {name.lstrip('-')}")
            if key in CHOICES and val not in CHOICES[key]:
                raise ArgError(
                    f'Invalid values:\n  Argument: {name.lstrip("-")}, Given: "{val}", '
                    f"Choices: {', '.join(repr(c).replace(chr(39), chr(34)) for c in CHOICES[key])}"
                )
            o[key] = val
        elif name in ARRAYS:
            vals = [val] if eq else []
            while not eq and i < len(argv) and not argv[i].startswith("-"):
                vals.append(argv[i])
                i += 1
            o[ARRAYS[name]] += [p for v in vals for p in v.split(",") if p]
        else:
            raise ArgError(f"Unknown argument: {name.lstrip('-')}")
    if o.get("yolo") and o.get("approval_mode"):
        raise ArgError(
            "Cannot use both --yolo (-y) and --approval-mode together. "
            "Use --approval-mode=yolo instead."
        )
    if o.get("prompt") is not None and o["positional"]:
        raise ArgError("Cannot use both a positional prompt and the --prompt (-p) flag together")
    return o


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def parse_dotenv(text):
    """KEY=value lines as the dotenv package reads them (enough of it for tests)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key.startswith("export "):
            key = key[len("export "):].strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"`":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n")
        else:
            value = value.split(" #", 1)[0].strip()
        if key:
            out[key] = value
    return out


def find_env_file(start, trusted, home):
    """0.61's findEnvFile: from `start` up to `/`, the first `.gemini/.env` (trusted only) or
    `.env`; then the home's `.gemini/.env` (trusted only) or `.env`."""
    current = os.path.abspath(start)
    while True:
        candidates = [os.path.join(current, ".gemini", ".env")] if trusted else []
        for path in [*candidates, os.path.join(current, ".env")]:
            if os.path.exists(path):
                return path
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    homes = [os.path.join(home, ".gemini", ".env")] if trusted else []
    return next((p for p in [*homes, os.path.join(home, ".env")] if os.path.exists(p)), None)


def read_piped_stdin():
    """gemini reads non-TTY stdin, but gives up if nothing arrives within 500 ms."""
    if not C.stdin_usable() or C.stdin_is_tty():
        return ""
    import select

    try:
        ready, _, _ = select.select([0], [], [], 0.5)
    except (OSError, ValueError):
        return ""
    return C.read_stdin_all() if ready else ""


class Gemini:
    def __init__(self, argv):
        self.argv = argv
        self.cwd = os.getcwd()
        self.seat = os.path.basename(self.cwd)
        self.log = C.Log("gemini", self.seat)
        self.started = False
        self.warnings = []

    def start_log(self, stdin_prompt=False):
        if not self.started:
            self.started = True
            self.log("start", argv=self.argv, cwd=self.cwd, stdin_prompt=stdin_prompt)

    def die(self, code, msg=None):
        self.start_log()
        if msg:
            C.err(msg)
        C.finish(self.log, code)

    def emit(self, obj):
        if self.fmt == "stream-json":
            C.emit({**obj, "timestamp": C.iso_now()} if "timestamp" not in obj else obj)

    # ------------------------------------------------------------ settings / trust
    def load_settings(self, skip_trust):
        self.home = os.path.join(
            os.environ.get("GEMINI_CLI_HOME") or os.environ.get("HOME") or os.path.expanduser("~"),
            ".gemini",
        )
        user_path = os.path.join(self.home, "settings.json")
        user = C.load_json_file(user_path) or {}
        sys_path = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        system = (C.load_json_file(sys_path) if sys_path else None) or {}
        trusted = (
            os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true"
            or get(user, "security", "folderTrust", "enabled") is False
            or get(system, "security", "folderTrust", "enabled") is False
            or self.trusted_by_file()
        )
        if not trusted and not skip_trust:
            self.die(55, UNTRUSTED)
        self.trusted = trusted
        ws_path = os.path.join(self.cwd, ".gemini", "settings.json")
        ws = (
            C.load_json_file(ws_path)
            if trusted and os.path.realpath(ws_path) != os.path.realpath(user_path)
            else None
        )
        layers = [("user", user), ("workspace", ws or {}), ("system", system)]
        enabled = True
        hooks = []
        for src, s in layers:
            if get(s, "hooksConfig", "enabled") is not None:
                enabled = bool(get(s, "hooksConfig", "enabled"))
            for group in get(s, "hooks", "AfterAgent") or []:
                for h in (group or {}).get("hooks") or []:
                    if (
                        isinstance(h, dict)
                        and h.get("type", "command") == "command"
                        and h.get("command")
                    ):
                        hooks.append((src, h))
        self.hooks = [h for _, h in hooks] if enabled else []
        if enabled:
            self.warn_project_hooks([h for src, h in hooks if src == "workspace"])

    def load_dotenv(self):
        """Like gemini: the .env file it finds goes into its own environment, which every
        hook and tool it starts inherits; a variable already set is kept. Logged as a
        `dotenv` event (`path`, `names`)."""
        home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
        path = find_env_file(self.cwd, self.trusted, home)
        if path is None:
            return
        try:
            with open(path, encoding="utf-8") as fh:
                parsed = parse_dotenv(fh.read())
        except (OSError, UnicodeDecodeError):
            return
        project = ".gemini" not in path
        names = []
        for key, value in parsed.items():
            if not self.trusted:
                if key not in DOTENV_UNTRUSTED:
                    continue
                value = "".join(c for c in value if c.isalnum() or c in "-_./")
            if project and key in DOTENV_EXCLUDED:
                continue
            if key not in os.environ:
                os.environ[key] = value
                names.append(key)
        self.log("dotenv", path=path, names=names)

    def trusted_by_file(self):
        folders = C.load_json_file(os.path.join(self.home, "trustedFolders.json")) or {}
        for path, level in folders.items():
            root = os.path.dirname(path) if level == "TRUST_PARENT" else path
            if level in ("TRUST_FOLDER", "TRUST_PARENT") and C.inside(self.cwd, root):
                return True
        return False

    def warn_project_hooks(self, hooks):
        if not hooks:
            return
        path = os.path.join(self.home, "trusted_hooks.json")
        known = C.load_json_file(path) or {}
        have = set(known.get(self.cwd) or [])
        keys = [f"{h.get('name') or h['command']}:{h['command']}" for h in hooks]
        new = [k for k in keys if k not in have]
        if new:
            C.err(
                "WARNING: The following project-level hooks have been detected in this workspace:\n"
                + "\n".join(f"  - {k.split(':', 1)[0]}" for k in new)
                + "\nThese hooks will be executed. If you did not configure these hooks or do not "
                "trust this project, please review the project settings (.gemini/settings.json)."
            )
            known[self.cwd] = sorted(have | set(new))
            with contextlib.suppress(OSError):
                C.save_json_file(path, known)

    # ------------------------------------------------------------ sessions
    def project_chats(self):
        import hashlib

        short = f"{self.seat}-{hashlib.sha1(self.cwd.encode()).hexdigest()[:8]}"
        return os.path.join(self.home, "tmp", short, "chats")

    def sessions(self):
        d = self.project_chats()
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return []
        out = [C.load_json_file(os.path.join(d, n)) for n in names if n.endswith(".json")]
        return sorted([s for s in out if s], key=lambda s: s.get("created", 0))

    def open_session(self, o):
        ref = o.get("resume")
        if ref:
            found = self.sessions()
            sess = None
            if ref == "latest":
                if found:
                    sess = max(found, key=lambda s: s.get("updated", 0))
                else:
                    C.err("No previous sessions found for this project.")
            elif ref.isdigit():
                sess = found[int(ref) - 1] if 0 < int(ref) <= len(found) else None
            else:
                sess = next((s for s in found if s.get("sessionId") == ref), None)
            if sess is None and ref != "latest":
                self.die(
                    42,
                    f'Error resuming session: Invalid session identifier "{ref}". '
                    "Use --list-sessions to see available sessions.",
                )
            if sess:
                return sess
        sid = o.get("session_id") or C.uuid4()
        stamp = time.strftime("%Y-%m-%dT%H-%M", time.gmtime())
        return {
            "sessionId": sid,
            "cwd": self.cwd,
            "turns": 0,
            "report": None,
            "created": time.time(),
            "file": os.path.join(self.project_chats(), f"session-{stamp}-{sid[:8]}.json"),
            "messages": [],
        }

    def save(self):
        self.sess["updated"] = time.time()
        C.save_json_file(self.sess["file"], self.sess)

    # ------------------------------------------------------------ main
    def run(self):
        try:
            o = parse(self.argv)
        except ArgError as e:
            self.die(1, f"Usage: gemini [options] [command]\n\n{e}")
        if o.get("version"):
            C.out(VERSION + "\n")
            sys.exit(0)
        if o.get("help"):
            C.out("Usage: gemini [options] [command]\n(fake gemini test double)\n")
            sys.exit(0)
        self.fmt = o.get("output_format") or "text"
        self.load_settings(bool(o.get("skip_trust")))
        question = (
            o.get("prompt")
            if o.get("prompt") is not None
            else (" ".join(o["positional"]) if o["positional"] else None)
        )
        if question is None and C.stdin_is_tty():
            self.die(
                1, "fake gemini: interactive mode is not implemented (use -p or pipe a prompt)"
            )
        piped = read_piped_stdin()
        prompt = f"{piped}\n\n{question}" if piped and question else (piped or question)
        self.start_log(stdin_prompt=bool(piped))  # logs the environment council gave it
        self.load_dotenv()
        if not prompt:
            self.die(
                1,
                "No input provided via stdin. Input can be provided by piping data into gemini "
                "or using the --prompt option.",
            )
        self.approval = "yolo" if o.get("yolo") else (o.get("approval_mode") or "default")
        self.model = o.get("model") or os.environ.get("GEMINI_MODEL") or "auto"
        self.workspaces = [self.cwd] + [os.path.abspath(d) for d in o["include_dirs"]]
        self.sess = self.open_session(o)
        self.sid = self.sess["sessionId"]
        self.report = C.report_from_prompt(prompt, self.cwd) or self.sess.get("report")
        self.sess["report"] = self.report
        self.phase = C.phase_of(self.report)
        self.b = C.Behaviour(C.load_behaviour("gemini", self.seat, self.phase))
        C.setup_process(self.b, self.log, self.cwd, on_term=0)
        for sig in (signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda s, _f: (self.log("exit", code=0, signal=s), os._exit(0)))
        self.loop(prompt)

    def write_file(self, turn, marker):
        """-> (status, output_or_error)"""
        if self.approval not in ("auto_edit", "yolo"):
            return "error", 'Tool "write_file" not found'
        if not any(C.inside(self.report, d) for d in self.workspaces):
            return "error", (
                "File path must be within one of the workspace directories: "
                + ", ".join(self.workspaces)
            )
        kind = C.write_report(self.report, "gemini", self.seat, turn, marker, self.b.content,
                                self.b.pad_bytes)
        verb = (
            "Successfully created and wrote to new file"
            if kind == "add"
            else "Successfully overwrote file"
        )
        return "success", f"{verb}: {self.report}."

    def stats(self, n, tool_calls):
        inp, outp = 1000 * n, 100 * n
        return {
            "total_tokens": inp + outp,
            "input_tokens": inp,
            "output_tokens": outp,
            "cached": 0,
            "input": inp,
            "duration_ms": int((time.monotonic() - self.t0) * 1000),
            "tool_calls": tool_calls,
            "models": {
                self.model: {
                    "total_tokens": inp + outp,
                    "input_tokens": inp,
                    "output_tokens": outp,
                    "cached": 0,
                    "input": inp,
                }
            },
        }

    def json_stats(self, n, tool_calls, ok_calls):
        return {
            "models": {
                self.model: {
                    "api": {
                        "totalRequests": n,
                        "totalErrors": 0,
                        "totalLatencyMs": 10 * n,
                        "errorsByType": {},
                    },
                    "tokens": {
                        "input": 1000 * n,
                        "prompt": 1000 * n,
                        "candidates": 100 * n,
                        "total": 1100 * n,
                        "cached": 0,
                        "thoughts": 0,
                        "tool": 0,
                    },
                }
            },
            "tools": {
                "totalCalls": tool_calls,
                "totalSuccess": ok_calls,
                "totalFail": tool_calls - ok_calls,
                "totalDurationMs": tool_calls,
                "byName": {
                    "write_file": {
                        "count": tool_calls,
                        "success": ok_calls,
                        "fail": tool_calls - ok_calls,
                    }
                }
                if tool_calls
                else {},
            },
            "files": {"totalLinesAdded": 6 * ok_calls, "totalLinesRemoved": 0},
        }

    def hook_decision(self, payload):
        env = {
            **os.environ,
            "GEMINI_PROJECT_DIR": self.cwd,
            "GEMINI_CWD": self.cwd,
            "GEMINI_SESSION_ID": self.sid,
            "GEMINI_PLANS_DIR": os.path.join(self.home, "plans"),
            "CLAUDE_PROJECT_DIR": self.cwd,
        }
        denies, stop = [], None
        for h in self.hooks:
            henv = {**env, **{k: str(v) for k, v in (h.get("env") or {}).items()}}
            # As 0.61's hook runner: `bash -c COMMAND`, the payload on a socket (node's pipe).
            rc, so, se, timed_out = C.run_hook(
                ["bash", "-c"],
                h["command"],
                self.cwd,
                henv,
                payload,
                float(h.get("timeout") or 60000) / 1000,
                socket_stdin=True,
            )
            self.log(
                "hook",
                hook_event="AfterAgent",
                payload=payload,
                stdout=so,
                stderr=se,
                exit_code=rc,
                timed_out=timed_out,
                env_names=sorted(henv),
            )
            if timed_out or rc not in (0, 2):
                C.err(f"Hook(s) [{h.get('name') or h['command']}] failed for event AfterAgent.")
                continue
            if rc == 2:
                denies.append(se.strip() or "No reason provided")
                continue
            obj = C.parse_json_obj(so) if so.strip() else C.parse_json_obj(se)
            if obj is None:
                if so.strip():
                    C.err(f"Hook system message: {so.strip()}")
                continue
            if obj.get("systemMessage"):
                C.err(f"Hook system message: {obj['systemMessage']}")
            if obj.get("continue") is False:
                stop = obj.get("stopReason") or obj.get("reason") or "No reason provided"
            elif obj.get("decision") in ("deny", "block"):
                denies.append(obj.get("stopReason") or obj.get("reason") or "No reason provided")
        if stop is not None:
            return "stop", stop
        return ("deny", "\n".join(denies)) if denies else ("allow", None)

    def loop(self, prompt):
        self.t0 = time.monotonic()
        b = self.b
        self.emit(
            {"type": "init", "timestamp": C.iso_now(), "session_id": self.sid, "model": self.model}
        )
        if b.hang:
            C.hang_forever()
        current, responses, n = prompt, [], 0
        hook_calls = continuations = tool_calls = ok_calls = 0
        text = ""
        while True:
            n += 1
            self.sess["turns"] += 1
            turn = self.sess["turns"]
            self.emit({"type": "message", "role": "user", "content": current})
            self.sess["messages"].append({"role": "user", "content": current})
            b.sleep()
            if n == 1 and b.flood_bytes:
                if self.fmt == "stream-json":
                    C.flood(
                        b.flood_bytes,
                        lambda i, pad: json.dumps(
                            {
                                "type": "message",
                                "timestamp": C.iso_now(),
                                "role": "assistant",
                                "content": pad,
                                "delta": True,
                            }
                        ),
                    )
                else:
                    C.flood(b.flood_bytes, stream=sys.stderr)
            tool_call = b.wants_write(turn, self.report)
            self.log(
                "turn",
                turn=turn,
                session=self.sid,
                phase=self.phase,
                report=self.report,
                tool_call=tool_call,
                approval_mode=self.approval,
            )
            if b.crashes_on(turn):
                self.save()
                self.crash(n, tool_calls)
            if tool_call:
                tid = f"write_file__write_file_{int(time.time() * 1000)}_{tool_calls}"
                tool_calls += 1
                self.emit(
                    {
                        "type": "tool_use",
                        "tool_name": "write_file",
                        "tool_id": tid,
                        "parameters": {"file_path": self.report, "content": f"(turn {turn})"},
                    }
                )
                status, detail = self.write_file(turn, b.marker_due(turn))
                ok_calls += status == "success"
                ev = {"type": "tool_result", "tool_id": tid, "status": status}
                ev.update(
                    {"output": detail}
                    if status == "success"
                    else {"output": detail, "error": {"type": "tool_error", "message": detail}}
                )
                self.emit(ev)
            text = f"Turn {turn}: " + (
                "report updated."
                if tool_call and status == "success"
                else "no changes to the report."
            )
            self.emit({"type": "message", "role": "assistant", "content": text, "delta": True})
            if self.fmt == "text":
                C.out(text)
            responses.append(text)
            self.log(
                "turn_end",
                turn=turn,
                session=self.sid,
                wrote=bool(tool_call) and status == "success",
            )
            b.hang_after(turn)
            self.sess["messages"].append({"role": "model", "content": text})
            self.save()
            if not self.hooks:
                break
            payload = {
                "session_id": self.sid,
                "transcript_path": self.sess["file"],
                "cwd": self.cwd,
                "hook_event_name": "AfterAgent",
                "timestamp": C.iso_now(),
                "prompt": prompt,
                "prompt_response": "\n".join(responses),
                "stop_hook_active": hook_calls > 0 and not tool_call,
            }
            hook_calls += 1
            decision, reason = self.hook_decision(payload)
            if decision == "stop":
                C.err(f"Agent execution stopped: {reason}")
                break
            if decision == "allow" or continuations >= MAX_CONTINUATIONS:
                break
            continuations += 1
            C.err(f"[WARNING] Agent execution blocked: {reason}")
            self.warnings.append(f"Agent execution blocked: {reason}")
            self.emit(
                {
                    "type": "error",
                    "severity": "warning",
                    "message": f"Agent execution blocked: {reason}",
                }
            )
            current = reason
        if self.fmt == "stream-json":
            self.emit(
                {
                    "type": "result",
                    "timestamp": C.iso_now(),
                    "status": "success",
                    "stats": self.stats(n, tool_calls),
                }
            )
        elif self.fmt == "json":
            res = {
                "session_id": self.sid,
                "response": text,
                "stats": self.json_stats(n, tool_calls, ok_calls),
            }
            if self.warnings:
                res["warnings"] = self.warnings
            C.out(json.dumps(res, indent=2) + "\n")
        else:
            C.out("\n")
        C.finish(self.log, b.exit_code)

    def crash(self, n, tool_calls):
        if self.fmt == "stream-json" and self.b.crash_kind == "bad_request":
            self.emit(
                {
                    "type": "result",
                    "timestamp": C.iso_now(),
                    "status": "error",
                    "error": {"type": "Error", "message": API_400},
                    "stats": self.stats(n, tool_calls),
                }
            )
            C.finish(self.log, 144)  # 400 modulo 256
        if self.fmt == "stream-json":
            self.emit(
                {
                    "type": "result",
                    "timestamp": C.iso_now(),
                    "status": "error",
                    "error": {"type": "Error", "message": API_500},
                    "stats": self.stats(n, tool_calls),
                }
            )
            C.finish(self.log, 244)
        if self.fmt == "json":
            C.err(
                json.dumps(
                    {
                        "session_id": self.sid,
                        "error": {"type": "Error", "message": API_500, "code": 500},
                    },
                    indent=2,
                )
            )
            C.finish(self.log, 244)
        C.err("An unexpected critical error occurred:[object Object]")
        C.finish(self.log, 1)


def main() -> None:
    Gemini(sys.argv[1:]).run()
