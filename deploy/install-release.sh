#!/usr/bin/env bash
# Installs SOLARIA from a release archive, with no Rust toolchain and no root:
# `solaria` and `solaria-hook` into PREFIX/bin (~/.local/bin by default), or, from a
# solaria-central archive, `solaria-central` (as deploy/central/Dockerfile does).
#
#   bash install-release.sh [--prefix DIR] [--sums FILE|URL] ARCHIVE
#
# ARCHIVE is a release archive's URL (http or https) or path
# (solaria-VERSION-TARGET.tar.gz, made by deploy/release.sh). Its checksum is
# checked against SHA256SUMS, read beside the archive unless --sums names it; on a
# mismatch, or an archive SHA256SUMS does not list, nothing is installed. Each
# binary is replaced whole (written beside, then renamed), so a hook running during
# an upgrade finds the old binary or the new one, never half of one.
set -euo pipefail

prefix=""
sums=""
archive=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --sums) sums="${2:?--sums needs a file or URL}"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install-release: unknown option $1" >&2; exit 2 ;;
        *) archive="$1"; shift ;;
    esac
done
[ -n "$archive" ] || { echo "usage: install-release.sh [--prefix DIR] [--sums FILE|URL] ARCHIVE" >&2; exit 2; }
[ -n "$prefix" ] || prefix="${HOME:?HOME is not set: name the install directory with --prefix}/.local"

fail() { echo "install-release: $*; nothing was installed" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# fetch SOURCE DEST: a URL downloaded, or a path copied.
fetch() {
    case "$1" in
        http://*|https://*)
            command -v curl >/dev/null || fail "curl is needed to download $1"
            curl -fsSL --proto '=https,http' -o "$2" "$1" || fail "cannot download $1"
            ;;
        *) cp "$1" "$2" 2>/dev/null || fail "cannot read $1" ;;
    esac
}

name="$(basename "${archive%%\?*}")"
case "$name" in
    solaria-central-*.tar.gz) binaries="solaria-central" ;;
    solaria-*.tar.gz) binaries="solaria solaria-hook" ;;
    *) fail "$name is not a SOLARIA release archive (solaria-VERSION-TARGET.tar.gz)" ;;
esac
main="${binaries%% *}"
fetch "$archive" "$work/$name"
[ -n "$sums" ] || sums="$(dirname "$archive")/SHA256SUMS"
fetch "$sums" "$work/SHA256SUMS"

expected="$(awk -v f="$name" '$2 == f || $2 == "*" f { print $1 }' "$work/SHA256SUMS")"
[ -n "$expected" ] || fail "SHA256SUMS lists no $name"
if command -v sha256sum >/dev/null; then
    actual="$(sha256sum "$work/$name" | awk '{ print $1 }')"
else
    actual="$(shasum -a 256 "$work/$name" | awk '{ print $1 }')"
fi
[ "$expected" = "$actual" ] || fail "checksum mismatch for $name: SHA256SUMS says $expected, the file is $actual"

mkdir -p "$work/unpacked"
tar -C "$work/unpacked" -xzf "$work/$name" || fail "cannot unpack $name"
dir="$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
for binary in $binaries; do
    [ -f "$dir/$binary" ] || fail "$name holds no $binary"
done
# A binary that does not run here (another system, a glibc too old) is not installed.
"$dir/$main" --version >/dev/null 2>&1 || fail "the $main in $name does not run on this machine ($(uname -sm))"

mkdir -p "$prefix/bin"
for binary in $binaries; do
    install -m 0755 "$dir/$binary" "$prefix/bin/.$binary.new"
    mv -f "$prefix/bin/.$binary.new" "$prefix/bin/$binary"
done
echo "installed $("$prefix/bin/$main" --version) into $prefix/bin"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "$prefix/bin is not on your PATH: add it (export PATH=\"$prefix/bin:\$PATH\" in your shell's profile)" ;;
esac
if [ "$main" = solaria ]; then
    echo "next: solaria install claude-code   (or opencode, codex, gemini)"
else
    echo "next: solaria-central serve   (deploy/central/PRODUCTION.md)"
fi
