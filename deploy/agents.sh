#!/usr/bin/env bash
# Installs the real coding agents the behaviour tests drive (tests/real_agents/), from
# npm, at pinned versions, into a cache kept between runs:
#
#   CACHE/claude-code-<version>/   @anthropic-ai/claude-code (its native binary comes in
#                                  @anthropic-ai/claude-code-<os>-<arch>, ~370 MB)
#   CACHE/opencode-<version>/      opencode-ai (native binary in opencode-<os>-<arch>)
#   CACHE/codex-<version>/         @openai/codex (a static binary in
#                                  @openai/codex-<os>-<arch>, ~290 MB)
#   CACHE/gemini-<version>/        @google/gemini-cli (a node bundle, bundle/gemini.js)
#
# CACHE is $SOLARIA_AGENTS_DIR, else ~/.cache/solaria/agents. A version bump is a new
# directory, so an older install is never mistaken for the pinned one.
#
# Usage: eval "$(bash deploy/agents.sh)"
#   stdout: `export SOLARIA_TEST_CLAUDE=…`, `…_OPENCODE=…`, `…_CODEX=…` and `…_GEMINI=…`, the
#           binaries (deploy/test.sh evaluates them; the tests read them); progress on stderr.
#
# An install that is already complete is left alone; a new one goes into a temporary
# directory renamed into place, so an interrupted run never leaves half an agent.
# When npm cannot install (no registry), CI (CI set) fails here; elsewhere the script
# says so, prints no variable, and the real-agent tests skip with a message.
set -euo pipefail

# The pinned versions: the one place they are written.
CLAUDE_CODE_VERSION=2.1.330
OPENCODE_VERSION=1.18.33
CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0

CACHE="${SOLARIA_AGENTS_DIR:-$HOME/.cache/solaria/agents}"

say() { printf 'agents: %s\n' "$*" >&2; }

# npm's names for this platform, as in the agents' optional dependencies.
case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) os="$(uname -s | tr '[:upper:]' '[:lower:]')" ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=x64 triple_arch=x86_64 ;;
aarch64 | arm64) arch=arm64 triple_arch=aarch64 ;;
*) arch="$(uname -m)" triple_arch="$(uname -m)" ;;
esac
# Codex's binaries are named by Rust target triple (musl builds on Linux).
case "$os" in
linux) codex_triple="$triple_arch-unknown-linux-musl" ;;
darwin) codex_triple="$triple_arch-apple-darwin" ;;
*) codex_triple="$triple_arch-unknown-$os" ;;
esac

# install NAME SPEC BINARY: npm-installs SPEC into CACHE/NAME unless its BINARY (a path
# under the install dir) is already there; prints the binary's path.
install() {
    local name="$1" spec="$2" binary="$3"
    local dir="$CACHE/$name"
    if [ -x "$dir/$binary" ] && [ -e "$dir/.complete" ]; then
        say "$spec: $dir (cached)"
        echo "$dir/$binary"
        return 0
    fi
    command -v npm >/dev/null || {
        say "npm is needed to install $spec: install Node.js (https://nodejs.org)"
        return 1
    }
    # Without a registry npm retries for minutes before it gives up: ask once, briefly.
    if ! npm ping --fetch-timeout=15000 --fetch-retries=0 >/dev/null 2>&1; then
        say "cannot reach the npm registry to install $spec"
        return 1
    fi
    # (errexit does not apply inside `$(install …) || …`: every step checks itself.)
    local tmp
    if ! mkdir -p "$CACHE" || ! tmp="$(mktemp -d "$CACHE/.$name.XXXXXX")"; then
        say "cannot create a directory in $CACHE: set SOLARIA_AGENTS_DIR to a writable place"
        return 1
    fi
    say "$spec: installing into $dir"
    # The native binaries come as optional dependencies: they must not be skipped.
    if ! npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error \
        --include=optional "$spec" >&2; then
        rm -rf "$tmp"
        say "npm could not install $spec (is the npm registry reachable?)"
        return 1
    fi
    if [ ! -x "$tmp/$binary" ]; then
        rm -rf "$tmp"
        say "$spec installed, but $binary is missing: no native build for $os-$arch?"
        return 1
    fi
    if ! { touch "$tmp/.complete" && rm -rf "$dir" && mv "$tmp" "$dir"; }; then
        rm -rf "$tmp"
        say "cannot move the install into $dir"
        return 1
    fi
    say "$spec: $dir"
    echo "$dir/$binary"
}

failed=0
claude="$(install "claude-code-$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "node_modules/@anthropic-ai/claude-code-$os-$arch/claude")" || failed=1
opencode="$(install "opencode-$OPENCODE_VERSION" "opencode-ai@$OPENCODE_VERSION" \
    "node_modules/opencode-$os-$arch/bin/opencode")" || failed=1
codex="$(install "codex-$CODEX_VERSION" "@openai/codex@$CODEX_VERSION" \
    "node_modules/@openai/codex-$os-$arch/vendor/$codex_triple/bin/codex")" || failed=1
gemini="$(install "gemini-$GEMINI_VERSION" "@google/gemini-cli@$GEMINI_VERSION" \
    "node_modules/@google/gemini-cli/bundle/gemini.js")" || failed=1

if [ "$failed" = 1 ]; then
    if [ -n "${CI:-}" ]; then
        say "the real agents are part of CI: failing (see above)"
        exit 1
    fi
    say "the real-agent tests will be skipped for what is missing (see above); CI would fail here"
fi
if [ -n "$claude" ]; then printf 'export SOLARIA_TEST_CLAUDE=%q\n' "$claude"; fi
if [ -n "$opencode" ]; then printf 'export SOLARIA_TEST_OPENCODE=%q\n' "$opencode"; fi
if [ -n "$codex" ]; then printf 'export SOLARIA_TEST_CODEX=%q\n' "$codex"; fi
if [ -n "$gemini" ]; then printf 'export SOLARIA_TEST_GEMINI=%q\n' "$gemini"; fi
