#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests (Debian's postgresql packages).
#   scripts/test_postgres.sh start DIR   initdb into DIR, start on a free port, print the URL
#                                        (postgres://kj@127.0.0.1:PORT, trust auth, loopback only)
#   scripts/test_postgres.sh stop DIR    stop it and delete DIR
#   scripts/test_postgres.sh restart DIR stop and start it again on the same port (fault tests)
#   scripts/test_postgres.sh with CMD... run CMD with $KJ_TEST_POSTGRES_URL naming a cluster started
#                                        for it in a temporary directory, stopped and deleted
#                                        afterwards (also when CMD fails); exits with CMD's status
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user
# (created by the package) or `nobody`.
set -euo pipefail
usage="usage: test_postgres.sh start|stop|restart DIR, or test_postgres.sh with CMD..."
command="${1:?$usage}"
if [ "$command" = with ]; then
  shift
  (($#)) || { echo "$usage" >&2; exit 2; }
  self="$(realpath "${BASH_SOURCE[0]}")"
  dir="$(mktemp -u "${TMPDIR:-/tmp}/kj-test-postgres.XXXXXX")"
  trap '"$self" stop "$dir"' EXIT
  KJ_TEST_POSTGRES_URL="$("$self" start "$dir")"
  export KJ_TEST_POSTGRES_URL
  "$@"
  exit
fi
dir="${2:?$usage}"

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
[ -x "$bin/pg_ctl" ] || { echo "test_postgres: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  owner=postgres
  getent passwd postgres >/dev/null || owner=nobody
  as_owner=(setpriv --reuid="$owner" --regid="$(id -g "$owner")" --clear-groups --)
fi

start() {
  local port
  port="$(cat "$dir/port")"
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/run \
        -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null
}

case "$command" in
  start)
    mkdir -p "$dir/run"
    [ "$(id -u)" -ne 0 ] || chown -R "$owner:" "$dir"
    "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -U kj --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    for _ in 1 2 3 4 5; do
      port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
      echo "$port" >"$dir/port"
      if start; then
        echo "postgres://kj@127.0.0.1:$port"
        exit 0
      fi
    done
    cat "$dir/server.log" >&2
    exit 1
    ;;
  restart)
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    start
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "test_postgres: unknown command $command" >&2
    exit 2
    ;;
esac
