#!/bin/sh
# Every host's hooks run this script: Claude Code's (hooks/hooks.json: prompt, session),
# Gemini CLI's (extensions/gemini: gemini-before, gemini-after) and Codex's (extensions/codex:
# codex-prompt, codex-stop). Gemini may copy its extension and Codex always copies its plugin
# into their own folders, so each extension holds a byte-identical copy of this file
# (tests/test_hosts.py checks it) and nothing here points back into a council checkout.
# It runs the installed `council` from the PATH the host was started with. When that is not
# there, a typed council command is refused with the reason, in the host's own answer shape,
# instead of the turn ending with nothing started; every other prompt and every stop passes.
if command -v council >/dev/null 2>&1; then
    exec council hook "$@"
fi
why='the council command is not on the PATH this host gives its hooks. Install council (pip install from its repository) into an environment on that PATH and try again; council doctor checks the setup.'
case "$1" in
    prompt) typed='/council:deep-research' decision=block ;;
    codex-prompt) typed='\$council:deep-research' decision=block ;;
    gemini-before) typed='\[council:deep-research\]' decision=deny ;;
    *) cat >/dev/null; exit 0 ;;
esac
if grep -q "\"prompt\" *: *\" *$typed"; then
    printf '{"decision":"%s","reason":"Research council not started: %s"}\n' "$decision" "$why"
fi
exit 0
