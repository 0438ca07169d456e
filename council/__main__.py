"""Entry point. `council hook …` is dispatched before click is imported: hooks run after every
agent turn and must start fast."""

from __future__ import annotations

import os
import sys

if not __package__:
    # Run as a file: the agents' hooks start `python -I …/council/__main__.py hook …`, and -I
    # keeps PYTHONPATH, the user's site-packages and the current folder (an agent's) off
    # sys.path. An installed council is found in site-packages anyway; one run from a source
    # checkout is found here, from this file's own place, never from the environment.
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if _root not in sys.path:
        sys.path.insert(0, _root)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "hook":
        from council.hosts import EVENTS  # the hosts' hooks: Claude, Gemini and Codex sessions

        if sys.argv[2] in EVENTS:
            from council.hosts.flow import main as host_hook

            sys.exit(host_hook(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from council.seat.hook import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    from council.cli import entry

    entry()


if __name__ == "__main__":
    main()
