#!/usr/bin/env bash
# Throwaway PostgreSQL clusters for the tests: the central service's tests each get a
# database of their own on a private cluster that listens on 127.0.0.1 only, with a
# random free port, and is deleted afterwards. We never use the system's cluster.
#
#   deploy/pg.sh install    install the PostgreSQL server and PgBouncer if they are missing
#                           (root: apt-get; otherwise prints the command to run and fails)
#   deploy/pg.sh start DIR  create a fresh cluster in DIR (absent or empty) and start it;
#                           prints one line on stdout: postgres://postgres@127.0.0.1:PORT/postgres
#   deploy/pg.sh standby PRIMARY DIR
#                           a streaming standby of the cluster `start` made in PRIMARY:
#                           pg_basebackup -R into DIR (absent or empty), started on a port
#                           of its own; prints its URL like start (stop DIR removes it)
#   deploy/pg.sh pooler CLUSTER DIR
#                           PgBouncer in transaction mode in front of the cluster `start`
#                           made in CLUSTER, every database of it, configured and run in DIR
#                           (absent or empty); prints its URL (database `postgres`; put any
#                           other name in its place); stop DIR stops it
#   deploy/pg.sh crash DIR  kill -9 the cluster in DIR, its postmaster and every child
#                           (for failover tests; stop DIR still removes it)
#   deploy/pg.sh promote DIR
#                           promote the standby in DIR to a primary (pg_ctl promote -w)
#   deploy/pg.sh stop DIR   stop that cluster (or pooler) and remove DIR (safe to call twice)
#   deploy/pg.sh pgvector   make sure a PostgreSQL with pgvector is unpacked in the cache and
#                           print one line on stdout: its bin directory, for PG_BINDIR
#                           (x86_64 Linux: the pinned pgserver wheel from PyPI, PostgreSQL
#                           16.2 + pgvector 0.6.2, fetched with pip once into
#                           /var/cache/solaria/pg as root, else ${XDG_CACHE_HOME:-~/.cache}/
#                           solaria/pg; an explicit PG_BINDIR is printed as it is)
#
# Binaries come from $PG_BINDIR, else the newest /usr/lib/postgresql/*/bin, else PATH;
# start records them in DIR, so stop uses the same ones whatever PG_BINDIR says then.
# initdb and postgres refuse to run as root: as root they run as the `postgres` user.
# Everything but the one line start and pgvector print goes to stderr.
set -euo pipefail

MARKER=.solaria-pg # written in DIR by start; stop removes only directories that have it

# The PostgreSQL with pgvector that `pgvector` unpacks: the pgserver wheel (PyPI) bundles
# PostgreSQL 16.2 and pgvector 0.6.2, built for manylinux2014 x86_64. Pinned by hash.
PGSERVER_VERSION=0.1.4
PGSERVER_WHEEL=pgserver-0.1.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
PGSERVER_SHA256=d595789b47624a3d963aa9aa6359da9be31beb7e61f1a45541953242068b8813

die() {
    echo "pg.sh: $*" >&2
    exit 1
}

# The directory holding initdb, pg_ctl and postgres, or nothing.
bindir() {
    local d
    if [ -n "${PG_BINDIR:-}" ]; then
        [ -x "$PG_BINDIR/initdb" ] && echo "$PG_BINDIR"
        return 0
    fi
    d="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)"
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then
        echo "$d"
        return 0
    fi
    d="$(command -v initdb 2>/dev/null || true)"
    [ -n "$d" ] && dirname "$d"
    return 0
}

need_bindir() {
    BIN="$(bindir)"
    if [ -z "$BIN" ]; then
        if [ -n "${PG_BINDIR:-}" ]; then
            die "PG_BINDIR=$PG_BINDIR has no initdb"
        fi
        die "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found: run \`bash deploy/pg.sh install\` (as root it runs: apt-get update && apt-get install -y postgresql), or set PG_BINDIR"
    fi
}

# Runs a command as the cluster's owner: ourselves, or `postgres` when we are root.
as_owner() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    elif command -v runuser >/dev/null; then
        runuser -u postgres -- "$@"
    else
        su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
}

cmd_install() {
    install_postgresql
    install_pgbouncer
}

