"""Entry point. `council hook …` is dispatched before click is imported: hooks run after every
agent turn and must start fast."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "hook":
        from council.hosts import EVENTS  # the hosts' hooks: Claude, Gemini and Codex sessions

        if sys.argv[2] in EVENTS:
            from council.hosts.flow import main as host_hook

            sys.exit(host_hook(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from council.hook import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    from council.cli import entry

    entry()


if __name__ == "__main__":
    main()
