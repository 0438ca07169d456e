"""OpenAI Codex CLI: council runs the loop, `codex exec --json` then `exec … resume THREAD_ID`.

Never `resume --last`: it is scoped to the cwd and silently starts a new thread when the
folder has none. The thread id comes from the `thread.started` event."""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import council.agents.selfhosted as selfhosted
from council import clis
from council.agents.allowlist import rules
from council.agents.base import (
    AgentJob,
    Invocation,
    Outcome,
    failure,
    json_events,
    model_args,
)
from council.agents.failure import Failure, Kind, one_line, try_again_at, try_again_in
from council.agents.mcp import given, toml_value
from council.agents.mcp import toml_string as toml_string
from council.agents.toolsets import Instructions
from council.errors import CouncilError
from council.evidence.ledger import Usage, estimate
from council.graph import EDIT, FILES, WEB
from council.runoptions import McpServer, Seat
from council.store import agentfs, logins

PROFILE = "council"
# codex 0.169's system-wide config layer, read below the user's.
SYSTEM_CONFIG = Path("/etc/codex/config.toml")
# The most of one codex config file council reads: they hold a few KB.
CONFIG_LIMIT = 4 << 20


class CodexConfigError(CouncilError):
    """A codex config file that names MCP servers is not a plain file council can read."""


# The tools council's instructions name (codex has no switch for its built-in set):
# apply_patch both adds and updates files, so an EDIT seat of codex is asked to patch
# (docs/watch.md) but could still replace the file whole.
TOOLS = {FILES: ("apply_patch", "exec_command"), EDIT: ("apply_patch", "exec_command"),
         WEB: ("apply_patch", "exec_command", "web_search")}
INSTRUCTIONS = Instructions(
    TOOLS,
    how_to_write="Write and change files with apply_patch (paths relative to your folder). "
                 "Run commands with\nexec_command: they run in a sandbox that writes only "
                 "your folder and has no network, so use\nthe shell to read and search "
                 "files, never to fetch pages. Do not run code you downloaded.",
    how_to_search="Search the web and read pages with web_search.")
# codex's features a research seat never uses, each verified to leave the request in 0.169:
# goals (get/create/update_goal, 3.3 KB), apps (tool_search and the apps' instructions),
# multi_agent (spawn_agent and its tools), sleep_tool. `tools.view_image=false` is accepted
# but leaves view_image offered, and request_user_input has no switch: both stay.
FEATURES_OFF = ("goals", "apps", "multi_agent", "sleep_tool")


def tool_args(toolset: str, extra_args: Sequence[str], system: Path | None) -> list[str]:
    """The phase's tools (web search or none), no feature a research seat never uses, and
    council's instructions instead of codex's, unless the seat's extra_args name their own
    `model_instructions_file`."""
    args = ["-c", f"web_search={'live' if toolset == WEB else 'disabled'}",
            # bundled skills: 3.6 KB of instructions a research seat never uses
            "-c", "skills.bundled.enabled=false"]
    for feature in FEATURES_OFF:
        args += ["--disable", feature]
    if system is not None and not any("model_instructions_file" in a for a in extra_args):
        # a JSON string is a TOML string
        args += ["-c", f"model_instructions_file={json.dumps(str(system))}"]
    return args


def mcp_table(servers: Sequence[McpServer], disabled: Sequence[str]) -> str | None:
    """The one `mcp_servers={...}` override: each server of the user's config (`disabled`)
    turned off, each of the seat's defined, or None when there is neither. One inline table,
    because codex splits a `-c` key at every dot. codex gives a stdio server only its basic
    variables and the ones `env_vars` names, from codex's own environment (mcp_env puts them
    there): no value is on the command line; `required`, so a seat never runs without its
    server.
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
                               "env_vars": [name for name, _ in server.env]}) | {
            "required": True, "default_tools_approval_mode": "approve"}
    return None if not table else toml_value(table, quoted=True)


def mcp_env(servers: Sequence[McpServer], environ: Mapping[str, str], held: Mapping[str, str],
            seat: str = "") -> dict[str, str]:
    """What codex's environment must hold for its servers' `env_vars`: each server variable
    with the value of the variable of council's environment (`environ`) it is read from.
    codex expands nothing in its config, so a server's variable is codex's own by name: one
    codex's environment may already hold (`held`, or a name of its allow-list) is refused
    unless it is read from council's variable of that name (then it is there already)."""
    names, prefixes = rules(clis.CODEX, environ)
    values = given(servers, environ, seat)
    env: dict[str, str] = {}
    for server in servers:
        for name, source in server.env:
            if name in held or name in names or name.startswith(prefixes):
                if name != source:
                    raise CodexConfigError(
                        f"agents.{seat}.mcp_servers.{server.name}.env: {name} is a variable "
                        f"codex's own environment holds: a codex seat's server gets it only "
                        f"as it is ({name}: {name})")
                continue
            if env.get(name, values[source]) != values[source]:
                raise CodexConfigError(
                    f"agents.{seat}.mcp_servers.{server.name}.env: {name} is read from "
                    "another variable by another server of this codex seat: codex gives "
                    "both servers the same one")
            env[name] = values[source]
    return env



