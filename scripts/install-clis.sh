#!/usr/bin/env bash
# Install the claude, codex and gemini CLI versions council is tested with
# (council/tested_versions.json) into a private cache, one npm prefix per CLI:
#
#   $CACHE/<cli>-<version>/node_modules/.bin/<cli>     the install
#   $CACHE/bin/<cli>                                    symlink to it
#
# CACHE is ${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis}. Idempotent: a CLI whose installed
# binary already reports the pinned version is left alone. The last line printed is the bin
# dir, so `PATH="$(scripts/install-clis.sh | tail -n1):$PATH"` puts the pinned CLIs first.
# The downloads are large (~800 MB in all: claude and codex ship native binaries).
#
# Claude Code on node >= 22: the pin is 2.1.197, the newest release that declares support for
# node 20. tested_versions.json also names "newer_on_node22" (2.1.330, which declares
# engines node >= 22; it installs and runs on node 20 too, with an EBADENGINE warning, since
# its CLI is a native binary and node only runs its postinstall). To use it:
#
#   COUNCIL_CLAUDE_VERSION=2.1.330 scripts/install-clis.sh
#
# which installs it as $CACHE/claude-2.1.330 and points $CACHE/bin/claude at it. Run the realcli
# tests with the same variable set (they skip when bin/claude is not the version they expect);
# re-run this script without it to switch back to the pin.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions_file="${here}/../council/tested_versions.json"
cache="${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis}"
bin_dir="${cache}/bin"

command -v npm >/dev/null || { echo "install-clis.sh: npm is required (node >= 20)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "install-clis.sh: python3 is required" >&2; exit 1; }

# Print "<npm package> <version>" for one CLI from tested_versions.json.
pinned() {
    python3 -c '
import json, sys
data = json.load(open(sys.argv[1]))[sys.argv[2]]
print(data["npm"], data["version"])
' "$versions_file" "$1"
}

# `<cli> --version` writes state under HOME (~/.codex/tmp, ~/.gemini/projects.json.*):
# run it in a throwaway home.
scratch_home="$(mktemp -d)"
trap 'rm -rf "$scratch_home"' EXIT

# True when the prefix's binary already reports the wanted version.
installed_version_ok() {
    local exe="$1" version="$2" out
    [[ -x "$exe" ]] || return 1
    out="$(env -u CODEX_HOME -u GEMINI_CLI_HOME HOME="$scratch_home" \
        "$exe" --version 2>/dev/null </dev/null)" || return 1
    # claude: "2.1.197 (Claude Code)"; codex: "codex-cli 0.169.0"; gemini: "0.61.0"
    [[ " $out " == *" ${version} "* || "$out" == "${version} "* || "$out" == "$version" ]]
}

mkdir -p "$bin_dir"
for cli in claude codex gemini; do
    read -r pkg version < <(pinned "$cli")
    if [[ "$cli" == claude && -n "${COUNCIL_CLAUDE_VERSION:-}" ]]; then
        version="$COUNCIL_CLAUDE_VERSION"
    fi
    prefix="${cache}/${cli}-${version}"
    exe="${prefix}/node_modules/.bin/${cli}"
    if installed_version_ok "$exe" "$version"; then
        echo "${cli} ${version}: already installed in ${prefix}" >&2
    else
        echo "${cli} ${version}: installing ${pkg}@${version} into ${prefix}" >&2
        mkdir -p "$prefix"
        # A package.json of its own keeps npm from walking up to an enclosing project.
        [[ -f "${prefix}/package.json" ]] ||
            printf '{"name":"council-%s","private":true}\n' "$cli" >"${prefix}/package.json"
        npm install --prefix "$prefix" --no-audit --no-fund "${pkg}@${version}" >&2
        if ! installed_version_ok "$exe" "$version"; then
            echo "install-clis.sh: ${exe} --version does not report ${version}:" >&2
            HOME="$scratch_home" "$exe" --version </dev/null >&2 || true
            exit 1
        fi
    fi
    ln -sfn "$exe" "${bin_dir}/${cli}"
done

echo "$bin_dir"
