#!/usr/bin/env bash
# Links `solaria-hook` statically against glibc, for PROFILE (release or debug; release
# by default). A hook is a process the agent starts at every prompt and tool call; linked
# statically, `solaria-hook` starts without the dynamic loader, in about the time
# `/bin/true` does (docs/BENCHMARKS.md, "Store one observation"). Cargo cannot set this flag for one binary
# of a package, so this relinks that binary alone after `cargo build`.
#
# Prints the path of a copy of the static binary (target/PROFILE/solaria-hook-static,
# which a later `cargo build` does not overwrite). On a host that is not linux-gnu it
# says so on stderr, leaves the dynamic binary and prints nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
case "$profile" in
    release) flags=(--release) ;;
    debug) flags=() ;;
    *) echo "usage: deploy/static-hook.sh [release|debug]" >&2; exit 2 ;;
esac
host="$(rustc -vV | sed -n 's/^host: //p')"
case "$host" in
    *-linux-gnu) ;;
    *) echo "static-hook: on $host solaria-hook stays dynamically linked" >&2; exit 0 ;;
esac
cargo rustc --quiet "${flags[@]}" -p solaria-hook --bin solaria-hook -- -C target-feature=+crt-static
target="${CARGO_TARGET_DIR:-target}/$profile"
cp "$target/solaria-hook" "$target/solaria-hook-static"
echo "$(cd "$target" && pwd)/solaria-hook-static"
