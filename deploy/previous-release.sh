#!/usr/bin/env bash
# The central service as it was just before the newest change to its schema, built
# once and cached: the release that must keep serving beside the new one while a
# rolling upgrade runs (docs: deploy/central/PRODUCTION.md, "Upgrading").
#
#   bash deploy/previous-release.sh
#
# Prints one line: the path of that `solaria-central` binary. The revision is the
# parent of the newest commit that added a file under migrations/central/; it is
# built from `git archive` of that revision in a directory of its own (seeded with
# this checkout's compiled dependencies, so only the workspace's crates compile) and
# kept in ${SOLARIA_RELEASE_CACHE:-~/.cache/solaria/releases}/<revision>/. Needs the
# repository's history (a shallow clone: `git fetch --unshallow`).
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(pwd)"

die() {
    echo "previous-release.sh: $*" >&2
    exit 1
}

command -v git >/dev/null || die "git is needed"
git rev-parse --git-dir >/dev/null 2>&1 || die "$here is not a git checkout: the previous release is read from its history"
changed="$(git log -1 --format=%H --diff-filter=A -- migrations/central/)"
[ -n "$changed" ] || die "no commit adds a migration under migrations/central/"
base="$(git rev-parse --verify -q "$changed^" || true)"
[ -n "$base" ] || die "the parent of $changed is not in this clone (a shallow clone? run: git fetch --unshallow)"

cache="${SOLARIA_RELEASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/solaria/releases}/$base"
binary="$cache/solaria-central"
if [ -x "$binary" ]; then
    echo "$binary"
    exit 0
fi

work="$(mktemp -d /tmp/solaria-previous-release.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "previous-release.sh: building solaria-central at $base (before $changed, which changed the schema)" >&2
git archive "$base" | tar -x -C "$work/"
# The dependencies compiled here already: cargo reuses what matches (same versions,
# features and compiler) and builds the rest. The workspace's own crates are left
# out: their artifacts are named by their path.
target="${CARGO_TARGET_DIR:-$here/target}"
mkdir -p "$work/target/debug/deps"
if [ -d "$target/debug/deps" ]; then
    find "$target/debug/deps" -maxdepth 1 -type f \( -name 'lib*' -o -name '*.d' \) \
        ! -name 'libsolaria*' ! -name 'solaria*' -exec cp -a -t "$work/target/debug/deps/" {} +
    for part in build .fingerprint; do
        [ -d "$target/debug/$part" ] && cp -a "$target/debug/$part" "$work/target/debug/"
    done
fi
(cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build -q -p solaria-central --bin solaria-central) >&2 ||
    die "building solaria-central at $base failed"
mkdir -p "$cache"
cp "$work/target/debug/solaria-central" "$binary.tmp"
mv "$binary.tmp" "$binary"
echo "previous-release.sh: $binary" >&2
echo "$binary"
