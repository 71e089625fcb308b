#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the store's tests.
#
#   scripts/pg-test.sh CMD [ARGS…]   start a cluster, run CMD with HENSU_TEST_DATABASE_URL set,
#                                    stop the cluster, exit with CMD's status;
#   scripts/pg-test.sh               start a cluster, print the export line, and keep it up
#                                    until Ctrl-C (or until this script is killed).
#
# The cluster lives in a temp directory (initdb, trust auth on 127.0.0.1 only, a free port),
# runs as a non-root user (PostgreSQL refuses root: as root, the user `hensu-ci` is created
# if missing), and is removed on exit. Needs the server binaries (Debian: `apt-get install
# postgresql`); PG_BIN overrides where they are.
#
# Tests run with fsync off (their durability is not under test; an fsync on a virtual disk can
# cost milliseconds). Benchmarks of durable runs set PG_FSYNC=on: every figure in
# docs/performance.md says which it used.
set -euo pipefail

find_bin() {
    if [[ -n "${PG_BIN:-}" ]]; then echo "$PG_BIN"; return; fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    # Elsewhere: the directory of the real pg_ctl on PATH (symlinks resolved).
    if [[ -z "$d" ]] && command -v pg_ctl >/dev/null 2>&1; then
        d=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
    fi
    if [[ -z "$d" ]]; then
        echo "pg-test.sh: no PostgreSQL server binaries (install the postgresql package, or set PG_BIN)" >&2
        exit 2
    fi
    echo "$d"
}
BIN=$(find_bin)

if [[ $(id -u) -eq 0 ]]; then
    RUN_AS=hensu-ci
    id "$RUN_AS" >/dev/null 2>&1 || useradd -m -s /bin/bash "$RUN_AS"
    as_pg() { runuser -u "$RUN_AS" -- "$@"; }
else
    RUN_AS=$(id -un)
    as_pg() { "$@"; }
fi

DIR=$(mktemp -d /tmp/hensu-pg.XXXXXX)
chmod 755 "$DIR"
[[ $(id -u) -eq 0 ]] && chown "$RUN_AS" "$DIR"
DATA="$DIR/data"
LOG="$DIR/server.log"

cleanup() {
    as_pg "$BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free port: ask the kernel for one (bind to port 0) and release it.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

as_pg "$BIN/initdb" -D "$DATA" -U hensu --auth=trust --encoding=UTF8 --no-locale >"$DIR/initdb.log" 2>&1 || {
    cat "$DIR/initdb.log" >&2; exit 1; }
# Socket in the cluster's own directory: no need for /var/run/postgresql.
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=${PG_FSYNC:-off} -c max_connections=200" start >/dev/null || {
    cat "$LOG" >&2; exit 1; }
as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U hensu hensu_test

export HENSU_TEST_DATABASE_URL="postgres://hensu@127.0.0.1:$PORT/hensu_test"

if [[ $# -eq 0 ]]; then
    echo "export HENSU_TEST_DATABASE_URL=$HENSU_TEST_DATABASE_URL"
    echo "# the cluster runs until this script is stopped (Ctrl-C)" >&2
    while true; do sleep 3600; done
fi

set +e
"$@"
status=$?
set -e
exit $status
