#!/usr/bin/env bash
# Install the claude, codex and gemini CLIs into a private cache, one npm prefix per CLI:
#
#   $CACHE/<cli>-<version>/node_modules/.bin/<cli>     the install
#   $CACHE/bin/<cli>                                    symlink to it
#
#   scripts/install-clis.sh            the versions council is tested with
#                                      (`version` in council/tested_versions.json), into
#                                      CACHE=${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis}
#   scripts/install-clis.sh --latest   npm's newest release of each, into
#                                      CACHE=${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis-latest},
#                                      to run the realcli tests on them before the pins move:
#                                      COUNCIL_CLI_CACHE=<that cache> pytest -m realcli
#                                      (tested_versions.json is never edited)
#
# Idempotent: a CLI whose installed binary already reports the wanted version is left alone.
# The last line printed is the bin dir, so `PATH="$(scripts/install-clis.sh | tail -n1):$PATH"`
# puts those CLIs first. The downloads are large (~1 GB in all: claude and codex ship native
# binaries).
#
# Node: claude 2.1.332 declares node >= 22 (2.1.197 was the last for node 20). On node 20 npm
# installs it with an EBADENGINE warning and it runs (its CLI is a native binary; node only
# runs its postinstall). COUNCIL_CLAUDE_VERSION=<version> installs that claude instead (e.g.
# 2.1.197, the previous pin) and points $CACHE/bin/claude at it; re-run without it to switch
# back.
set -euo pipefail

latest=false
case "${1:-}" in
    "") ;;
    --latest) latest=true ;;
    *) echo "usage: install-clis.sh [--latest]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions_file="${here}/../council/tested_versions.json"
if $latest; then
    cache="${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis-latest}"
else
    cache="${COUNCIL_CLI_CACHE:-$HOME/.cache/council/clis}"
fi
bin_dir="${cache}/bin"

command -v npm >/dev/null || { echo "install-clis.sh: npm is required (node >= 22)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "install-clis.sh: python3 is required" >&2; exit 1; }
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if ((node_major < 22)); then
    echo "install-clis.sh: node $(node --version 2>/dev/null || echo '?') is older than claude's" \
         "declared node >= 22; npm warns (EBADENGINE) and the CLIs still run" >&2
fi

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
    # claude: "2.1.332 (Claude Code)"; codex: "codex-cli 0.171.0"; gemini: "0.61.0"
    [[ " $out " == *" ${version} "* || "$out" == "${version} "* || "$out" == "$version" ]]
}

mkdir -p "$bin_dir"
for cli in claude codex gemini; do
    read -r pkg version < <(pinned "$cli")
    if $latest; then
        version="$(npm view "${pkg}@latest" version)"
    elif [[ "$cli" == claude && -n "${COUNCIL_CLAUDE_VERSION:-}" ]]; then
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
