"""`council setup HOST`: install council into Claude Code, Gemini CLI or Codex from the files
this council was installed with (install.hostfiles()), with each CLI's own commands, so a pip
install needs no checkout; and `check_hosts`, what `council doctor` shows of each host. Each
host's own reading and plan are in hosts/<name>/install.py: what is already there is read
first (the same `council doctor` reports from), a host that is set up is left alone, and
anything of the user's that setup would have to replace (a marketplace or extension of the
same name from elsewhere, a plugin they turned off) is named with the command that clears it,
not changed.

The hosts' decisions are pure; running the CLIs happens here, in `setup_host`."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

from council.hosts import HOSTS, host_for
from council.hosts.base import Install
from council.hosts.install import SetupError, Step, hostfiles
from council.readiness.preflight import NPM
from council.readiness.setup import HostSetup
from council.spawn import AgentMissingError, resolve

COMMAND_TIMEOUT = 120.0


def run_step(host: str, step: Step, env: Mapping[str, str]) -> None:
    """One host command, its output kept; a failure is one line naming it."""
    env = {**env, **step.env}
    try:
        argv = (resolve(step.argv[0], env), *step.argv[1:])
    except AgentMissingError:
        raise SetupError(f"{host} is not installed or not on PATH: npm install -g {NPM[host]}, "
                         f"then run `council setup {host}`") from None
    shown = " ".join(step.argv)
    try:
        done = subprocess.run(argv, cwd=step.cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        raise SetupError(f"`{shown}` did not finish in {COMMAND_TIMEOUT:g} s: run it yourself "
                         "to see what it waits for") from None
    except OSError as exc:
        raise SetupError(f"`{shown}` could not start: {exc.strerror or exc}") from None
    if done.returncode != 0:
        # the error's own line: stderr's last, else stdout's (codex's harmless temp-dir
        # warning left out)
        said = [line.strip() for out in (done.stdout, done.stderr) for line in out.splitlines()
                if line.strip() and not line.startswith("WARNING: proceeding")]
        raise SetupError(f"`{shown}` failed (exit {done.returncode}: "
                         f"{said[-1][:200] if said else 'no output'}): run it yourself to see "
                         "why")


def state_lines(host: str, install: Install) -> list[str]:
    """What `council doctor` now says of the host, and its fix when there is one."""
    found = install.check()
    return [f"{host}: {found.state}", *([f"{host}: {found.fix}"] if found.fix else [])]


def setup_host(host: str) -> list[str]:
    """Set up `host` (one of HOSTS); the lines to print: what was done (or that nothing
    needed doing), then what doctor says of it now."""
    files = hostfiles()
    if files is None:
        raise SetupError("this council install has no host files (council/hostfiles): "
                         "reinstall council from its wheel or repository")
    install = host_for(host).install()
    plan = install.plan(files)
    for step in plan.steps:
        run_step(host, step, os.environ)
    did = [*([plan.did] if plan.steps else []), *install.finish()]
    lines = [f"{host}: {what}" for what in did] or [f"{host}: already set up, nothing changed"]
    return [*lines, *state_lines(host, install)]


def cli_on_path(cli: str) -> bool:
    return shutil.which(cli) is not None


def check_hosts() -> list[HostSetup]:
    """Each host's setup; a host whose files cannot be read says so rather than failing. A
    host CLI that is not installed is only named: the CLI table's fix line says how."""
    found = []
    for host in HOSTS:
        if not cli_on_path(host):
            found.append(HostSetup(host, f"{host} not on PATH", False))
            continue
        try:
            found.append(host_for(host).install().check())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            found.append(HostSetup(host, f"cannot tell ({exc})", False))
    return found
