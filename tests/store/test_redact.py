"""No secret of council's environment in a file council writes: the rules, the chunked scrub
of large files, and a whole run whose agents' reports carry a secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Council

from council.store import agentfs, redact

TOKEN = "ghp_planted-0f9e8d7c6b5a"


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("GITHUB_TOKEN", TOKEN, True),
    ("OPENAI_API_KEY", "sk-live-abcdefgh", True),
    ("aws_secret_access_key", "abcdefgh12", True),  # names are matched in any case
    ("DB_PASSWORD", "hunter2hunter2", True),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/home/u/creds.json", True),
    ("SSH_PRIVATE_KEY_PATH", "/home/u/.ssh/id", True),
    ("ANTHROPIC_API_KEY", "dummy", False),  # too short to be a secret, too common to replace
    ("HOME", "/home/someone", False),
    ("PATH", "/usr/bin:/bin", False),
    # issue 24: the names redaction missed
    ("GITHUB_PAT", "github_pat_11ABCDEFG0123456789", True),
    ("LDAP_PASS", "Tr0ub4dor&3", True),
    ("MYSQL_PWD", "hunter2hunter2", True),
    ("NPM_CONFIG__AUTH", "dXNlcjpwYXNzd29yZA==", True),
    ("PROXY_AUTH", "Basic dXNlcjpw", True),
    ("GCP_CREDS", "/home/u/gcp.json", True),
    ("DOCKERHUBCREDS", "user:s3cr3tpass", True),
    ("COOKIE", "sessionid=abc123def", True),
    ("SESSION_COOKIE", "abc123def456", True),
    ("SENTRY_DSN", "https://abc123@o1.ingest.sentry.io/1", True),
    ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/XXXX", True),
    ("DISCORD_WEBHOOK", "https://discord.com/api/webhooks/1/abc", True),
    ("DATABASE_URL", "postgres://app:pw@db.internal/app", True),
    ("REDIS_URL", "redis://localhost:6379/0", True),  # the known names, even without one
    ("MONGODB_URI", "mongodb+srv://cluster0.example.net/app", True),
    ("TEST_DATABASE_URL", "postgres://localhost/test", True),
    ("GIT_REMOTE_URL", "https://x-token@github.com/o/r", True),  # a URL variable with a user
    ("HTTPS_PROXY", "http://bob:hunter2@proxy:3128", True),  # any variable with a password
    # issue 31: more names redaction missed
    ("DOCKER_AUTH_CONFIG", '{"auths": {"r.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}}', True),
    ("STRIPE_SK", "sk_live_0123456789abcdefABCDEF", True),
    ("GPG_PASSPHRASE", "correct horse battery staple", True),
    ("SIGNING_KEY_PASSPHRASE", "Tr0ub4dor&3", True),
    # issue 43: more names redaction missed
    ("AUTH_HEADER", "Bearer abc123def456", True),
    ("HTTP_AUTHORIZATION", "Basic dXNlcjpwYXNzd29yZA==", True),
    ("SIGNING_SALT", "c2FsdHNhbHRzYWx0", True),
    ("SESSION_ID", "9f86d081884c7d65", True),
    ("APP_SESSIONID", "s%3Aabc123def456", True),
    # ...and what is not a secret
    ("AUTH_MODE", "disabled", False),  # one lowercase word is a setting
    ("GIT_AUTHOR_NAME", "Ada Lovelace-Byron", False),  # AUTHOR, not AUTH
    ("XDG_SESSION_ID", "c2c2c2c2c2", False),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus", False),
    ("API_BASE_URL", "https://api.example.com/v1", False),
    ("DOCS_URL", "https://docs.example.com", False),
    ("HTTPS_PROXY", "http://proxy.example.com:3128", False),
    ("GIT_REMOTE", "ssh://git@github.com/o/r.git", False),  # a user, no password, not a URL name
    ("PWD", "/home/someone/project", False),
    ("OLDPWD", "/home/someone", False),
    ("XDG_RUNTIME_DIR", "/run/user/1000", False),
    ("XDG_SESSION_COOKIE", "0123456789abcdef", False),
    ("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.1", False),  # AUTH, but not at the end
    ("COMPILER_PASS", "optimize", False),  # a *_PASS that is one word is a setting
    ("CI_PASS", "true", False),
    ("COOKIE_MODE", "disabled", False),
    ("PATHEXT", "/usr/local/bin", False),
    ("DOCKER_AUTH_CONFIG", "disabled", False),  # one lowercase word is a setting
    ("TASK", "sk_live_mode", False),
])
def test_which_variables_are_secrets(name: str, value: str, secret: bool) -> None:
    assert redact.is_secret(name, value) is secret
    assert ((name, value) in redact.secrets({name: value})) is secret


def test_text_names_what_it_replaced_and_the_longest_value_goes_first() -> None:
    found = redact.secrets({"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more"})
    out, names = redact.text("x abcdefgh-and-more y abcdefgh", found)
    assert out == "x REDACTED:B_TOKEN y REDACTED:A_TOKEN"
    assert names == ["B_TOKEN", "A_TOKEN"]
    assert redact.text("nothing here", found) == ("nothing here", [])


def test_a_large_file_is_scrubbed_in_chunks_even_across_a_chunk_boundary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact, "_CHUNK", 64)
    found = redact.secrets({"GITHUB_TOKEN": TOKEN})
    path = tmp_path / "log.jsonl"
    # The token at every offset against the 64-byte chunks, and non-ASCII text around it.
    text = "".join(f"{'é' * n}{TOKEN}\n" for n in range(70))
    path.write_text(text, encoding="utf-8")
    assert redact.scrub_file(path, found) == ["GITHUB_TOKEN"]
    assert path.read_text(encoding="utf-8") == text.replace(TOKEN, "REDACTED:GITHUB_TOKEN")
    before = path.stat().st_mtime_ns
    assert redact.scrub_file(path, found) == []  # nothing left: the file is only read
    assert path.stat().st_mtime_ns == before
    assert redact.scrub_file(tmp_path / "gone", found) == []


def test_no_file_of_a_run_keeps_a_secret_an_agent_wrote(council: Council) -> None:
    """Each agent's report quotes a token from council's environment (as if a page had
    handed it over): the published reports, the final report, report.html, the logs, state
    and progress hold `REDACTED:GITHUB_TOKEN` instead, and progress.log names each agent."""
    council.env["GITHUB_TOKEN"] = TOKEN
    leak = f"# Report\n\nFound a token: {TOKEN}\n\nSource: https://example.org/?t={TOKEN}\n"
    council.script({"*": {"finish_after": 1, "content": leak}})
    proc = council.run("run", "--test", "--agents", "claude,codex,gemini", "q")
    assert proc.returncode == 0, proc.stderr
    run = council.only_run()
    holding = [str(p.relative_to(run)) for p in run.rglob("*")
               if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert holding == []
    assert "REDACTED:GITHUB_TOKEN" in (run / "final-report.md").read_text()
    assert TOKEN not in proc.stdout + proc.stderr
    log = (run / "progress.log").read_text()
    for seat in ("claude", "codex", "gemini"):
        assert f"research {seat} warning: its report held the value of GITHUB_TOKEN; " \
               "redacted" in log


def test_state_yaml_is_redacted_in_its_data_so_it_reads_back_the_same_shape(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret at the start of a value, redacted in the text, would read back as a YAML
    list; and the owner compares the file with what it wrote to spot another writer."""
    import yaml

    from council.runoptions import RunOptions
    from council.store.owner import owned
    from council.store.state import AgentPhase, AgentRecord, RunState, dump, load_state

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    state = RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z",
                     options=RunOptions(seats=()),
                     agents={"codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
                         status="failed", error=f"{TOKEN} was refused")})})
    text = dump(state)
    assert TOKEN not in text
    error = yaml.safe_load(text)["agents"]["codex"]["phases"]["research"]["error"]
    assert error == "REDACTED:GITHUB_TOKEN was refused"

    run = tmp_path / "run"
    run.mkdir()
    from council.store.state import create_state, update_state
    create_state(run, RunState(id="r", topic="q", created_at="2026-11-25T00:00:00Z",
                               options=RunOptions(seats=())))
    with owned(run):
        def fail(s: RunState) -> None:
            s.error = f"{TOKEN} leaked"
        update_state(run, fail, now=True)
        update_state(run, fail, now=True)
    assert load_state(run).error == "REDACTED:GITHUB_TOKEN leaked"
    progress = run / "progress.log"
    assert not progress.exists() or "changed by another process" not in progress.read_text()


