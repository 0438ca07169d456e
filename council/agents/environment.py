"""What each agent CLI sees of council's environment: an allow-list, never the whole of it.

Agents read pages anyone can write, and whatever reaches a model can leave in a report or a
fetched URL. A variable an agent does not need must not be within its reach: the other
vendors' keys, cloud and git tokens, database URLs. So every CLI process gets the basics a
process needs (where it runs, its locale and terminal, how to reach the network), the
variables council's own hooks need, and its own vendor's variables (credentials, base URL,
the CLI's settings: clis.py, and any its adapter finds in the CLI's own config); a seat's
`env` names any others to pass, a corporate proxy's for example. docs/containment.md has
the table; allowlist.py the parts."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from council import clis
from council.agents import adapter_for
from council.agents.allowlist import visible


def agent_env(cli: str, environ: Mapping[str, str] | None = None,
              extra: Iterable[str] = (), vendor_vars: bool = True) -> dict[str, str]:
    """The part of `environ` (council's own, by default) that `cli` may see. Without
    `vendor_vars` (a seat on a server the user runs), none of its vendor's."""
    environ = os.environ if environ is None else environ
    own = adapter_for(cli).own_variables(environ) if vendor_vars else set()
    return visible(clis.facts(cli), environ, [*extra, *own], vendor_vars)
