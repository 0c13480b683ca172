#!/usr/bin/env bash
# Builds `solaria-hook` as deploy/install.sh ships it (release profile: no debug
# sections, linked statically where Rust can) and fails when it is 10 MB or more: a
# hook is a process every agent starts at each event, so its size is a contract
# (docs/BENCHMARKS.md). Prints the size in bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((10 * 1024 * 1024))
cargo build --release --locked --quiet -p solaria-hook --bins
client="$(bash deploy/static-hook.sh release)"
client="${client:-${CARGO_TARGET_DIR:-target}/release/solaria-hook}"
size="$(stat -c %s "$client")"
if [ "$size" -ge "$limit" ]; then
    echo "lean-hook: $client is $size bytes, not under 10 MB: check [profile.release] in Cargo.toml and hook/Cargo.toml's dependencies" >&2
    exit 1
fi
echo "solaria-hook (release, as shipped): $size bytes"