def test_a_file_that_cannot_be_rewritten_raises_and_leaves_no_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner then empties the file and fails the seat, rather than publish it."""
    import os

    folder = tmp_path / "agent"
    folder.mkdir()
    path = folder / "report.md"
    path.write_text(f"token {TOKEN}\n")

    def full_disk(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        redact.scrub_file(path, redact.secrets({"GITHUB_TOKEN": TOKEN}))
    assert sorted(p.name for p in folder.iterdir()) == ["report.md"]


# --- passwords in URLs, token shapes, and what is left alone -------------------------------------

@pytest.mark.parametrize(("before", "after"), [
    ("postgres://app:s3cret@db.internal:5432/app?sslmode=require",
     "postgres://app:REDACTED:url-password@db.internal:5432/app?sslmode=require"),
    ("fetched https://bob:hunter2@example.org/a?b=c and more",
     "fetched https://bob:REDACTED:url-password@example.org/a?b=c and more"),
    ('{"url": "redis://:pa55word@cache:6379/0"}',  # no user, in a JSON string
     '{"url": "redis://:REDACTED:url-password@cache:6379/0"}'),
    ("[db](mysql://root:p@ss@db/x)",  # an unescaped @ in the password: hidden whole
     "[db](mysql://root:REDACTED:url-password@db/x)"),
    ("git clone https://x-access-token:abc123@github.com/o/r.git",
     "git clone https://x-access-token:REDACTED:url-password@github.com/o/r.git"),
])
def test_the_password_of_any_url_is_replaced_and_the_url_stays_one(
        before: str, after: str) -> None:
    assert redact.text(before, []) == (after, ["url-password"])
    assert redact.text(after, []) == (after, [])  # scrubbed already: left as it is


GITHUB = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
SHAPED = {
    "github-token": [GITHUB, "gho_" + "x9Y8z7" * 6, "ghs_" + "0123456789" * 4,
                     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF0123"],
    "openai-key": ["sk-" + "T3BlbkFJ" * 6, "sk-proj-" + "abc_DEF-123" * 5,
                   "sk-" + "0123456789abcdef" * 2 + "012"],
    "anthropic-key": ["sk-ant-api03-" + "Ab3_-xY" * 13, "sk-ant-oat01-" + "q" * 40],
    "slack-token": ["xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp", "xoxp-1-2-3-4-abcdef",
                    "xapp-1-A0123BCDE45-1234567890123-" + "0a1b2c3d4e" * 6],
    "aws-access-key": ["AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A"],
    "google-api-key": ["AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"],
    "google-oauth-token": ["ya29.a0AfH6SMBx3Jk-lmnopqrstuvwxyz012345"],
    "gitlab-token": ["glpat-xXyYzZ0123456789abcd"],
    "npm-token": ["npm_" + "aB3dE6gH9j" * 3 + "K2mN5p"],
    "jwt": ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
    # issue 31: the shapes redaction missed
    "stripe-key": ["sk_live_" + "51HaBcD3eFgH" * 8, "rk_live_" + "0aB1cD2eF3gH4iJ5kL6mN7oP",
                   "sk_test_4eC39HqLyjWDarjtT1zdp7dc"],
    "huggingface-token": ["hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"],
    "sendgrid-key": ["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"],
    "pypi-token": ["pypi-AgEIcHlwaS5vcmcCJGE0ZjM1ZWM0LWQ2ZTgtNDk5Ny05MWE0LTJmNDAwNjcxYzQ1"
                   "ZQACKlszLCJhYmNkZWYiXQAABiDx"],
    "docker-token": ["dckr_pat_" + "Ab3-Cd4_Ef5Gh6Ij7Kl8Mn9Op0Q"],
    "digitalocean-token": ["dop_v1_" + "0123456789abcdef" * 4],
    # issue 43: Square, Shopify and Linear
    "square-token": ["sq0atp-" + "AbCdEfGhIj-_KlMnOpQrSt", "sq0csp-" + "aB3_cD4-eF5gH6" * 3 + "i"],
    "shopify-token": ["shpat_" + "0123456789abcdef" * 2, "shpss_" + "fedcba9876543210" * 2],
    "linear-key": ["lin_api_" + "AbCdEfGh01" * 4],
}


@pytest.mark.parametrize(("shape", "token"),
                         [(shape, token) for shape, tokens in SHAPED.items() for token in tokens])
def test_a_token_shape_is_replaced_wherever_it_stands(shape: str, token: str) -> None:
    for around in ("{}", "Bearer {}\n", "https://api.example.com/v1?key={}&x=1",
                   '{{"token": "{}"}}', "export X={}", "`{}`"):
        before = around.format(token)
        assert redact.text(before, []) == (around.format(f"REDACTED:{shape}"), [shape])


REPORT = """# Gradient boosting in practice