# Debian's PgBouncer (1.18 on Debian 12), for the tests of the service behind it. The
# package starts a system instance on port 6432: we never use it, so it is stopped.
install_pgbouncer() {
    if command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ]; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        die "PgBouncer not found. Install it as root: sudo sh -c 'apt-get update && apt-get install -y pgbouncer'"
    fi
    command -v apt-get >/dev/null || die "PgBouncer not found and apt-get is not available: install PgBouncer"
    echo "pg.sh: installing PgBouncer (apt-get install -y pgbouncer)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >&2 || {
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >&2
    }
    service pgbouncer stop >/dev/null 2>&1 || true
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        systemctl disable --now pgbouncer >/dev/null 2>&1 || true
    fi
}

install_postgresql() {
    if [ -n "${PG_BINDIR:-}" ] && [ ! -x "$PG_BINDIR/initdb" ]; then
        die "PG_BINDIR=$PG_BINDIR has no initdb: fix or unset it"
    fi
    if [ -n "$(bindir)" ]; then
        echo "pg.sh: PostgreSQL found in $(bindir)" >&2
        return 0
    fi
    local cmd="apt-get update && apt-get install -y postgresql"
    if [ "$(id -u)" -ne 0 ]; then
        die "PostgreSQL server binaries not found. Install them as root: sudo sh -c '$cmd' (or set PG_BINDIR to a directory holding initdb and pg_ctl)"
    fi
    command -v apt-get >/dev/null || die "PostgreSQL server binaries not found and apt-get is not available: install the PostgreSQL server, or set PG_BINDIR"
    echo "pg.sh: installing PostgreSQL ($cmd)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
    # The package creates and may start a system cluster: we never use it. Stop every
    # cluster and mark it manual so nothing starts it at boot.
    if command -v pg_lsclusters >/dev/null; then
        local ver name conf
        while read -r ver name _; do
            [ -n "$ver" ] || continue
            pg_ctlcluster "$ver" "$name" stop >&2 || true
            conf="/etc/postgresql/$ver/$name/start.conf"
            if [ -f "$conf" ]; then
                # Rewritten in place (keeps owner, mode and comments).
                sed 's/^\([[:space:]]*\)auto\b/\1manual/' "$conf" >"$conf.new"
                cat "$conf.new" >"$conf"
                rm -f "$conf.new"
            fi
        done < <(pg_lsclusters -h 2>/dev/null || true)
    fi
    service postgresql stop >/dev/null 2>&1 || true
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        systemctl disable --now postgresql >/dev/null 2>&1 || true
    fi
    [ -n "$(bindir)" ] || die "apt-get install postgresql finished but no initdb was found under /usr/lib/postgresql/*/bin"
    echo "pg.sh: PostgreSQL installed in $(bindir)" >&2
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 40000))
}

# Makes DIR (absent or empty) ready for a cluster owned by the server's user; sets
# $dir to its absolute path and $sock to its socket directory, and enters it.
prepare_dir() {
    dir="$1"
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
        die "$dir exists and is not empty"
    fi
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    touch "$dir/$MARKER"
    echo "$BIN" >"$dir/bindir" # for stop
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || die "running as root, but there is no \`postgres\` user to run the server as: install the postgresql package (apt-get install -y postgresql) or run as a normal user"
        chown postgres: "$dir"
        chmod 700 "$dir"
        as_owner test -w "$dir" || die "the postgres user cannot reach $dir (a parent directory is private?): use a directory such as \$(mktemp -d)"
    fi
    # Unix socket paths are limited to ~107 bytes: use a short directory when DIR is long.
    sock="$dir/sock"
    if [ "${#sock}" -gt 90 ]; then
        sock="$(mktemp -d /tmp/pgsock.XXXXXX)"
        echo "$sock" >"$dir/sockdir"
        [ "$(id -u)" -ne 0 ] || chown postgres: "$sock"
    else
        as_owner mkdir -p "$sock"
    fi
    cd "$dir" # the owner must be able to read its working directory
}

cmd_start() {
    local dir sock
    need_bindir
    prepare_dir "$1"
    echo "pg.sh: initdb in $dir/data ($BIN)" >&2
    if ! as_owner "$BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
        echo "pg.sh: initdb with locale C.UTF-8 failed, retrying with --no-locale" >&2
        rm -rf "$dir/data"
        as_owner "$BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
            tail -n 30 "$dir/initdb.log" >&2
            die "initdb failed"
        }
    fi

    launch
}

