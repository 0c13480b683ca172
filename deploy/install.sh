#!/usr/bin/env bash
# Builds and installs the edge: `solaria` and `solaria-hook` (linked statically where
# Rust can: deploy/static-hook.sh) into $SOLARIA_BIN_DIR, else $CARGO_HOME/bin, else
# ~/.cargo/bin. Then run `solaria install claude-code` / `solaria install opencode`.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SOLARIA_BIN_DIR:-${CARGO_HOME:-$HOME/.cargo}/bin}"
cargo build --release --locked -p solaria-edge -p solaria-hook --bins
static="$(bash deploy/static-hook.sh release)"
mkdir -p "$dest"
target="${CARGO_TARGET_DIR:-target}/release"
install -m 0755 "$target/solaria" "$dest/solaria"
install -m 0755 "${static:-$target/solaria-hook}" "$dest/solaria-hook"
echo "installed solaria and solaria-hook into $dest"
