#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every unit and behaviour test of the
# workspace against real SQLite files and the real binaries. `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo is needed: install Rust from https://rustup.rs" >&2; exit 1; }

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --workspace
