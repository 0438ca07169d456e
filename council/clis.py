"""The agent CLIs council drives, as plain facts: the one registry of CLIs (`REGISTRY`), read by
the floors that may not import an adapter (the store's redaction, the hooks, the estimate) and
by those that may (the preflight, the endpoint check). What a CLI *does* (its argv, its
files, its output) is its adapter's, `council/agents/<cli>.py`; docs/internals.md, "Adding a
CLI", says what a new one needs.

Imported by the hooks (through redaction): no import at all, not even `dataclasses` or
`typing`, each of which would add milliseconds to every agent turn."""

from __future__ import annotations

TYPE_CHECKING = False  # no typing import: see the module's docstring
if TYPE_CHECKING:
    from collections.abc import Mapping


class HookReply:
    """What a CLI that loops through council's hook reads on the hook's stdout after a turn: a
    JSON object made of `go_on` and the continuation under `reason` to go on; `stop` to let
    it stop (None: nothing at all); and, after a hook error, `stop` with the error under
    `error` (None: as a plain stop)."""

    __slots__ = ("error", "go_on", "reason", "stop")

    def __init__(self, go_on: Mapping[str, str], reason: str,
                 stop: Mapping[str, str] | None = None, error: str | None = None) -> None:
        self.go_on, self.reason, self.stop, self.error = dict(go_on), reason, stop, error


class KeptFolder:
    """A folder of the CLI's own in an agent's folder where council keeps its settings:
    `files` (plain files council wrote) and `empty` (files kept only while empty); anything
    else in it is moved out of the way at each phase's start (seat/seatfolder.py)."""

    __slots__ = ("empty", "files", "name")

    def __init__(self, name: str, files: tuple[str, ...] = (), empty: tuple[str, ...] = ()
                 ) -> None:
        self.name, self.files, self.empty = name, files, empty


class Cli:
    """One agent CLI's facts. Every field is data; a CLI without one says so with its empty
    value (no hook, no memory file), never by borrowing another CLI's."""

    __slots__ = (
        "config_entries",
        "config_folder",
        "config_var",
        "config_var_is_home",
        "hook",
        "kept",
        "keys",
        "listings",
        "login",
        "login_file",
        "memory_files",
        "min_window",
        "name",
        "names",
        "nested_memory",
        "npm",
        "prefixes",
        "profiles",
        "providers",
        "request_bytes",
        "subscription",
        "version_env",
        "when",
        "window_probes",
    )

    def __init__(self, name: str, *, npm: str, login: str, config_folder: str, login_file: str,
                 keys: tuple[str, ...], prefixes: tuple[str, ...], request_bytes: int,
                 min_window: int, config_var: str | None = None,
                 config_var_is_home: bool = False, names: tuple[str, ...] = (),
                 when: tuple[tuple[str, tuple[str, ...]], ...] = (),
                 memory_files: tuple[str, ...] = (), nested_memory: tuple[str, ...] = (),
                 config_entries: tuple[str, ...] = (), kept: KeptFolder | None = None,
                 hook: HookReply | None = None, providers: tuple[str, ...] = (),
                 version_env: tuple[tuple[str, str], ...] = (),
                 listings: tuple[str, ...] = ("{v1}/models", "{base}/api/tags"),
                 window_probes: bool = True,
                 profiles: Mapping[str, tuple[str | None, str | None]] | None = None,
                 subscription: str = "") -> None:
        self.name = name
        # Its npm package (tested_versions.json pins its version).
        self.npm = npm
        # The preflight's fix when no login is found.
        self.login = login
        # Its settings folder: `config_var` when set (the folder itself, or with
        # `config_var_is_home` the home the folder `config_folder` is in), else
        # `config_folder` in the user's home; the login file the user's login writes there.
        self.config_var, self.config_var_is_home = config_var, config_var_is_home
        self.config_folder, self.login_file = config_folder, login_file
        # The variables that log it in (the preflight looks for them by name, never value).
        self.keys = keys
        # Its own variables, which its agents see (agents/environment.py): by prefix, by
        # name, and by prefix only when a switch says it uses that cloud.
        self.prefixes, self.names, self.when = prefixes, names, when
        # The mean request body it sends, bytes (evidence/estimate.py).
        self.request_bytes = request_bytes
        # The smallest window its research loop fits in, on a self-hosted server (users
        # report 32K at least; Ollama's default 4,096 ends a claude session on its second
        # turn). The preflight checks it against the seat's and the server's.
        self.min_window = min_window
        # What it loads from an agent's folder as instructions or settings
        # (seat/seatfolder.py moves them out of the way): names at the top, names at any
        # depth, settings entries at the top, and the folder of its own council keeps.
        self.memory_files, self.nested_memory = memory_files, nested_memory
        self.config_entries, self.kept = config_entries, kept
        # Its loop hook's reply (seat/hook.py), or None: council loops it from outside.
        self.hook = hook
        # The Inspect model providers of its vendor (evaluation/configurations.py).
        self.providers = providers
        # What `<cli> --version` needs besides the allow-list (readiness/preflight.py).
        self.version_env = version_env
        # Where a self-hosted server it talks to lists its models ({root}: the base URL as
        # given, {v1}: with /v1, {base}: without), and whether that server may state its
        # window in the places readiness/endpoint.py probes.
        self.listings, self.window_probes = listings, window_probes
        # Its seat in council's built-in council, by profile (options.PROFILES): the seat's
        # (model, effort), None for the CLI's own default. runoptions.PROFILES is made of
        # these, and `--test` gives a configured seat of it the test profile's
        # (config._cheapen). A CLI without one has no seat there unless a config names it.
        self.profiles = dict(profiles or {})
        # What its login file holds when it is a subscription's login ("claude.ai"): the
        # login an API key in the environment silently overrides (readiness/doctor.py).
        self.subscription = subscription


