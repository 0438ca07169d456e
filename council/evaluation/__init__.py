"""`council eval`: the same questions answered by each configuration of council (one agent,
three phases, the whole pipeline, a seat config of the user's), judged by one named judge, with
citation accuracy and cost beside the quality score. Built on Inspect AI: the configurations are
solvers, the judgements scorers, the results Inspect logs (docs/eval.md).

Inspect is the `[eval]` extra, not the core: it and its tree are most of a full install, and
only this package uses it. So nothing else imports this package but `council eval`, and nothing
is imported here: `council --help` and the hooks must never load Inspect (~1 s)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from council.errors import CouncilError

INSTALL = "pip install 'council[eval]'"


class EvalNotInstalledError(CouncilError):
    """Inspect AI, which `council eval` is built on, is not installed (the `[eval]` extra)."""


MISSING = (f"council eval needs Inspect AI (the [eval] extra), which is not installed: "
           f"{INSTALL}")


def require_inspect() -> None:
    """Before `council eval` reads its options: a user without the extra hears the one thing
    that matters first, not that --judge is missing. Finding it imports nothing."""
    from importlib.util import find_spec

    try:
        found = find_spec("inspect_ai") is not None
    except (ImportError, ValueError):  # a finder that refuses it: not installed either
        found = False
    if not found:
        raise EvalNotInstalledError(MISSING)


@contextmanager
def inspect_installed() -> Iterator[None]:
    """Around the import of the eval's modules: Inspect missing becomes the one line that
    installs it, rather than a traceback. Any other missing module is a real bug and passes."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "inspect_ai":
            raise
        raise EvalNotInstalledError(MISSING) from None