def self_hosted_provider(seat: Seat) -> str:
    """A self-hosted seat's model provider id: never a built-in one (`openai`, `ollama`…),
    which codex refuses to redefine."""
    return f"council-{seat.name}"


def self_hosted_base_url(seat: Seat) -> str:
    """codex POSTs to `{base_url}/responses`: the server's `/v1`."""
    url = selfhosted.root(seat)
    return url if url.endswith("/v1") else url + "/v1"


def self_hosted_config(seat: Seat) -> str:
    """A self-hosted seat's private CODEX_HOME config.toml (agents/selfhosted.py): its own
    provider (`wire_api = "responses"`, the only one 0.171 accepts) and window, no update
    check, analytics or feedback. JSON strings are TOML basic strings."""
    provider = self_hosted_provider(seat)
    window = selfhosted.window(seat)
    lines = [
        f"model = {json.dumps(seat.model)}",
        f"model_provider = {json.dumps(provider)}",
        f"model_context_window = {window}",
        f"model_auto_compact_token_limit = {int(window * selfhosted.COMPACT_AT)}",
        "check_for_update_on_startup = false",
        "",
        f"[model_providers.{json.dumps(provider)}]",
        f"name = {json.dumps(provider)}",
        f"base_url = {json.dumps(self_hosted_base_url(seat))}",
        'wire_api = "responses"',
        *([f"env_key = {json.dumps(seat.api_key_env)}"] if seat.api_key_env else []),
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
    ]
    return "\n".join(lines)