Most teams start with sk-learn (scikit-learn) or XGBoost; see
https://scikit-learn.org/stable/modules/ensemble.html#gradient-boosting and
https://xgboost.readthedocs.io/en/latest/?badge=latest for the details. The
task-0123456789ABCDEFGHIJ benchmark, risk-adjusted-returns-2024Q1 and
desk-research-notes-v2-ABCDEFGHIJKLMN are our names, not keys. Contact
alice@example.org, clone git@github.com:org/repo.git or
ssh://git@github.com/org/repo.git; the proxy is http://proxy.example.com:3128 and
the query https://example.org/search?q=user:name@host&page=2 is a plain URL.
A UUID 123e4567-e89b-12d3-a456-426614174000, a digest
sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08,
AKIA is an AWS prefix, eyJ starts a JWT, and xoxb- a Slack token.
Stripe's sk_live_ and rk_live_ prefixes, sk_live_mode, hf_hub_download and
hf_transformers_cache, hf_abcdefghijklmnopqrstuvwxyzabcdefgh, xapp-config, the
xapp-1-short one, SG.Smith and SG.a.b, pypi-server, pypi-AgE, dckr_pat_ alone, dckr_pat_x,
dop_v1_ and dop_v1_0123abcd are words, not tokens. We do; docs do_v1_setup. Square's
sq0atp- prefix, shpat_ and shpat_0123, lin_api_ and lin_api_keys are words too.
Timing: 2024-05-01T12:00:00Z, version 1.2.3, commit 3db2217e.
"""


def test_an_ordinary_report_is_left_as_it_is() -> None:
    assert redact.text(REPORT, []) == (REPORT, [])
    assert redact.text(REPORT, redact.secrets({"PATH": "/usr/bin", "PWD": "/home/u"})) == \
        (REPORT, [])
    assert not redact.holds(REPORT, [])


def test_overlapping_secrets_leave_nothing_of_either() -> None:
    found = redact.secrets({"A_TOKEN": "abcdefgh12", "B_TOKEN": "gh12ijklmnopq"})
    out, names = redact.text("x abcdefgh12ijklmnopq y", found)
    assert out == "x REDACTED:B_TOKEN y"  # the longer one names the whole
    assert names == ["B_TOKEN"]
    assert redact.holds("x abcdefgh12 y", found)


def test_a_secret_in_a_token_shape_is_named_by_its_variable() -> None:
    found = redact.secrets({"GITHUB_TOKEN": GITHUB})
    assert redact.text(f"t={GITHUB}", found) == ("t=REDACTED:GITHUB_TOKEN", ["GITHUB_TOKEN"])


# --- encoded forms ------------------------------------------------------------------------------

ODD = "s3cr3t/Välue+with=chars?&#x"  # a value whose every encoding differs from it


def encodings(value: str) -> dict[str, str]:
    """`value` as a tool or a page may carry it (made with the standard library's own
    encoders, not redact's)."""
    import base64
    import json
    import re
    from urllib.parse import quote, quote_plus

    data = value.encode()
    out = {"json": json.dumps(value)[1:-1], "json-utf8": json.dumps(value, ensure_ascii=False),
           "quote": quote(value, safe=""), "quote-path": quote(value),
           "quote-plus": quote_plus(value + " x"),
           "quote-lower": re.sub("%..", lambda m: m[0].lower(), quote(value, safe="")),
           "encodeURIComponent": quote(value, safe="!'()*")}
    for pad in range(3):  # inside a longer payload, at each alignment
        payload = b"P" * pad + data + b"\ntail"
        out[f"base64-{pad}"] = base64.b64encode(payload).decode()
        out[f"base64url-{pad}"] = base64.urlsafe_b64encode(payload).decode()
    return out


@pytest.mark.parametrize("form", sorted(encodings(ODD)))
def test_each_encoded_form_of_a_secret_is_replaced(form: str) -> None:
    found = redact.secrets({"DB_PASSWORD": ODD})
    carried = encodings(ODD)[form]
    out, names = redact.text(f"GET /x?{carried} HTTP/1.1", found)
    assert names == ["DB_PASSWORD"], (form, carried)
    assert "REDACTED:DB_PASSWORD" in out
    for piece in redact.forms(ODD):
        assert piece not in out


def test_the_forms_of_a_value_match_the_real_cli_tests_idea() -> None:
    """tests/realcli's forms(): the characters of base64 that no neighbouring byte shares."""
    import base64

    value = "planted-secret-value-42"
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + value.encode()).decode()
        core = encoded[-(-8 * shift // 6):8 * (shift + len(value)) // 6]
        assert core in redact.forms(value)
    assert all(len(f) >= redact.MIN_LENGTH for f in redact.forms(value))
    assert redact.forms("abc") == []


def test_a_password_in_a_url_variable_is_also_hidden_on_its_own() -> None:
    found = redact.secrets({"HTTPS_PROXY": "http://bob:s3cret%40pass@proxy:3128"})
    assert ("HTTPS_PROXY", "s3cret%40pass") in found
    assert ("HTTPS_PROXY", "s3cret@pass") in found
    assert redact.text("the password is s3cret@pass", found)[0] == \
        "the password is REDACTED:HTTPS_PROXY"


# --- the CLIs' login files ----------------------------------------------------------------------

CLAUDE_ACCESS = "sk-ant-oat01-" + "Zq9_Xw8-" * 10
CLAUDE_REFRESH = "sk-ant-ort01-" + "Rr7_Ss6-" * 10
CODEX_ID = "eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6ImFAYi5jIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
CODEX_REFRESH = "rt_" + "Q1w2E3r4T5y6" * 4
GEMINI_ACCESS = "ya29.a0AfH6SMC" + "Kk3_Ll4-" * 8
GEMINI_REFRESH = "1//0gHdP9fK3qLmNCgYIARAAGBASNwF-L9IrXyZ"
LOGIN_TOKENS = {CLAUDE_ACCESS: "claude-login", CLAUDE_REFRESH: "claude-login",
                CODEX_ID: "codex-login", CODEX_REFRESH: "codex-login",
                GEMINI_ACCESS: "gemini-login", GEMINI_REFRESH: "gemini-login"}
NOT_TOKENS = ["user:inference", "default_claude_max_20x", "2025-06-01T12:00:00.123456Z",
              "123e4567-e89b-12d3-a456-426614174000", "access_token", "refresh_token",
              "https://www.googleapis.com/auth/cloud-platform", "claudeAiOauth", "Bearer"]


def write_logins(home: Path, codex_home: Path) -> dict[str, Path]:
    import json

    claude = home / ".claude" / ".credentials.json"
    codex = codex_home / "auth.json"
    gemini = home / ".gemini" / "oauth_creds.json"
    for path in (claude, codex, gemini):
        path.parent.mkdir(parents=True, exist_ok=True)
    claude.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": CLAUDE_ACCESS, "refreshToken": CLAUDE_REFRESH, "expiresAt": 1760000000000,
        "scopes": ["user:inference", "user:profile"], "subscriptionType": "max",
        "rateLimitTier": "default_claude_max_20x"}}))
    codex.write_text(json.dumps({"OPENAI_API_KEY": None, "tokens": {
        "id_token": CODEX_ID, "access_token": CODEX_ID, "refresh_token": CODEX_REFRESH,
        "account_id": "123e4567-e89b-12d3-a456-426614174000"},
        "last_refresh": "2025-06-01T12:00:00.123456Z"}, indent=2))
    gemini.write_text(json.dumps({
        "access_token": GEMINI_ACCESS, "refresh_token": GEMINI_REFRESH, "token_type": "Bearer",
        "scope": "https://www.googleapis.com/auth/cloud-platform openid",
        "expiry_date": 1760000000000}))
    return {"claude-login": claude, "codex-login": codex, "gemini-login": gemini}


