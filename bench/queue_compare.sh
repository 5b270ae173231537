#!/usr/bin/env bash
# Two builds of bench/queue_throughput.cpp side by side: ROUNDS rounds, each running PostgreSQL
# and SQLite with 32 workers (10,000 jobs) and 1 worker (2,000 jobs), the old binary, then the new
# one; each PostgreSQL run on a fresh database, each SQLite run on a fresh file. Prints every run
# with the load average at its start (docs/perf.md).
#   bench/queue_compare.sh OLD_BINARY NEW_BINARY postgres://USER@HOST:PORT [ROUNDS]
set -euo pipefail
old="${1:?usage: queue_compare.sh OLD NEW POSTGRES_URL [ROUNDS]}"
new="${2:?usage: queue_compare.sh OLD NEW POSTGRES_URL [ROUNDS]}"
server="${3:?usage: queue_compare.sh OLD NEW POSTGRES_URL [ROUNDS]}"
rounds="${4:-3}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for round in $(seq 1 "$rounds"); do
  for config in pg32 sqlite32 pg1 sqlite1; do
    for version in old new; do
      binary="$old"
      [ "$version" = new ] && binary="$new"
      case "$config" in
        pg*) psql -q "$server/postgres" -c "CREATE DATABASE queue_compare"
             url="$server/queue_compare" ;;
        *) url="sqlite:$dir/queue.db" ;;
      esac
      case "$config" in
        *32) args=(--jobs 10000 --workers 32) ;;
        *) args=(--jobs 2000 --workers 1 --wakeups 0) ;;
      esac
      echo "== round $round $config $version load $(cut -d' ' -f1 /proc/loadavg)"
      "$binary" --db "$url" "${args[@]}"
      case "$config" in
        pg*) psql -q "$server/postgres" -c "DROP DATABASE queue_compare WITH (FORCE)" ;;
        *) rm -f "$dir"/queue.db* ;;
      esac
    done
  done
done
