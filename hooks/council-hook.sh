#!/bin/sh
# The plugin's hooks run the installed `council` (pip install into an environment whose bin
# is on the PATH Claude Code gives its hooks). When it is not there, a typed
# /council:deep-research is refused with the reason, instead of the turn ending with nothing
# started; every other prompt and every stop passes untouched.
if command -v council >/dev/null 2>&1; then
    exec council hook "$@"
fi
if [ "$1" = "prompt" ] && grep -q '"prompt" *: *" */council:deep-research'; then
    printf '%s\n' '{"decision":"block","reason":"Research council not started: the council command is not on the PATH that Claude Code gives its hooks. Install council (pip install from its repository) into an environment on that PATH and try again; council doctor checks the setup."}'
fi
exit 0
