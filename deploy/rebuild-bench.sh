#!/usr/bin/env bash
# How long the `solaria` binary takes to build again after an edit to the viewer
# (edge/src/http/ui/), here against a baseline revision measured in the same run:
# rounds interleaved (baseline, then this tree), a line added to the viewer's
# `http/ui/mod.rs` before each build (a comment: every round is a real edit, which
# incremental compilation cannot skip as it skips a file merely touched; the file is
# put back at the end).
# The baseline builds in its own target directory, seeded with a copy of this one's
# compiled dependencies (cargo names a workspace crate's artifacts by its path
# inside the workspace, so two checkouts cannot share one directory), so both sides
# build only the workspace's own crates. Prints each side's median and p95 (seconds)
# and their ratio. docs/BENCHMARKS.md has the figures.
#
#   bash deploy/rebuild-bench.sh [BASE_REV] [ROUNDS]
#
# BASE_REV defaults to 4a3dd04 (the edge as one crate); ROUNDS to 7.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev="${1:-4a3dd04}"
rounds="${2:-7}"
here="$(pwd)"
target="${CARGO_TARGET_DIR:-$here/target}"
base="$(mktemp -d /tmp/solaria-rebuild-base.XXXXXX)"
base_target="$base-target"
edited="edge/src/http/ui/mod.rs"
saved="$(mktemp /tmp/solaria-rebuild-saved.XXXXXX)"
cp -p "$here/$edited" "$saved"
trap 'cp "$saved" "$here/$edited"; rm -f "$saved"; git -C "$here" worktree remove --force "$base" >/dev/null 2>&1 || rm -rf "$base"; rm -rf "$base_target"' EXIT
git worktree add --detach -q "$base" "$base_rev"
mkdir -p "$base_target/debug"
for part in deps build .fingerprint; do
    [ -d "$target/debug/$part" ] && cp -a "$target/debug/$part" "$base_target/debug/"
done

round=0
build() { # DIR TARGET → seconds of `cargo build -p solaria-edge --bin solaria` after an edit
    local dir="$1" into="$2" start end
    round=$((round + 1))
    echo "// rebuild-bench edit $round" >> "$dir/$edited"
    start="$(date +%s.%N)"
    (cd "$dir" && CARGO_TARGET_DIR="$into" cargo build -q -p solaria-edge --bin solaria)
    end="$(date +%s.%N)"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}

# One build of each first: what is measured is the rebuild, not the first build.
build "$base" "$base_target" >/dev/null
build "$here" "$target" >/dev/null
base_times=()
here_times=()
for _ in $(seq "$rounds"); do
    base_times+=("$(build "$base" "$base_target")")
    here_times+=("$(build "$here" "$target")")
done

python3 - "${base_times[*]}" "${here_times[*]}" "$base_rev" <<'PY'
import statistics, sys
base = sorted(float(x) for x in sys.argv[1].split())
here = sorted(float(x) for x in sys.argv[2].split())
def p95(xs):
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
for name, xs in ((f"baseline {sys.argv[3]}", base), ("this tree", here)):
    print(f"{name}: median {statistics.median(xs):.2f} s, p95 {p95(xs):.2f} s ({len(xs)} rounds)")
print(f"ratio (this tree / baseline): median {statistics.median(here) / statistics.median(base):.2f}, "
      f"p95 {p95(here) / p95(base):.2f}")
PY
