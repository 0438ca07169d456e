"""The hosts a council can be started from: Claude Code (a plugin), Gemini CLI (an
extension) and Codex (a plugin). One module, `flow.py`, captures a typed request, binds it to
the host's session and hands the result back; one, `setup.py`, is `council setup HOST` and
doctor's view of each host. Everything a host's own, each host keeps in its own folder,
hosts/<name>/: how its hook payloads name the session, the turn and the project and what its
hooks answer (`__init__.py`, base.Host), and what it has installed of council and how council
installs itself there (`install.py`, base.Install), as each CLI's is in agents/.

Imported by every hook call, council's agents' included (`council hook claude` checks EVENTS):
nothing is imported here at module level."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own would cost the import of typing
if TYPE_CHECKING:
    from council.hosts.base import Host

# Each host, by its name: its folder under hosts/ and its CLI's name. In this order doctor
# lists them and `council setup` offers them.
HOSTS = ("claude", "gemini", "codex")

# `council hook EVENT` for each host's hooks file: the event, and the host it belongs to.
EVENTS = {
    "prompt": ("claude", "prompt"), "session": ("claude", "stop"),  # hooks/hooks.json
    "gemini-before": ("gemini", "prompt"), "gemini-after": ("gemini", "stop"),
    "codex-prompt": ("codex", "prompt"), "codex-stop": ("codex", "stop"),
}


def host_for(name: str) -> Host:
    """The host named `name` (one of HOSTS), its own module imported only now."""
    if name not in HOSTS:
        raise KeyError(f"no host named {name!r}")
    import sys

    module = f"council.hosts.{name}"
    __import__(module)  # importlib's import_module would cost the import of importlib
    host: Host = sys.modules[module].HOST
    return host