def test_login_files_give_their_tokens_and_nothing_else(tmp_path: Path) -> None:
    paths = write_logins(tmp_path / "home", tmp_path / "codex")
    found = redact.login_secrets(paths)
    assert dict((value, name) for name, value in found) == LOGIN_TOKENS
    values = {value for _, value in found}
    assert not values & set(NOT_TOKENS)
    assert redact.login_secrets({"x": tmp_path / "missing.json"}) == []


def test_secrets_include_the_login_files_the_preflight_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from council.readiness import preflight
    from council.store import logins

    home = Path.home()  # the test's own (conftest)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    write_logins(home, tmp_path / "codex")
    env = dict(os.environ)
    for cli in ("claude", "codex", "gemini"):  # one place for the paths: the same files
        assert preflight.credentials(cli, env, home) == logins.login_file(cli, env, str(home))
    found = redact.secrets()
    for token, name in LOGIN_TOKENS.items():
        assert (name, token) in found
    leak = f"the agent read {CODEX_REFRESH} and {GEMINI_ACCESS}"
    assert redact.clean(leak) == "the agent read REDACTED:codex-login and REDACTED:gemini-login"
    assert CLAUDE_ACCESS not in redact.clean(f"k={CLAUDE_ACCESS}")


def test_a_login_refreshed_mid_run_is_seen_and_the_old_token_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact, "RECHECK", 0.0)
    paths = write_logins(Path.home(), Path.home() / ".codex")
    old = {v for n, v in redact.secrets() if n == "gemini-login"}
    assert GEMINI_ACCESS in old
    fresh = "ya29.a0NEWtoken" + "Mm5_Nn6-" * 8
    paths["gemini-login"].write_text(f'{{"access_token": "{fresh}", "expiry_date": 2}}')
    new = {v for n, v in redact.secrets() if n == "gemini-login"}
    assert {fresh, GEMINI_ACCESS} <= new


