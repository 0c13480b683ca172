#!/usr/bin/env bash
# The main job, end to end, on a local default: a recorded Claude Code session is
# captured by the real `solaria` hooks into a throwaway data dir, then searched,
# browsed and turned into the next session's context. Everything it creates lives
# in one temporary directory, removed at the end (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

command -v cargo >/dev/null || { echo "cargo is needed: install Rust from https://rustup.rs" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to replay the recorded session: apt-get install -y python3" >&2; exit 1; }

say "Building solaria"
cargo build --quiet -p solaria-edge --bin solaria
solaria="$root/target/debug/solaria"

work=$(mktemp -d "${TMPDIR:-/tmp}/solaria-demo.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT INT TERM

# A clone of the demo project: the project key comes from its git remote.
project="$work/orbit"
mkdir -p "$project/src"
git -C "$project" init -q
git -C "$project" remote add origin git@github.com:solaria-demo/orbit.git
export SOLARIA_HOME="$work/laptop"
export HOME="$work/home"   # keep the demo away from your real ~/.claude
mkdir -p "$HOME"

say "Capturing a recorded Claude Code session (41 hook events) on 'laptop'"
python3 deploy/demo/replay.py deploy/demo/sessions/laptop-auth-refresh.jsonl \
  --solaria "$solaria" --cwd "$project" --quiet
say "... and a second session, in Spanish, the next day"
python3 deploy/demo/replay.py deploy/demo/sessions/desktop-db-migrations.jsonl \
  --solaria "$solaria" --cwd "$project" --quiet

cd "$project"
say "solaria stats"
"$solaria" stats

say "solaria search refresh token rotation"
"$solaria" search refresh token rotation --limit 5

say "solaria search migración sesiones (Spanish)"
"$solaria" search migración sesiones --limit 3

first=$("$solaria" search renew_jwt --type tool_use --json --limit 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
say "solaria timeline $first"
"$solaria" timeline "$first" --before 3 --after 3

say "solaria show $first"
"$solaria" show "$first" | head -n 25

say "What the next SessionStart injects (solaria context)"
"$solaria" context

say "Secrets planted in the recording never reached the disk"
leaks=0
while IFS= read -r secret; do
  [ -n "$secret" ] || continue
  if cat "$SOLARIA_HOME"/memory.db* | grep -aqF -- "$secret"; then
    echo "  LEAK: ${secret:0:12}…"; leaks=1
  else
    echo "  absent: ${secret:0:12}…"
  fi
done < "$root/deploy/demo/sessions/SECRETS.txt"
echo "  redaction markers stored: $(cat "$SOLARIA_HOME"/memory.db* | grep -ao '\[REDACTED:[A-Z_]*\]' | sort | uniq -c | tr '\n' ' ')"
[ "$leaks" = 0 ] || { echo "a secret reached the store" >&2; exit 1; }

say "The <private> span stays searchable on this machine (and will never be synced)"
"$solaria" search Calle Mayor --limit 1

say "Done: capture, search, timeline, show and context all ran offline from $SOLARIA_HOME"
