#!/usr/bin/env bash
# Run a command beside a throwaway PostgreSQL server:
#
#   scripts/with_postgres.sh CMD [ARGS...]
#
# Creates a cluster in a temporary folder (trust authentication, listening on 127.0.0.1 only, on a
# free port, its unix socket in that folder), starts it, runs CMD with
#   CHECKWEIGH_TEST_PG_URL=postgresql://checkweigh@127.0.0.1:PORT/postgres
#   CHECKWEIGH_REQUIRE_PG=1
# and always stops the server and removes the folder afterwards. Exits with CMD's status.
#
# The server binaries are found on PATH, in $PG_BIN, or in the newest /usr/lib/postgresql/*/bin
# (Debian's postgresql package). Without them CMD runs with no server, and the PostgreSQL tests
# skip, unless CHECKWEIGH_REQUIRE_PG=1 is already set (CI): then this is an error. initdb and
# postgres refuse to run as root, so as root the server runs as the `postgres` user (or `nobody`).
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

find_bin() {
    if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then
        echo "$PG_BIN"
    elif command -v initdb > /dev/null && command -v pg_ctl > /dev/null; then
        dirname "$(readlink -f "$(command -v initdb)")"
    else
        local newest
        newest=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)
        if [ -n "$newest" ] && [ -x "$newest/initdb" ]; then
            echo "$newest"
        fi
    fi
}

bin=$(find_bin)
if [ -z "$bin" ]; then
    if [ "${CHECKWEIGH_REQUIRE_PG:-}" = 1 ]; then
        echo "with_postgres: CHECKWEIGH_REQUIRE_PG=1 but no PostgreSQL server binaries" \
            "(initdb) were found; install them (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "with_postgres: no PostgreSQL server binaries (initdb) found: running without a" \
        "server, the PostgreSQL tests will be skipped" >&2
    exec "$@"
fi

as_server=()
owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    owner=nobody
    if id postgres > /dev/null 2>&1; then
        owner=postgres
    fi
    as_server=(runuser -u "$owner" --)
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/checkweigh-pg.XXXXXX")
chmod 755 "$root"
chown "$owner" "$root"
data="$root/data"
log="$root/server.log"

cleanup() {
    local status=$?
    if [ -f "$data/postmaster.pid" ]; then
        "${as_server[@]}" "$bin/pg_ctl" -D "$data" -m immediate -w stop > /dev/null 2>&1 || true
    fi
    rm -rf "$root"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"${as_server[@]}" "$bin/initdb" -D "$data" -U checkweigh --auth=trust -E UTF8 \
    --locale=C.UTF-8 --no-sync > "$root/initdb.log" 2>&1 || {
    cat "$root/initdb.log" >&2
    exit 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Durability is not wanted here: fsync and friends off make creating databases per test cheap.
started=
for _ in 1 2 3 4 5; do
    port=$(free_port)
    if "${as_server[@]}" "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $root -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start > /dev/null; then
        started=1
        break
    fi
    # the port may have been taken between choosing and binding it: try another
done
if [ -z "$started" ]; then
    echo "with_postgres: the PostgreSQL server did not start; its log:" >&2
    cat "$log" >&2 || true
    exit 1
fi

export CHECKWEIGH_TEST_PG_URL="postgresql://checkweigh@127.0.0.1:$port/postgres"
export CHECKWEIGH_REQUIRE_PG=1
echo "with_postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2
"$@"
