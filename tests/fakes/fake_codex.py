# mypy: ignore-errors
# (untyped, as it was as the script bin/codex; ruff checks it)
"""Fake OpenAI Codex CLI (0.169.0 behaviour): ``codex exec`` and ``codex exec resume`` only.

See tests/fakes/README.md.


The code of bin/codex, kept as a module so that Python compiles it once for the
suite's thousands of starts, not at each."""

import json
import os
import signal
import sys
import time
import tomllib

import _common as C

VERSION = "0.169.0"
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
EXEC_USAGE = "Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]"
RESUME_USAGE = "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]"
HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors."
USAGE_IN, USAGE_OUT = 1000, 200  # per turn; turn.completed reports the thread's running total


class ClapError(Exception):
    pass


def clap_unexpected(arg, usage):
    return ClapError(
        f"error: unexpected argument '{arg}' found\n\n"
        f"  tip: to pass '{arg}' as a value, use '-- {arg}'\n\n{usage}\n\n"
        "For more information, try '--help'."
    )


def parse_cfg_value(v):
    """As codex does: the value as TOML, else the raw text as a string."""
    try:
        return tomllib.loads(f"x = {v}")["x"]
    except ValueError:
        return v


def parse(argv):
    """Grammar: codex [-c k=v]... exec [OPTS] [PROMPT|-]
    and codex exec [OPTS] resume [ROPTS] [ID] [PROMPT]."""
    o = {"config": {}, "enable": [], "disable": [], "add_dir": [], "positional": [], "resume": None}
    i = 0
    stage = None  # None (top level), "exec", "resume"

    def value(name):
        nonlocal i
        if i >= len(argv):
            raise ClapError(
                f"error: a value is required for '{name}' but none was supplied\n\n"
                "For more information, try '--help'."
            )
        i += 1
        return argv[i - 1]

    while i < len(argv):
        a = argv[i]
        i += 1
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        usage = RESUME_USAGE if stage == "resume" else EXEC_USAGE
        if stage is not None and o["positional"] and not a.startswith("-"):
            o["positional"].append(a)
            continue
        if a in ("--version", "-V") and stage is None:
            o["version"] = True
        elif name in ("-c", "--config"):
            k, _, v = (val if eq else value(name)).partition("=")
            o["config"][k.strip()] = parse_cfg_value(v.strip())
        elif name in ("--enable", "--disable"):
            o[name[2:]].append(val if eq else value(name))
        elif stage is None:
            if a == "exec" or a == "e":
                stage = "exec"
            elif a in ("-h", "--help"):
                o["help"] = True
            else:
                raise (
                    ClapError("fake codex: only the `exec` subcommand is implemented")
                    if not a.startswith("-")
                    else clap_unexpected(a, "Usage: codex [OPTIONS] [PROMPT]")
                )
        elif name in ("--skip-git-repo-check",):
            o["skip_git"] = True
        elif name in ("--json", "--experimental-json"):
            o["json"] = True
        elif name in ("--dangerously-bypass-approvals-and-sandbox", "--yolo"):
            o["bypass"] = True
        elif name in ("-m", "--model"):
            o["model"] = val if eq else value(name)
        elif stage == "exec" and name in ("-C", "--cd"):
            o["cd"] = val if eq else value(name)
        elif stage == "exec" and name in ("-s", "--sandbox"):
            v = val if eq else value(name)
            if v not in SANDBOXES:
                raise ClapError(
                    f"error: invalid value '{v}' for '--sandbox <SANDBOX_MODE>'\n"
                    f"  [possible values: {', '.join(SANDBOXES)}]\n\n"
                    "For more information, try '--help'."
                )
            o["sandbox"] = v
        elif stage == "exec" and name in ("-o", "--output-last-message"):
            o["last_message_file"] = val if eq else value(name)
        elif stage == "exec" and name == "--color":
            o["color"] = val if eq else value(name)
        elif stage == "exec" and name == "--add-dir":
            o["add_dir"].append(val if eq else value(name))
        elif stage == "resume" and name == "--last":
            o["last"] = True
        elif stage == "resume" and name == "--all":
            o["all"] = True
        elif a in ("-h", "--help"):
            o["help"] = True
        elif stage == "exec" and a == "resume":
            stage = "resume"
            o["resume"] = True
        elif a.startswith("-") and a != "-":
            raise clap_unexpected(a, usage)
        else:
            o["positional"].append(a)
    o["stage"] = stage
    return o


