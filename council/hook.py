"""`council hook CLI --run-dir D --seat S --phase P --report R --loop L --instructions I`:
the loop hook claude (Stop) and gemini (AfterAgent) call after every turn.

It runs after every agent turn, so it imports only what the decision needs (no click, no
yaml, no pathlib), and it never traps or crashes an agent: on any error of its own it lets
the stop happen, says why on stderr and exits 0.
"""

from __future__ import annotations

import json
import sys

OPTIONS = ("run-dir", "seat", "phase", "report", "loop", "instructions")
USAGE = "usage: council hook claude|gemini " + " ".join(f"--{o} X" for o in OPTIONS)


def parse_args(argv: list[str]) -> tuple[str, dict[str, str]]:
    if not argv or argv[0] not in ("claude", "gemini"):
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


def main(argv: list[str]) -> int:
    cli = argv[0] if argv else "claude"
    try:
        cli, opts = parse_args(argv)
        try:
            payload = json.loads(sys.stdin.read())
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            # Not the CLI we expect on the other end: let the stop happen.
            print("council hook: stdin is not a JSON object; allowing the stop",
                  file=sys.stderr)
            return 0
        from council.loop import continuation_prompt, end_turn

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
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


def render(cli: str, reason: str | None, error: str | None = None) -> str:
    """What each CLI expects on stdout: continue with `reason`, or allow the stop."""
    if cli == "gemini":
        if reason is not None:
            return json.dumps({"decision": "deny", "reason": reason})
        out: dict[str, str] = {"decision": "allow"}
        if error:
            out["systemMessage"] = f"council hook error: {error}"
        return json.dumps(out)
    if reason is not None:
        return json.dumps({"decision": "block", "reason": reason})
    return ""