CLAUDE = Cli(
    "claude",
    npm="@anthropic-ai/claude-code",
    login="log in with `claude` then /login, or set ANTHROPIC_API_KEY",
    config_var="CLAUDE_CONFIG_DIR", config_folder=".claude", login_file=".credentials.json",
    subscription="claude.ai",
    keys=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
          "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"),
    prefixes=("ANTHROPIC_", "CLAUDE_", "DISABLE_"),
    names=("MAX_THINKING_TOKENS", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT", "BASH_DEFAULT_TIMEOUT_MS"),
    when=(("CLAUDE_CODE_USE_BEDROCK", ("AWS_",)),
          ("CLAUDE_CODE_USE_VERTEX", ("GOOGLE_", "CLOUD_ML_", "VERTEX_"))),
    request_bytes=15_800, min_window=32_768,
    # Claude Code 2.1: CLAUDE.md and CLAUDE.local.md, in a subfolder too; .claude/ (the
    # project's settings with hooks, permissions and env; its rules, commands, agents,
    # skills); .mcp.json (the project's MCP servers).
    memory_files=("CLAUDE.md", "CLAUDE.local.md"), nested_memory=("CLAUDE.md", "CLAUDE.local.md"),
    config_entries=(".claude", ".mcp.json"),
    hook=HookReply({"decision": "block"}, "reason"),
    providers=("anthropic",),
    profiles={"production": ("opus", "high"), "test": ("haiku", "low")},
)
CODEX = Cli(
    "codex",
    npm="@openai/codex",
    login="log in with `codex login`, or set OPENAI_API_KEY",
    config_var="CODEX_HOME", config_folder=".codex", login_file="auth.json",
    subscription="ChatGPT",
    keys=("OPENAI_API_KEY", "CODEX_API_KEY"),
    prefixes=("OPENAI_", "CODEX_"),
    request_bytes=13_900, min_window=32_768,
    # Codex 0.169: AGENTS.override.md, AGENTS.md (and the user's fallback names:
    # agents/codex.py); .codex/ (a project's config.toml, skills, rules and hooks, loaded where
    # the user trusts the project, as an agent's folder in a trusted repository is);
    # .agents/ (skills).
    memory_files=("AGENTS.md", "AGENTS.override.md"),
    config_entries=(".codex", ".agents"),
    providers=("openai",),
    # Its own default model runs in "code mode", which offers no web_search tool.
    profiles={"production": ("gpt-5.5", "high"), "test": ("gpt-5.5", "low")},
)
GEMINI = Cli(
    "gemini",
    npm="@google/gemini-cli",
    login="log in with `gemini` (choose a login method), or set GEMINI_API_KEY",
    config_var="GEMINI_CLI_HOME", config_var_is_home=True, config_folder=".gemini",
    login_file="oauth_creds.json",
    subscription="Google",
    keys=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
          "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"),
    prefixes=("GEMINI_", "GOOGLE_", "CLOUDSDK_"),
    request_bytes=15_100, min_window=32_768,
    # Gemini CLI 0.61: GEMINI.md, in a subfolder its tools touch too; a .env (its variables
    # reach gemini and its hooks) where no .gemini/.env comes first; .gemini/ keeps only
    # council's settings and an empty .env, which stops gemini looking for one further up.
    memory_files=("GEMINI.md",), nested_memory=("GEMINI.md",), config_entries=(".env",),
    kept=KeptFolder(".gemini", files=("settings.json",), empty=(".env",)),
    hook=HookReply({"decision": "deny"}, "reason", stop={"decision": "allow"},
                   error="systemMessage"),
    providers=("google", "vertex"),
    # One process: its relaunched child doubles the start-up.
    version_env=(("GEMINI_CLI_NO_RELAUNCH", "true"),),
    # Its server is a Gemini API gateway: it lists models there, and states no window.
    listings=("{root}/v1beta/models",), window_probes=False,
    profiles={"production": ("pro", None), "test": ("flash-lite", None)},
)

# Every CLI council can drive, by name: runoptions.CLIS is its keys, the adapters' registry
# (agents/__init__.py) has one adapter for each.
REGISTRY: dict[str, Cli] = {cli.name: cli for cli in (CLAUDE, CODEX, GEMINI)}


def facts(name: str) -> Cli:
    """The facts of the CLI `name` (KeyError for a CLI council does not know)."""
    return REGISTRY[name]