def test_a_login_file_is_read_safely(tmp_path: Path) -> None:
    """A link the user made (dotfiles) is followed to a plain file; a FIFO does not block."""
    real = tmp_path / "dotfiles" / "auth.json"
    real.parent.mkdir()
    real.write_text(f'{{"tokens": {{"refresh_token": "{CODEX_REFRESH}"}}}}')
    (tmp_path / "auth.json").symlink_to(real)
    assert redact.login_secrets({"codex-login": tmp_path / "auth.json"}) == \
        [("codex-login", CODEX_REFRESH)]
    os.mkfifo(tmp_path / "fifo.json")
    assert redact.login_secrets({"codex-login": tmp_path / "fifo.json"}) == []
    (tmp_path / "broken.json").write_text('{"access_token": "abcdefgh1234", "x": [1, {')
    assert redact.login_secrets({"x": tmp_path / "broken.json"}) == [("x", "abcdefgh1234")]


# --- files --------------------------------------------------------------------------------------

def test_chunks_straddle_literals_and_shapes_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With 64-byte chunks (and shapes capped at 100 characters, so the kept tail is small
    and every cut is tried), the chunked scrub gives what one pass over the whole text
    gives, for each secret, form and shape at every offset against the chunks."""
    monkeypatch.setattr(redact, "_CHUNK", 64)
    monkeypatch.setattr(redact, "_RUN", 100)
    found = redact.secrets({"GITHUB_TOKEN": TOKEN, "DB_PASSWORD": ODD})
    import base64

    leaks = [TOKEN, base64.b64encode(b"x" + ODD.encode()).decode(), GITHUB,
             SHAPED["jwt"][0], "postgres://app:s3cret@db/x", SHAPED["aws-access-key"][0]]
    text = "".join(f"{'é' * n}{leak} {'.' * (n % 7)}\n"
                   for n in range(70) for leak in leaks) + "tail"
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    expected, names = redact.text(text, found)
    assert redact.scrub_file(path, found) == names
    assert path.read_text(encoding="utf-8") == expected
    for leak in leaks:
        assert leak not in expected


def test_a_token_longer_than_a_chunk_is_caught_with_the_real_caps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact, "_CHUNK", 4096)
    jwt = "eyJ" + "a" * 3000 + ".eyJ" + "b" * 9000 + "." + "c" * 700
    text = "x" * 70_000 + " " + jwt + "\n" + "y" * 50_000 + "\n" + GITHUB
    path = tmp_path / "report.md"
    path.write_text(text)
    assert redact.scrub_file(path, []) == ["jwt", "github-token"]
    assert path.read_text() == "x" * 70_000 + " REDACTED:jwt\n" + "y" * 50_000 + \
        "\nREDACTED:github-token"


def test_bytes_that_are_not_utf8_pass_through(tmp_path: Path) -> None:
    path = tmp_path / "log.bin"
    path.write_bytes(b"\xff\xfe\x00bin " + TOKEN.encode() + b" \xc3(\xed\xa0\x80 end")
    assert redact.scrub_file(path, redact.secrets({"GITHUB_TOKEN": TOKEN})) == ["GITHUB_TOKEN"]
    assert path.read_bytes() == b"\xff\xfe\x00bin REDACTED:GITHUB_TOKEN \xc3(\xed\xa0\x80 end"


@pytest.mark.parametrize("kind", ["link", "fifo", "hard link"])
def test_what_is_not_a_plain_file_is_removed_unread_and_named(
        tmp_path: Path, kind: str) -> None:
    """A report that is a link to the user's key (or /proc/self/environ), a FIFO, or a hard
    link to a user's file: never read, never published, and the user's file untouched."""
    key = tmp_path / "id_ed25519"
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY----- {TOKEN}\n")
    seat = tmp_path / "seat"
    seat.mkdir()
    report = seat / "codex-report.md"
    if kind == "link":
        report.symlink_to(key)
    elif kind == "fifo":
        os.mkfifo(report)
    else:
        os.link(key, report)
    with pytest.raises(agentfs.UnsafeFile, match="not a plain file") as raised:
        redact.scrub_file(report, redact.secrets({"GITHUB_TOKEN": TOKEN}))
    if kind == "link":
        assert f"a link to {key}" in str(raised.value)
    assert not os.path.lexists(report)
    assert key.read_text() == f"-----BEGIN OPENSSH PRIVATE KEY----- {TOKEN}\n"


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    with path.open("wb") as handle:
        handle.truncate(1 << 40)  # a sparse terabyte
    with pytest.raises(agentfs.UnsafeFile, match="over the"):
        redact.scrub_file(path, [], limit=1 << 20)


def test_scrub_file_writes_through_no_link_planted_at_its_temp_names(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("# the user's\n")
    seat = tmp_path / "seat"
    seat.mkdir()
    report = seat / "report.md"
    report.write_text(f"{TOKEN}\n")
    for pid in range(os.getpid() - 2, os.getpid() + 3):  # the old temp name, guessed
        (seat / f".report.md.{pid}.redact").symlink_to(victim)
    assert redact.scrub_file(report, redact.secrets({"GITHUB_TOKEN": TOKEN})) == \
        ["GITHUB_TOKEN"]
    assert report.read_text() == "REDACTED:GITHUB_TOKEN\n"
    assert victim.read_text() == "# the user's\n"


def test_importing_redact_and_cleaning_plain_text_stays_cheap() -> None:
    """The hooks' event writer imports redact: no `re`, `json` or `pathlib` for a plain line,
    even with a login file to read."""
    import subprocess
    import sys

    code = ("import sys; from council.store import redact;"
            "redact.clean('research codex: done, 12 s');"
            "print(sorted(m for m in ('re', 'json', 'pathlib', 'typing') if m in sys.modules))")
    home = Path.home()
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text(
        f'{{"claudeAiOauth": {{"accessToken": "{CLAUDE_ACCESS}"}}}}')
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                         check=True, env={"HOME": str(home), "PATH": os.environ["PATH"],
                                          "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "[]"
