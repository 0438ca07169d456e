"""The one error family. Each message is a sentence a user can act on."""

from __future__ import annotations


class CouncilError(Exception):
    """Base of every error council reports to a user (exit code 1)."""

    exit_code = 1


class UsageError(CouncilError):
    """Bad input on the command line or in a config file (exit code 2)."""

    exit_code = 2


class ConfigError(UsageError):
    """The council config file is missing a key, has a bad value or is not YAML."""


class StateError(CouncilError):
    """state.yaml is missing, corrupt or from an unknown schema."""


class RunNotFoundError(CouncilError):
    """No run with that id exists in the research directory: bad input, as a wrong option
    is (exit code 2), for every command that takes a run id."""

    exit_code = 2


class PhaseFailedError(CouncilError):
    """Every agent of a phase failed, so the run cannot go on."""
