#!/usr/bin/env bash
# npm packages, the way coding agents' CLIs ship (`npm i -g @openai/codex`): a
# launcher, `solaria-memory`, and one package per platform carrying the binaries
# (`@solaria-memory/linux-x64`, with `os` and `cpu`), an optional dependency of the
# launcher, so npm installs only the one that fits. Made from a release archive
# (deploy/release.sh), so npm ships the very binaries the archive does; packed with
# `npm pack` into DIST_DIR.
#
#   bash deploy/npm.sh [DIST_DIR]     (target/dist by default; made by release.sh when empty)
#
# Only linux-x64 is built here; the launcher already knows the other platforms'
# package names, so packages built elsewhere slot in.
set -euo pipefail
cd "$(dirname "$0")/.."
dist="${1:-target/dist}"
dist="$(mkdir -p "$dist" && cd "$dist" && pwd)"
version="$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version = "\(.*\)"/\1/p' Cargo.toml)"
archive="$(ls "$dist"/solaria-"$version"-*.tar.gz 2>/dev/null | grep -v central | head -n 1 || true)"
if [ -z "$archive" ]; then
    bash deploy/release.sh "$dist" >/dev/null
    archive="$(ls "$dist"/solaria-"$version"-*.tar.gz | grep -v central | head -n 1)"
fi
target="$(basename "$archive" .tar.gz)"
target="${target#solaria-"$version"-}"
case "$target" in
    x86_64-unknown-linux-gnu) os=linux cpu=x64 ;;
    aarch64-unknown-linux-gnu) os=linux cpu=arm64 ;;
    aarch64-apple-darwin) os=darwin cpu=arm64 ;;
    x86_64-apple-darwin) os=darwin cpu=x64 ;;
    *) echo "npm: no npm platform for $target" >&2; exit 1 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$archive"
unpacked="$work/solaria-$version-$target"

platform="$work/platform"
mkdir -p "$platform/bin"
cp "$unpacked/solaria" "$unpacked/solaria-hook" "$platform/bin/"
cp "$unpacked/LICENSE" "$platform/"
cat > "$platform/package.json" <<JSON
{
  "name": "@solaria-memory/$os-$cpu",
  "version": "$version",
  "description": "SOLARIA Memory's binaries for $os-$cpu (installed by solaria-memory)",
  "license": "Apache-2.0",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/", "LICENSE"]
}
JSON
printf '# @solaria-memory/%s-%s\n\nSOLARIA Memory %s binaries, for `npm i -g solaria-memory`.\n' "$os" "$cpu" "$version" > "$platform/README.md"

launcher="$work/launcher"
cp -r deploy/npm/launcher "$launcher"
sed -i.bak "s/VERSION/$version/g" "$launcher/package.json" && rm -f "$launcher/package.json.bak"
cp "$unpacked/LICENSE" "$launcher/"
cp "$unpacked/README.md" "$launcher/README.md"
chmod 0755 "$launcher/bin/solaria.js" "$launcher/bin/solaria-hook.js"

(cd "$platform" && npm pack --silent --pack-destination "$dist" >/dev/null)
(cd "$launcher" && npm pack --silent --pack-destination "$dist" >/dev/null)
echo "$dist/solaria-memory-$os-$cpu-$version.tgz"
echo "$dist/solaria-memory-$version.tgz"