class Codex:
    def __init__(self, argv):
        self.argv = argv
        self.cwd = os.getcwd()
        self.log = C.Log("codex", os.path.basename(self.cwd))
        self.started = False

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
        if self.json:
            C.emit(obj)

    def run(self):
        signal.signal(
            signal.SIGTERM, lambda *_: (self.log("exit", code=143, signal=15), os._exit(143))
        )
        try:
            o = parse(self.argv)
        except ClapError as e:
            self.die(2, str(e))
        if o.get("version"):
            C.out(f"codex-cli {VERSION}\n")
            sys.exit(0)
        if o.get("help"):
            C.out((RESUME_USAGE if o["resume"] else EXEC_USAGE) + "\n(fake codex test double)\n")
            sys.exit(0)
        if o["stage"] is None:
            self.die(
                1, "fake codex: only `codex exec` is implemented (interactive mode needs a TTY)"
            )
        self.json = bool(o.get("json"))
        self.workdir = os.path.abspath(o["cd"]) if o.get("cd") else self.cwd
        self.seat = os.path.basename(self.workdir)
        self.log = C.Log("codex", self.seat)
        if o.get("cd") and not os.path.isdir(self.workdir):
            self.die(1, f"Error: No such file or directory (os error 2): {self.workdir}")
        pos = o["positional"]
        thread_arg = None
        if o["resume"]:
            if not o.get("last") and pos:
                thread_arg = pos.pop(0)
            if len(pos) > 1:
                self.die(2, clap_unexpected(pos[1], RESUME_USAGE).args[0])
        elif len(pos) > 1:
            self.die(2, clap_unexpected(pos[1], EXEC_USAGE).args[0])
        prompt = pos[0] if pos else None
        # --- prompt / stdin (this is where a real codex blocks on an open pipe)
        stdin_prompt = False
        if prompt == "-" or (prompt is None and not C.stdin_is_tty()):
            if prompt is None:
                C.err("Reading prompt from stdin...")
            prompt, stdin_prompt = C.read_stdin_all(), True
        elif prompt is not None and C.stdin_usable() and not C.stdin_is_tty():
            C.err("Reading additional input from stdin...")
            extra = C.read_stdin_all()
            if extra.strip():
                prompt = f"{prompt}\n\n<stdin>\n{extra}\n</stdin>"
        self.start_log(stdin_prompt)
        if prompt is None and not o["resume"]:
            self.die(
                1,
                "No prompt provided. Either specify one as an argument or pipe the prompt "
                "into stdin.",
            )
        if not (prompt and prompt.strip()) and not o["resume"]:
            self.die(1, "No prompt provided via stdin.")
        # --- trust
        if not o.get("skip_git") and not self.in_git_repo():
            self.die(
                1, "Not inside a trusted directory and --skip-git-repo-check was not specified."
            )
        # --- sandbox
        cfg = o["config"]
        self.sandbox = (
            "danger-full-access"
            if o.get("bypass")
            else (o.get("sandbox") or cfg.get("sandbox_mode") or self.profile(cfg))
        )
        self.writable = [self.workdir] + [os.path.abspath(d) for d in o["add_dir"]]
        self.model = o.get("model") or cfg.get("model") or "gpt-5.5"
        # --- thread
        home = os.environ.get("CODEX_HOME") or os.path.join(
            os.environ.get("HOME") or os.path.expanduser("~"), ".codex"
        )
        self.store = os.path.join(home, "sessions")
        thread = None
        if o["resume"]:
            if o.get("last"):
                thread = self.find_last(all_dirs=bool(o.get("all")))
            elif thread_arg:
                thread = (
                    C.load_json_file(os.path.join(self.store, f"{thread_arg}.json"))
                    if C.UUID_RE.match(thread_arg)
                    else None
                )
                if thread is None:
                    self.die(
                        1,
                        "Error: thread/resume: thread/resume failed: no rollout found for "
                        f"thread id {thread_arg}\n\nStack backtrace:\n   0: <unknown>",
                    )
            else:
                self.die(2, "error: a SESSION_ID or --last is required\n\n" + RESUME_USAGE)
        if thread is None:
            thread = {
                "thread_id": C.uuid7(),
                "cwd": self.workdir,
                "turns": 0,
                "report": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
                "created": time.time(),
            }
        self.thread = thread
        thread["report"] = C.report_from_prompt(prompt, self.workdir) or thread.get("report")
        self.lock_thread(home)
        self.turn(prompt or "", o.get("last_message_file"))

    @staticmethod
    def profile(cfg):
        """A permission profile (default_permissions), which codex uses when no sandbox mode
        is given: its `:project_roots` write entry makes the workdir writable."""
        name = cfg.get("default_permissions")
        fs = cfg.get(f"permissions.{name}.filesystem") if name else None
        if isinstance(fs, dict) and (fs.get(":project_roots") or {}).get(".") == "write":
            return "workspace-write"
        return "read-only"

    def in_git_repo(self):
        d = self.workdir
        while True:
            if os.path.exists(os.path.join(d, ".git")):
                return True
            parent = os.path.dirname(d)
            if parent == d:
                return False
            d = parent

    def find_last(self, all_dirs):
        best = None
        try:
            names = os.listdir(self.store)
        except OSError:
            return None
        for name in names:
            if not name.endswith(".json"):
                continue
            t = C.load_json_file(os.path.join(self.store, name))
            if not t or (
                not all_dirs
                and os.path.realpath(t.get("cwd", "")) != os.path.realpath(self.workdir)
            ):
                continue
            if best is None or t.get("updated", 0) > best.get("updated", 0):
                best = t
        return best

    def lock_thread(self, home):
        import fcntl

        d = os.path.join(home, "thread-writer-locks")
        os.makedirs(d, exist_ok=True)
        # held (open) until the process exits, like codex's single-writer lock
        self._lock = open(os.path.join(d, self.thread["thread_id"]), "w")  # noqa: SIM115
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.die(
                1,
                f"Error: thread-store conflict: thread {self.thread['thread_id']} "
                "already has an active writer",
            )

    def save(self):
        self.thread["updated"] = time.time()
        C.save_json_file(os.path.join(self.store, f"{self.thread['thread_id']}.json"), self.thread)

    def turn(self, prompt, last_message_file):
        t = self.thread
        tid = t["thread_id"]
        t["turns"] += 1
        turn = t["turns"]
        report = t["report"]
        phase = C.phase_of(report)
        b = C.Behaviour(C.load_behaviour("codex", self.seat, phase))
        C.setup_process(b, self.log, self.workdir, on_term=143)
        self.save()
        if not self.json:
            C.err(
                f"OpenAI Codex v{VERSION} (research preview)\n--------\nworkdir: {self.workdir}\n"
                f"model: {self.model}\nprovider: openai\napproval: never\nsandbox: {self.sandbox}\n"
                f"session id: {tid}\n--------\nuser\n{prompt}\n"
            )
        self.emit({"type": "thread.started", "thread_id": tid})
        self.emit({"type": "turn.started"})
        if b.hang:
            C.hang_forever()
        b.sleep()
        if b.flood_bytes and turn == 1:
            if self.json:
                C.flood(
                    b.flood_bytes,
                    lambda i, pad: json.dumps(
                        {
                            "type": "item.completed",
                            "item": {"id": f"noise_{i}", "type": "reasoning", "text": pad},
                        }
                    ),
                )
            else:
                C.flood(b.flood_bytes, stream=sys.stderr)
        self.log(
            "turn",
            turn=turn,
            session=tid,
            phase=phase,
            report=report,
            tool_call=b.wants_write(turn, report),
            sandbox=self.sandbox,
        )
        if b.crashes_on(turn) and b.crash_kind == "bad_request":
            # A 400 is not retried; its message is the raw body (codex 0.169).
            body = ('{"error":{"message":"Invalid request.","type":"invalid_request_error"}}')
            self.emit({"type": "turn.failed", "error": {"message": body}})
            if not self.json:
                C.err(f"ERROR: {body}")
            C.finish(self.log, 1)
        if b.crashes_on(turn):
            for k in range(1, 6):
                self.emit({"type": "error", "message": f"Reconnecting... {k}/5 ({HIGH_DEMAND})"})
                if not self.json:
                    C.err(f"ERROR: Reconnecting... {k}/5 ({HIGH_DEMAND})")
            said = b.crash_message or HIGH_DEMAND
            self.emit({"type": "error", "message": said})
            self.emit({"type": "turn.failed", "error": {"message": said}})
            if not self.json:
                C.err(f"ERROR: {said}")
            C.finish(self.log, 1)
        self.emit(
            {
                "type": "item.completed",
                "item": {
                    "id": "item_0",
                    "type": "agent_message",
                    "text": f"Working on turn {turn}.",
                },
            }
        )
        wrote = False
        if b.wants_write(turn, report):
            allowed = self.sandbox == "danger-full-access" or (
                self.sandbox == "workspace-write"
                and any(C.inside(report, d) for d in self.writable)
            )
            if allowed:
                kind = "update" if os.path.exists(report) else "add"
                self.emit(
                    {
                        "type": "item.started",
                        "item": {
                            "id": "item_1",
                            "type": "file_change",
                            "changes": [{"path": report, "kind": kind}],
                            "status": "in_progress",
                        },
                    }
                )
                C.write_report(report, "codex", self.seat, turn, b.marker_due(turn), b.content,
                               b.pad_bytes)
                wrote = True
                self.emit(
                    {
                        "type": "item.completed",
                        "item": {
                            "id": "item_1",
                            "type": "file_change",
                            "changes": [{"path": report, "kind": kind}],
                            "status": "completed",
                        },
                    }
                )
            else:
                self.emit(
                    {
                        "type": "item.completed",
                        "item": {
                            "id": "item_1",
                            "type": "command_execution",
                            "command": f"/bin/bash -lc \"cat >> {report} <<'EOF' ... EOF\"",
                            "aggregated_output": (
                                f"/bin/bash: line 1: {report}: Read-only file system\n"
                            ),
                            "exit_code": 1,
                            "status": "failed",
                        },
                    }
                )
        final = f"Turn {turn}: " + ("report updated." if wrote else "no changes to the report.")
        self.emit(
            {
                "type": "item.completed",
                "item": {"id": "item_2", "type": "agent_message", "text": final},
            }
        )
        u = t["usage"]
        u["input_tokens"] += USAGE_IN
        u["output_tokens"] += USAGE_OUT
        self.save()
        self.emit(
            {
                "type": "turn.completed",
                "usage": {
                    "input_tokens": u["input_tokens"],
                    "cached_input_tokens": 0,
                    "cache_write_input_tokens": 0,
                    "output_tokens": u["output_tokens"],
                    "reasoning_output_tokens": 0,
                },
            }
        )
        if not self.json:
            C.out(final + "\n")
            C.err(f"tokens used\n{u['input_tokens'] + u['output_tokens']}")
        if last_message_file:
            with open(last_message_file, "w", encoding="utf-8") as fh:
                fh.write(final)
        self.log("turn_end", turn=turn, session=tid, wrote=wrote)
        b.hang_after(turn)
        C.finish(self.log, b.exit_code)


def main() -> None:
    Codex(sys.argv[1:]).run()
