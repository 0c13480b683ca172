#!/usr/bin/env bash
# Release archives, for installing SOLARIA without a Rust toolchain
# (deploy/install-release.sh): the edge as solaria-VERSION-TARGET.tar.gz (`solaria`,
# `solaria-hook` linked statically where Rust can, the licence, a short README) and
# the central service as solaria-central-VERSION-TARGET.tar.gz, with SHA256SUMS
# beside them, in OUT_DIR (target/dist by default).
#
#   bash deploy/release.sh [OUT_DIR]
#
# Binaries are stripped. Built here, on Debian 12, they need glibc 2.36 or newer:
# the script reads the newest glibc symbol each binary asks for and fails past that
# floor, so an archive never claims a floor it breaks. SOLARIA_RELEASE_BIN_DIR=DIR
# packs the binaries already in DIR instead of building (the tests pack a debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="${1:-$root/target/dist}"
# The newest glibc the archives may ask for: Debian 12's.
glibc_floor="2.36"

version="$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version = "\(.*\)"/\1/p' Cargo.toml)"
[ -n "$version" ] || { echo "release: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target="x86_64-unknown-linux-gnu" ;;
    Linux-aarch64) target="aarch64-unknown-linux-gnu" ;;
    Darwin-arm64) target="aarch64-apple-darwin" ;;
    Darwin-x86_64) target="x86_64-apple-darwin" ;;
    *) echo "release: no archive name for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

if [ -n "${SOLARIA_RELEASE_BIN_DIR:-}" ]; then
    bin="$SOLARIA_RELEASE_BIN_DIR"
    hook="$bin/solaria-hook"
else
    cargo build --release --locked -p solaria-edge -p solaria-hook -p solaria-central --bins
    bin="${CARGO_TARGET_DIR:-target}/release"
    static="$(bash deploy/static-hook.sh release)"
    hook="${static:-$bin/solaria-hook}"
fi

# The newest GLIBC_x.y symbol version a binary needs ("" when it needs none: a
# static binary has no dynamic symbols, and objdump says so by failing).
glibc_needed() {
    { objdump -T "$1" 2>/dev/null || true; } | { grep -o 'GLIBC_[0-9][0-9.]*' || true; } \
        | sed 's/GLIBC_//' | sort -V | tail -n 1
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# pack NAME README_TEXT FILE...: a directory NAME-VERSION-TARGET with the files
# (stripped, checked against the floor), the licence and the README, tarred.
pack() {
    local name="$1" readme="$2"
    shift 2
    local dir="$name-$version-$target"
    mkdir -p "$work/$dir"
    local file
    for file in "$@"; do
        local base
        base="$(basename "$file")"
        base="${base%-static}"
        cp "$file" "$work/$dir/$base"
        chmod 0755 "$work/$dir/$base"
        strip "$work/$dir/$base" 2>/dev/null || true
        local needed
        needed="$(glibc_needed "$work/$dir/$base")"
        if [ -n "$needed" ] && [ "$(printf '%s\n%s\n' "$needed" "$glibc_floor" | sort -V | tail -n 1)" != "$glibc_floor" ]; then
            echo "release: $base needs glibc $needed, past the stated floor $glibc_floor" >&2
            exit 1
        fi
        echo "$base: glibc ${needed:-not needed (static)}" >&2
    done
    cp /usr/share/common-licenses/Apache-2.0 "$work/$dir/LICENSE" 2>/dev/null \
        || { echo "release: no Apache-2.0 licence text at /usr/share/common-licenses (install base-files)" >&2; exit 1; }
    printf '%s\n' "$readme" > "$work/$dir/README.md"
    tar -C "$work" -czf "$out/$dir.tar.gz" "$dir"
    echo "$out/$dir.tar.gz"
}

pack solaria "# SOLARIA Memory $version ($target)

\`solaria\` (the edge: capture, search, the daemon, the MCP server) and
\`solaria-hook\` (what the agents' hooks run). Needs glibc $glibc_floor or newer.

Install: \`bash install-release.sh solaria-$version-$target.tar.gz\` (from the
repository's deploy/), or copy both files into a directory on your PATH; then
\`solaria install claude-code\` (or opencode, codex, gemini).
Licence: Apache-2.0 (LICENSE)." "$bin/solaria" "$hook"

pack solaria-central "# SOLARIA Memory central service $version ($target)

\`solaria-central\`: the service machines sync through (axum on PostgreSQL).
Needs glibc $glibc_floor or newer. Running it: deploy/central/PRODUCTION.md in the
repository. Licence: Apache-2.0 (LICENSE)." "$bin/solaria-central"

(cd "$out" && sha256sum "solaria-$version-$target.tar.gz" "solaria-central-$version-$target.tar.gz" > SHA256SUMS)
echo "$out/SHA256SUMS"