cmd_standby() {
    local primary="$1" dir sock port
    [ -f "$primary/$MARKER" ] && [ -f "$primary/port" ] ||
        die "$primary is not a running cluster made by \`pg.sh start\`"
    primary="$(cd "$primary" && pwd)"
    BIN="$(cat "$primary/bindir")"
    port="$(cat "$primary/port")"
    prepare_dir "$2"
    echo "pg.sh: pg_basebackup -R from 127.0.0.1:$port into $dir/data" >&2
    as_owner "$BIN/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$dir/data" -R -X stream \
        >"$dir/basebackup.log" 2>&1 || {
        tail -n 30 "$dir/basebackup.log" >&2
        die "pg_basebackup failed"
    }
    launch
}

# Whether a server answers on 127.0.0.1:$1 within ten seconds (pg_isready from $BIN).
answers() {
    local i
    for i in $(seq 1 100); do
        if [ ! -x "$BIN/pg_isready" ] || "$BIN/pg_isready" -q -h 127.0.0.1 -p "$1" -U postgres -d postgres; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# Starts the cluster in $dir/data on a free port with sockets in $sock, and prints its
# URL.
launch() {
    local port attempt
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        if as_owner "$BIN/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/log" start \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $sock -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=128MB" >&2; then
            if answers "$port"; then
                echo "$port" >"$dir/port"
                echo "pg.sh: PostgreSQL ready on 127.0.0.1:$port (data in $dir)" >&2
                echo "postgres://postgres@127.0.0.1:$port/postgres"
                return 0
            fi
            echo "pg.sh: the server started but does not answer on 127.0.0.1:$port" >&2
            break
        fi
        # Another process may have taken the port between our probe and the bind.
        if [ -f "$dir/log" ] && grep -qi 'could not bind\|address already in use' "$dir/log"; then
            echo "pg.sh: port $port was taken, trying another (attempt $attempt)" >&2
            as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
            : >"$dir/log"
            continue
        fi
        break
    done
    echo "pg.sh: PostgreSQL failed to start; server log ($dir/log):" >&2
    tail -n 40 "$dir/log" >&2 2>/dev/null || true
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    exit 1
}

cmd_pooler() {
    local cluster="$1" dir sock upstream port attempt bouncer
    [ -f "$cluster/$MARKER" ] && [ -f "$cluster/port" ] ||
        die "$cluster is not a running cluster made by \`pg.sh start\`"
    bouncer="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
    [ -x "$bouncer" ] || die "PgBouncer not found: run \`bash deploy/pg.sh install\` (as root)"
    upstream="$(cat "$cluster/port")"
    BIN="$(cat "$cluster/bindir")"
    prepare_dir "$2"
    # trust, as the clusters: users must still be listed.
    as_owner sh -c "echo '\"postgres\" \"\"' >'$dir/users.txt'"
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        # A small server pool, so that clients share servers the way a loaded
        # PgBouncer lends them; sqlx's startup parameters it does not track are ignored.
        as_owner sh -c "cat >'$dir/pgbouncer.ini'" <<INI
[databases]
* = host=127.0.0.1 port=$upstream
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir = $sock
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
default_pool_size = 4
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
        if as_owner "$bouncer" -d "$dir/pgbouncer.ini" >&2; then
            if answers "$port"; then
                echo "$port" >"$dir/port"
                echo "pg.sh: PgBouncer (transaction mode) on 127.0.0.1:$port in front of 127.0.0.1:$upstream" >&2
                echo "postgres://postgres@127.0.0.1:$port/postgres"
                return 0
            fi
        fi
        if grep -qi 'address already in use' "$dir/pgbouncer.log" 2>/dev/null; then
            stop_pooler "$dir"
            continue
        fi
        break
    done
    tail -n 20 "$dir/pgbouncer.log" >&2 2>/dev/null || true
    stop_pooler "$dir"
    die "PgBouncer failed to start"
}

cmd_crash() {
    local dir="$1" pid children
    pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
    [ -n "$pid" ] || die "$dir has no running cluster"
    children="$(pgrep -P "$pid" || true)"
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL "$pid" $children 2>/dev/null || true
    echo "pg.sh: killed the cluster in $dir (postmaster $pid and its children)" >&2
}

cmd_promote() {
    local dir="$1"
    [ -f "$dir/data/standby.signal" ] || die "$dir is not a standby"
    BIN="$(cat "$dir/bindir")"
    cd "$dir"
    as_owner "$BIN/pg_ctl" -D "$dir/data" -w -t 60 promote >&2
}

# Stops the PgBouncer whose pid file is in $1, if it still runs.
stop_pooler() {
    local pid i
    pid="$(cat "$1/pgbouncer.pid" 2>/dev/null || true)"
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
    local dir="$1"
    [ -d "$dir" ] || return 0
    dir="$(cd "$dir" && pwd)"
    [ "$dir" != / ] || die "refusing to remove /"
    if [ ! -e "$dir/$MARKER" ] && [ -n "$(ls -A "$dir")" ]; then
        die "$dir was not made by \`pg.sh start\` (no $MARKER): not removing it"
    fi
    cd /
    stop_pooler "$dir"
    if [ -f "$dir/data/postmaster.pid" ]; then
        BIN="$(cat "$dir/bindir" 2>/dev/null || true)"
        [ -n "$BIN" ] && [ -x "$BIN/pg_ctl" ] || BIN="$(bindir)"
        local stopped=no
        if [ -n "$BIN" ] && as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1; then
            stopped=yes
        fi
        # pg_ctl failed (or is gone): stop the postmaster ourselves if it is still ours.
        local pid
        pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
        if [ "$stopped" = no ] && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
            tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/data"; then
            kill -QUIT "$pid" 2>/dev/null || true
            local i
            for i in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    if [ -f "$dir/sockdir" ]; then
        rm -rf -- "$(cat "$dir/sockdir")"
    fi
    rm -rf -- "$dir"
}

# Where `pgvector` keeps the unpacked wheel. As root the clusters run as `postgres`, which
# cannot read root's home: use /var/cache then.
pgvector_home() {
    if [ "$(id -u)" -eq 0 ]; then
        echo "/var/cache/solaria/pg/pgserver-$PGSERVER_VERSION"
    else
        echo "${XDG_CACHE_HOME:-$HOME/.cache}/solaria/pg/pgserver-$PGSERVER_VERSION"
    fi
}

# The unpacked tree in $1 is whole and its server runs for the cluster's owner.
pgvector_ok() {
    [ -f "$1/pgserver/pginstall/lib/postgresql/vector.so" ] || return 1
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        "$1/pgserver/pginstall/bin/postgres" --version >/dev/null 2>&1 # start will say why not
    else
        as_owner "$1/pgserver/pginstall/bin/postgres" --version >/dev/null 2>&1
    fi
}

cmd_pgvector() {
    if [ -n "${PG_BINDIR:-}" ]; then
        [ -x "$PG_BINDIR/initdb" ] || die "PG_BINDIR=$PG_BINDIR has no initdb: fix or unset it"
        echo "pg.sh: using PG_BINDIR=$PG_BINDIR as it is (it must have pgvector)" >&2
        echo "$PG_BINDIR"
        return 0
    fi
    if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
        die "no PostgreSQL with pgvector is bundled for $(uname -s) $(uname -m) (only x86_64 Linux): install pgvector for your PostgreSQL (https://github.com/pgvector/pgvector) and set PG_BINDIR to that PostgreSQL's bin directory"
    fi
    local home parent bin
    home="$(pgvector_home)"
    parent="$(dirname "$home")"
    bin="$home/pgserver/pginstall/bin"
    if pgvector_ok "$home"; then
        echo "pg.sh: PostgreSQL with pgvector in $bin" >&2
        echo "$bin"
        return 0
    fi
    mkdir -p "$parent"
    if [ "$(id -u)" -eq 0 ]; then
        chmod a+rx "$parent" "$(dirname "$parent")" # the postgres user must reach the tree
    fi
    # Test processes may ask at once: one of them fetches, the others wait and reuse it.
    if command -v flock >/dev/null; then
        exec 9>"$parent/.pgserver-$PGSERVER_VERSION.lock"
        flock 9
        if pgvector_ok "$home"; then
            echo "$bin"
            return 0
        fi
        rm -rf -- "$home".tmp.* "$home".old.* # left by runs that were killed
    fi
    command -v python3 >/dev/null || die "python3 (with pip) is needed to fetch PostgreSQL with pgvector; or set PG_BINDIR to a PostgreSQL with pgvector"
    python3 -m pip --version >/dev/null 2>&1 || die "pip is needed to fetch PostgreSQL with pgvector (apt-get install -y python3-pip); or set PG_BINDIR to a PostgreSQL with pgvector"

    local tmp stage old
    PGV_CLEANUP=()
    trap 'rm -rf -- "${PGV_CLEANUP[@]}"' EXIT
    tmp="$(mktemp -d)"
    PGV_CLEANUP+=("$tmp")
    # Unpacked beside the target, then moved into place in one rename: a run killed
    # half-way leaves a pgserver-*.tmp.* directory at worst, never a half tree in $home.
    stage="$(mktemp -d "$home.tmp.XXXXXX")"
    PGV_CLEANUP+=("$stage")
    echo "pg.sh: fetching pgserver==$PGSERVER_VERSION (PostgreSQL 16.2 + pgvector 0.6.2, 11 MB) from PyPI" >&2
    python3 -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.11 --platform manylinux2014_x86_64 \
        "pgserver==$PGSERVER_VERSION" -d "$tmp" >&2 ||
        die "pip could not download pgserver==$PGSERVER_VERSION; or set PG_BINDIR to a PostgreSQL with pgvector"
    [ -f "$tmp/$PGSERVER_WHEEL" ] || die "pip did not download $PGSERVER_WHEEL (got: $(ls "$tmp"))"
    local sum
    sum="$(sha256sum "$tmp/$PGSERVER_WHEEL" | cut -d' ' -f1)"
    [ "$sum" = "$PGSERVER_SHA256" ] || die "$PGSERVER_WHEEL has sha256 $sum, expected $PGSERVER_SHA256: not using it"
    # The whole wheel, layout kept: the binaries find libpq through their RPATH
    # $ORIGIN/../../../pgserver.libs. zipfile drops the exec bits.
    python3 -m zipfile -e "$tmp/$PGSERVER_WHEEL" "$stage" >&2 || die "unpacking $PGSERVER_WHEEL failed"
    chmod a+x "$stage/pgserver/pginstall/bin/"*
    chmod -R a+rX "$stage"
    pgvector_ok "$stage" || die "the unpacked PostgreSQL does not run: $("$stage/pgserver/pginstall/bin/postgres" --version 2>&1 | tail -n 3)"
    if [ -e "$home" ]; then # a tree that no longer runs: replace it
        old="$(mktemp -d "$home.old.XXXXXX")"
        mv -T "$home" "$old/tree"
        rm -rf -- "$old"
    fi
    mv -T "$stage" "$home"
    rm -rf -- "$tmp"
    trap - EXIT
    echo "pg.sh: PostgreSQL with pgvector unpacked in $home" >&2
    echo "$bin"
}

case "${1:-}" in
install) cmd_install ;;
pgvector) cmd_pgvector ;;
start)
    [ $# -eq 2 ] || die "usage: pg.sh start DIR"
    cmd_start "$2"
    ;;
standby)
    [ $# -eq 3 ] || die "usage: pg.sh standby PRIMARY DIR"
    cmd_standby "$2" "$3"
    ;;
pooler)
    [ $# -eq 3 ] || die "usage: pg.sh pooler CLUSTER DIR"
    cmd_pooler "$2" "$3"
    ;;
crash)
    [ $# -eq 2 ] || die "usage: pg.sh crash DIR"
    cmd_crash "$(cd "$2" && pwd)"
    ;;
promote)
    [ $# -eq 2 ] || die "usage: pg.sh promote DIR"
    cmd_promote "$(cd "$2" && pwd)"
    ;;
stop)
    [ $# -eq 2 ] || die "usage: pg.sh stop DIR"
    cmd_stop "$2"
    ;;
*) die "usage: pg.sh install | pgvector | start DIR | standby PRIMARY DIR | pooler CLUSTER DIR | crash DIR | promote DIR | stop DIR" ;;
esac
