"""`council hook CLI --run-dir D --seat S --phase P --report R --loop L --instructions I`:
the loop hook claude (Stop) and gemini (AfterAgent) call after every turn.

It runs after every agent turn, so it imports nothing beyond `os`, `sys` and `fcntl`: no
click, no yaml, and not even json (with re and enum it would double the hook's start-up). It
never traps or crashes an agent: on any error of its own it lets the stop happen, says why on
stderr and exits 0.
"""

from __future__ import annotations

import sys

from council import clis
from council.store.progress import json_object

OPTIONS = ("run-dir", "seat", "phase", "report", "loop", "instructions")
# The CLIs that loop through this hook (the others are looped from outside: clis.py's `hook`).
HOOKED = tuple(name for name, cli in clis.REGISTRY.items() if cli.hook is not None)
USAGE = f"usage: council hook {'|'.join(HOOKED)} " + " ".join(f"--{o} X" for o in OPTIONS)


def parse_args(argv: list[str]) -> tuple[str, dict[str, str]]:
    if not argv or argv[0] not in HOOKED:
        raise ValueError(USAGE)
    rest = argv[1:]
    if len(rest) % 2:
        raise ValueError(USAGE)
    opts: dict[str, str] = {}
    for flag, value in zip(rest[::2], rest[1::2], strict=True):
        if not flag.startswith("--") or flag[2:] not in OPTIONS:
            raise ValueError(f"unknown option {flag}; {USAGE}")
        opts[flag[2:]] = value
    missing = [o for o in OPTIONS if o not in opts]
    if missing:
        raise ValueError(f"missing --{missing[0]}; {USAGE}")
    return argv[0], opts


def looks_like_payload(text: str) -> bool:
    """The CLIs send one JSON object; council needs none of its fields, only the sign that a
    CLI (and not a stray caller) is on the other end."""
    text = text.strip()
    return text.startswith("{") and text.endswith("}") and '"' in text


def main(argv: list[str]) -> int:
    cli = argv[0] if argv else ""
    try:
        cli, opts = parse_args(argv)
        # Bytes, decoded here: under `python -I` no PYTHONIOENCODING or PYTHONUTF8 applies,
        # and the locale's codec may not read the CLI's UTF-8.
        if not looks_like_payload(sys.stdin.buffer.read().decode("utf-8", "replace")):
            print("council hook: stdin is not a JSON object; allowing the stop",
                  file=sys.stderr)
            return 0
        from council.store.loop import continuation_prompt, end_turn

        decision = end_turn(opts["loop"], opts["report"], opts["run-dir"], opts["phase"],
                            opts["seat"])
        reason = None
        if decision.proceed:
            with open(opts["instructions"], encoding="utf-8") as handle:
                reason = continuation_prompt(handle.read(), decision)
        out = render(cli, reason)
    except Exception as exc:  # a hook must never crash its agent
        print(f"council hook: {exc}; allowing the stop", file=sys.stderr)
        out = render(cli, None, error=str(exc))
    if out:
        sys.stdout.buffer.write((out + "\n").encode("utf-8", "replace"))
        sys.stdout.flush()
    return 0


def render(cli: str, reason: str | None, error: str | None = None) -> str:
    """What the CLI expects on stdout (its `hook` in clis.py): continue with `reason`, or
    allow the stop; nothing for a CLI that has no hook."""
    known = clis.REGISTRY.get(cli)
    reply = known.hook if known else None
    if reply is None:
        return ""
    if reason is not None:
        return json_object({**reply.go_on, reply.reason: reason})
    if reply.stop is None:
        return ""
    if error and reply.error:
        return json_object({**reply.stop, reply.error: f"council hook error: {error}"})
    return json_object(dict(reply.stop))