def self_hosted_env(seat: Seat, home: str, codex_home: str,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A private HOME and CODEX_HOME (no login of the user's), and the server's key under the
    name the provider's env_key gives."""
    env = {"HOME": home, "CODEX_HOME": codex_home}
    if seat.api_key_env:
        env[seat.api_key_env] = selfhosted.server_key(seat, environ)
    return env


def install_root() -> str | None:
    """The folder codex runs from (its npm package's node_modules): its sandbox re-runs
    codex's own binary inside, so the profile must let it read there."""
    found = shutil.which("codex")
    if found is None:
        return None
    real = Path(os.path.realpath(found))
    return str(next((p for p in real.parents if p.name == "node_modules"), real.parent))


def codex_home(environ: Mapping[str, str] | None = None) -> Path:
    """The folder codex reads its settings and login from, and the one council's codex
    processes get as CODEX_HOME: $CODEX_HOME, else ~/.codex (store/logins.py)."""
    environ = os.environ if environ is None else environ
    return Path(logins.config_dir("codex", environ, environ.get("HOME") or str(Path.home())))


def _read_config(path: Path, strict: bool = False) -> dict[str, Any]:
    """One codex config file of the user's, read bounded and never blocking on a FIFO
    (agentfs.read_own: a link, a dotfiles manager's, is followed as codex follows it); {}
    when there is none, or it does not parse (codex then says so itself). `strict`: a file
    that is there but is not a plain file (a FIFO, a device) raises CodexConfigError
    instead of counting as empty."""
    try:
        data = agentfs.read_own(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return {}
    except agentfs.UnsafeFile as exc:
        if strict:
            raise CodexConfigError(
                f"{exc}: council reads codex's config to turn off the MCP servers it names, "
                "and can only read a plain file") from exc
        return {}
    except OSError:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _user_config(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The user's codex config.toml (in CODEX_HOME, else ~/.codex), or {} when there is none
    or it does not parse."""
    return _read_config(codex_home(environ) / "config.toml")


def selected_profile(extra_args: Sequence[str]) -> str | None:
    """The profile a seat's extra_args select (`-p NAME`, `--profile NAME`, `--profile=NAME`,
    `-pNAME`): codex 0.169 then layers `$CODEX_HOME/NAME.config.toml` over the user's config
    (a `profile = ...` key in config.toml is an error there, and `[profiles.NAME]` tables hold
    no MCP servers)."""
    chosen = None
    args = list(extra_args)
    for i, arg in enumerate(args):
        if arg in ("-p", "--profile") and i + 1 < len(args):
            chosen = args[i + 1]
        elif arg.startswith("--profile="):
            chosen = arg.partition("=")[2]
        elif arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            chosen = arg[2:]
    return chosen


def user_mcp_servers(extra_args: Sequence[str] = (),
                     environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The names of the MCP servers codex would start for a seat: the `[mcp_servers]` of the
    system config, the user's config.toml and the profile the seat selects. A project's
    `.codex/config.toml` is not read: `mcp_args` keeps codex from loading it.

    Raises CodexConfigError when one of those files is there but is not a plain file (a
    FIFO, a device): then council cannot know which servers it would start."""
    files = [SYSTEM_CONFIG, codex_home(environ) / "config.toml"]
    profile = selected_profile(extra_args)
    if profile and profile not in (".", "..") and "/" not in profile and "\0" not in profile:
        files.append(codex_home(environ) / f"{profile}.config.toml")
    names: dict[str, None] = {}
    for path in files:
        servers = _read_config(path, strict=True).get("mcp_servers")
        if isinstance(servers, dict):
            names.update(dict.fromkeys(str(name) for name in servers))
    return tuple(names)


def mcp_args(extra_args: Sequence[str] = (),
             environ: Mapping[str, str] | None = None,
             servers: Sequence[McpServer] = ()) -> list[str]:
    """codex starts no MCP server of the user's (each one its configs name is turned off),
    and starts the seat's own `servers`.

    - `-c mcp_servers={"<name>"={enabled=false}, ..., "<seat's>"={command=…}}`: an override
      is merged into the config table by table, so this turns off each named server and keeps
      the rest of its entry. One inline table, because codex splits a `-c` key at every dot,
      quotes or not (`mcp_servers."a.b".enabled=false` fails to load). Only names a config
      defines are turned off: a server named here and nowhere else fails codex's start
      ("invalid transport") unless it has a command or url; `mcp_servers={}` changes nothing.
      A seat's server named like one of the user's is refused (CodexConfigError): merged into
      the user's entry, it would keep that entry's other keys (its env, its cwd).
    - `-c project_root_markers=[]`: the project root is then the agent's own folder, so no
      `.codex/config.toml` of a folder above it (the user's project, a cloned repository, even
      a trusted one) adds servers, hooks or settings, and no AGENTS.md above it is read."""
    args = ["-c", "project_root_markers=[]"]
    names = user_mcp_servers(extra_args, environ)
    clash = sorted(set(names) & {server.name for server in servers})
    if clash:
        raise CodexConfigError(
            f"the MCP server {clash[0]!r} of this seat has the name of one in your codex "
            "config: rename the seat's (mcp_servers in council's config)")
    table = mcp_table(servers, names)
    if table is not None:
        args += ["-c", f"mcp_servers={table}"]
    return args


def legacy_sandbox(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user's config.toml sets `sandbox_mode` (at the top or in the selected
    profile): codex then ignores permission profiles and uses the older sandbox."""
    config = _user_config(environ)
    profile = (config.get("profiles") or {}).get(config.get("profile")) or {}
    return "sandbox_mode" in config or (isinstance(profile, dict) and "sandbox_mode" in profile)


# What codex 0.169 reads from each folder between the project root and its cwd as standing
# instructions, the override first (core/src/agents_md.rs).
INSTRUCTION_FILES = ("AGENTS.override.md", "AGENTS.md")


def instruction_files(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The names of the files codex would load from an agent's folder as instructions:
    AGENTS.override.md, AGENTS.md, and the `project_doc_fallback_filenames` of the user's
    config.toml (top level or the selected profile). An entry that is not a plain file name
    is one codex ignores too."""
    config = _user_config(environ)
    profile = (config.get("profiles") or {}).get(config.get("profile")) or {}
    names = list(INSTRUCTION_FILES)
    for table in (config, profile if isinstance(profile, dict) else {}):
        fallback = table.get("project_doc_fallback_filenames")
        for name in fallback if isinstance(fallback, list) else ():
            if (isinstance(name, str) and name not in ("", ".", "..") and "/" not in name
                    and "\0" not in name and name not in names):
                names.append(name)
    return tuple(names)


def sandbox_args() -> list[str]:
    """Containment of codex's shell and patches. A permission profile (codex 0.169, Beta):
    commands read only system folders (`:minimal`) and codex's own install, and write only
    the agent's folder, so no path outside it (a token file, another CLI's login) can be
    read, and the network is off. Where the user's config.toml forces the older sandbox,
    `workspace-write` with its /tmp and $TMPDIR roots excluded: writes contained, reads not."""
    if legacy_sandbox():
        return ["-s", "workspace-write",
                "-c", "sandbox_workspace_write.exclude_slash_tmp=true",
                "-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true"]
    entries = ['":minimal"="read"', '":project_roots"={"."="write"}']
    root = install_root()
    if root:
        entries.append(f'{json.dumps(root)}="read"')  # a JSON string is a TOML string
    return ["-c", f'default_permissions="{PROFILE}"',
            "-c", f"permissions.{PROFILE}.filesystem={{{', '.join(entries)}}}"]


def self_hosted_home(job: AgentJob) -> Path:
    """A self-hosted seat's CODEX_HOME, in its private HOME: it lasts the run, so a session
    resumes there."""
    assert job.home is not None
    return job.home / ".codex"


def search_filter(job: AgentJob) -> list[str]:
    """The source policy's allow list as codex's hosted web_search filter: codex 0.171 sends
    `tools.web_search.allowed_domains` as the tool's `filters.allowed_domains` (seen against
    the scripted server). It has no deny list for it, and this filter none for what its
    shell fetches: the ledger judges what it cited."""
    if not job.sources.allow or job.tools != WEB:
        return []
    return ["-c", f"tools.web_search={{allowed_domains={json.dumps(list(job.sources.allow))}}}"]


class CodexAdapter:
    cli = "codex"
    facts = clis.CODEX
    native_loop = False
    resumes_sessions = True
    instructions = INSTRUCTIONS
    # Its shell reads any path it can name: `~` is a private HOME of the agent's own.
    private_home = True

    def _common(self, job: AgentJob) -> list[str]:
        args = [
            "-C", str(job.cwd),
            *sandbox_args(),
            *model_args("-m", job.seat),
            # The phase's tools (web search or none), no features a research seat never
            # uses, and council's instructions instead of codex's coding-agent ones.
            *tool_args(job.tools, job.seat.extra_args, job.system_prompt(self.instructions)),
            *search_filter(job),
            # Otherwise a dead endpoint makes codex retry forever.
            "--disable", "unbounded_connection_retries",
            # No plugins: council's own (extensions/codex), once its hooks are trusted, would
            # run in this agent too, and with plugins on codex contacts its plugin hosts on
            # every start.
            "--disable", "plugins",
            # Reads: the sandbox limits writes only, and codex 0.169 hands its shell its whole
            # environment. "core" leaves HOME, PATH, SHELL, USER, LOGNAME and TMPDIR, so no
            # key, codex's own included, is one `env` away from the model.
            "-c", 'shell_environment_policy.inherit="core"',
            # No MCP server but the seat's own (mcp_servers) and the ones its extra_args give:
            # codex starts them as the user, outside the sandbox, and offers their tools.
            *mcp_args(job.seat.extra_args, self._servers_environ(job),
                      servers=job.seat.mcp_servers),
        ]
        if job.seat.effort:
            args += ["-c", f"model_reasoning_effort={job.seat.effort}"]
        return [*args, *job.seat.extra_args]

    def prepare(self, job: AgentJob, session_id: str | None = None) -> Invocation:
        if session_id:
            # A continuation prompt holds no topic, so it may go on the argv.
            return self.resume(job, session_id, job.prompt_file.read_text(encoding="utf-8"))
        # The prompt comes on stdin ("-"), so the topic never appears on an argv.
        argv = ["codex", "exec", "--json", "--skip-git-repo-check", *self._common(job), "-"]
        return Invocation(tuple(argv), job.cwd, self._servers_env(job),
                          stdin_file=job.prompt_file)

    def resume(self, job: AgentJob, session_id: str, prompt: str) -> Invocation:
        # cwd and sandbox are not remembered by resume: the exec parent must give them again.
        argv = ["codex", "exec", *self._common(job), "resume", "--skip-git-repo-check",
                "--json", session_id, prompt]
        return Invocation(tuple(argv), job.cwd, self._servers_env(job))

    def _servers_env(self, job: AgentJob) -> dict[str, str]:
        """_env, and the variables the seat's MCP servers get (mcp_env), read now."""
        env = self._env(job)
        return {**env, **mcp_env(job.seat.mcp_servers, os.environ, env, job.seat.name)}

    def _env(self, job: AgentJob) -> dict[str, str]:
        """codex's shell reads any path it can name, so `~` is a private HOME of the agent's
        own (empty: other tools' logins are not there) while CODEX_HOME stays the user's, so
        codex's login, settings and a login it refreshes are its real ones."""
        if job.home is None:
            return {}
        job.home.mkdir(parents=True, exist_ok=True)
        if job.seat.self_hosted:
            # A CODEX_HOME of the seat's own, beside its HOME: the server as its provider,
            # no login of the user's (agents/selfhosted.py).
            private = self_hosted_home(job)
            private.mkdir(mode=0o700, exist_ok=True)
            agentfs.write(private, "config.toml", self_hosted_config(job.seat))
            return self_hosted_env(job.seat, str(job.home), str(private))
        return {"HOME": str(job.home), "CODEX_HOME": str(codex_home())}

    def _servers_environ(self, job: AgentJob) -> Mapping[str, str] | None:
        """Where codex will read its MCP servers from: a self-hosted seat's own CODEX_HOME
        (naming a server of the user's there would fail codex's start), else the user's."""
        if job.seat.self_hosted and job.home is not None:
            return {"CODEX_HOME": str(self_hosted_home(job))}
        return None

    def one_shot(self, folder: Path, prompt: Path, model: str | None = None) -> Invocation:
        """codex always has its shell: it runs in council's read-nothing sandbox profile in
        the empty `folder`, without web search, plugins or a server of the user's; its HOME
        a folder in it (its shell's ~ leads nowhere), its login the user's."""
        argv = ["codex", "exec", "--json", "--skip-git-repo-check", "-C", str(folder),
                *sandbox_args(), "-c", "web_search=disabled", "--disable", "plugins",
                "--disable", "unbounded_connection_retries",
                "-c", 'shell_environment_policy.inherit="core"', *mcp_args(),
                *(["-m", model] if model else []), "-"]
        home = folder / "home"
        home.mkdir(exist_ok=True)
        env = {"HOME": str(home), "CODEX_HOME": str(codex_home())}
        return Invocation(tuple(argv), folder, env, stdin_file=prompt)

    def answer(self, log: Path) -> str:
        """The last agent message."""
        text = ""
        for event in json_events(log):
            item = event.get("item") if event.get("type") == "item.completed" else None
            if isinstance(item, dict) and item.get("type") == "agent_message":
                text = str(item.get("text") or "")
        return text

    def own_variables(self, environ: Mapping[str, str]) -> set[str]:
        """The `env_key` of every model provider in its config.toml: a key codex itself is
        told to read (a custom provider's, such as a local server's)."""
        providers = _user_config(environ).get("model_providers")
        if not isinstance(providers, dict):
            return set()
        return {str(p["env_key"]) for p in providers.values()
                if isinstance(p, dict) and isinstance(p.get("env_key"), str)}

    def memory_files(self, folder: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Its facts' files, and the fallback names of the user's config (instruction_files);
        codex reads none below the folder's top."""
        top = dict.fromkeys((*self.facts.memory_files, *instruction_files(),
                             *self.facts.config_entries))
        return tuple(top), self.facts.nested_memory

    def login_elsewhere(self, config_dir: Path, env: Mapping[str, str]) -> str | None:
        """A custom model provider in its config.toml: its `env_key` variable, if set (a
        provider without one needs no key)."""
        config = config_dir / "config.toml"
        data = _read_config(config)
        name = data.get("model_provider")
        provider = (data.get("model_providers") or {}).get(name) if isinstance(name, str) \
            else None
        if not isinstance(provider, dict):
            return None
        key = provider.get("env_key")
        if not key:
            return f"model provider {name} in {config} (no key needed)"
        return str(key) if env.get(str(key)) else None

    def stranded_key(self, env: Mapping[str, str], home: Path) -> str | None:
        return None  # codex reads no key from a file council keeps from its agents

    def fetches(self, event: dict[str, Any]) -> Iterator[tuple[str, str | None, str | None]]:
        """Nothing: codex logs its searches, not the pages it read."""
        return iter(())

    def doctor_notes(self) -> list[str]:
        if not legacy_sandbox():
            return []
        return ["codex: your config.toml sets sandbox_mode, so codex ignores council's "
                "permission profile and its shell can read any file you can; remove "
                "sandbox_mode to contain its reads (docs/containment.md)"]

    def lost_session(self, said: str) -> bool:
        return "no rollout found for thread id" in said  # rc 1, on stderr

    def outcome(self, log: Path, returncode: int | None, start: int = 0) -> Outcome:
        thread_id = error = None
        for event in json_events(log, start):
            kind = event.get("type")
            if kind == "thread.started":
                thread_id = str(event.get("thread_id"))
            elif kind == "turn.failed":
                err = event.get("error") or {}
                error = str(err.get("message") if isinstance(err, dict) else err)
            elif kind == "turn.completed":
                error = None
            # "error" events are retry notices, not failures.
        error = failure(self.cli, returncode, error)
        return Outcome(thread_id, error)

    def classify(self, events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
                 now: datetime, tz: tzinfo | None = None) -> Failure | None:
        return classify(events, stderr, returncode, now, tz)

    def answered_models(self, events: Iterable[dict[str, Any]]) -> list[str]:
        return answered_models(events)

    def own_retry(self, event: dict[str, Any]) -> bool:
        return event.get("type") == "error" and \
            str(event.get("message") or "").startswith("Reconnecting...")

    def fatal(self, event: dict[str, Any]) -> Failure | None:
        """A reconnect after a refused login: codex retries a 401 like a cut stream."""
        if not self.own_retry(event):
            return None
        said = str(event.get("message"))
        if not re.search(r"unexpected status 40[13]\b", said):
            return None
        return Failure(Kind.AUTH, one_line(said), status=401 if " 401" in said else 403)

    def usage_counter(self, model: str | None) -> CodexUsage:
        return CodexUsage(model)

    def requests(self, events: Iterable[dict[str, Any]]) -> int | None:
        """None: `codex exec --json` reports tokens per turn, not requests."""
        return None


class CodexUsage:
    """`turn.completed.usage` is the thread's running total, so the last one of a thread is
    its total. One log can hold several threads (a retried answer, a restarted seat): each
    finished thread's total is banked when the next one starts."""

    def __init__(self, model: str | None) -> None:
        self.model = model
        self.thread: str | None = None
        self.banked = (0, 0, 0)  # tokens in, out, cached in
        self.current = (0, 0, 0)

    def add(self, event: dict[str, Any]) -> None:
        kind, usage = event.get("type"), event.get("usage")
        if kind == "thread.started":
            thread = event.get("thread_id")
            if self.thread is not None and thread != self.thread:
                self.banked = (self.banked[0] + self.current[0],
                               self.banked[1] + self.current[1],
                               self.banked[2] + self.current[2])
                self.current = (0, 0, 0)
            self.thread = str(thread) if thread else self.thread
        elif kind == "turn.completed" and isinstance(usage, dict):
            self.current = (_int(usage.get("input_tokens")), _int(usage.get("output_tokens")),
                            _int(usage.get("cached_input_tokens")))

    def total(self) -> Usage:
        return estimate("codex", self.model, self.banked[0] + self.current[0],
                        self.banked[1] + self.current[1], self.banked[2] + self.current[2])


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


# --------------------------------------------------------------------------- failures
# What codex printed when its vendor said no, read into one Failure (agents/failure.py).
# Seen with codex 0.171.0 against the scripted server (tests/realcli/test_faults_real.py):
# `--json` ends a failed turn with `turn.failed` (`error.message`) and exit 1; each retry
# of its own is an `error` event "Reconnecting... n/m (<cause>)". A ChatGPT plan's limit reads
# "You’ve hit your usage limit. … or try again at 7:15 PM." (the same day) or "… at Dec 1st,
# 2026 12:24 AM.", in codex's local time; a 429 without a usage type loses the vendor's body:
# "exceeded retry limit, last status: 429 Too Many Requests".
USAGE_LIMIT = re.compile(r"hit your usage limit|usage_limit_reached|usage limit has been "
                          r"reached", re.I)
CODEX_QUOTA = re.compile(r"Quota exceeded|insufficient_quota|exceeded your current quota|"
                          r"out of credits", re.I)
CODEX_AUTH = re.compile(r"Unauthorized|Forbidden|invalid_api_key|Incorrect API key|"
                         r"refresh token|Missing environment variable|log ?in again|"
                         r"not logged in", re.I)
CODEX_STATUS = re.compile(r"(?:unexpected status|last status:?)\s+(\d{3})")


def classify(events: Iterable[dict[str, Any]], stderr: str, returncode: int | None,
             now: datetime, tz: tzinfo | None = None) -> Failure | None:
    """The failure codex's `--json` `events`, `stderr` and exit code say, or None when the
    turn did not fail. `now` and `tz` (codex's local zone; default: now's) read a reset."""
    failed: str | None = None
    notices: list[str] = []
    for event in events:
        kind = event.get("type")
        if kind == "turn.failed":
            error = event.get("error")
            failed = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "turn.completed":
            failed = None
        elif kind == "error" and event.get("message"):
            notices.append(str(event["message"]))
    if failed is None and returncode in (0, None):
        return None
    lines = [line for line in (stderr or "").splitlines() if line.strip()]
    text = failed or (notices[-1] if notices else "") or (lines[-1] if lines else "") or \
        f"codex exited with code {returncode}"
    # The last retry notice names the cause a generic final message may hide.
    said = " ".join([text, *notices[-1:]])
    found = CODEX_STATUS.search(said)
    status = int(found.group(1)) if found else None
    base = Failure(Kind.CRASH, one_line(text), status=status)
    if USAGE_LIMIT.search(said):
        wait = try_again_in(said)
        at = try_again_at(said, now, tz)
        if at is None and wait is not None:
            at = now + timedelta(seconds=wait)
        return replace(base, kind=Kind.PLAN_LIMIT, resets_at=at, wait=wait)
    if CODEX_QUOTA.search(said):
        return replace(base, kind=Kind.QUOTA)
    if re.search(r"at capacity", said, re.I):
        return replace(base, kind=Kind.OVERLOADED)
    if status in (401, 403) or CODEX_AUTH.search(said):
        return replace(base, kind=Kind.AUTH)
    if status == 429 or re.search(r"Too Many Requests|Rate limit|rate_limit_exceeded", said,
                                   re.I):
        return replace(base, kind=Kind.RATE_LIMIT, wait=try_again_in(said))
    if re.search(r"idle timeout|timed out|timeout", said, re.I):
        return replace(base, kind=Kind.NO_ANSWER)
    if "stream disconnected before completion" in said:
        return replace(base, kind=Kind.STREAM_CUT)
    if (status is not None and status >= 500) or re.search(
            r"Service Unavailable|overloaded|high demand|Internal Server Error", said, re.I):
        return replace(base, kind=Kind.OVERLOADED)
    if re.search(r"Connection failed|error sending request|waiting for network", said, re.I):
        return replace(base, kind=Kind.NO_ANSWER)
    return base


def answered_models(events: Iterable[dict[str, Any]]) -> list[str]:
    """The models codex says answered. codex 0.171's `exec --json` names none (its events
    carry no model), so this is [] there; an event's `model` (or a reroute's `to_model`),
    should a later codex add one, is taken as said."""
    named: dict[str, None] = {}
    for event in events:
        for key in ("model", "to_model"):
            value = event.get(key)
            if isinstance(value, str) and value:
                named[value] = None
    return list(named)
