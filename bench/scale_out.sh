#!/usr/bin/env bash
# The scale-out fault test at full size: 2 servers and 8 CPU workers (separate processes) on one
# PostgreSQL, 1000 submissions, 50 SIGKILLs of random workers, one PostgreSQL restart, one server
# restart. Prints the counts (docs/perf.md). Needs kj built (build/kj) and the harness venv.
#   bench/scale_out.sh [extra scale_out_test.py flags, e.g. --submissions 200 --kills 10]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
exec python3 "$root/tests/e2e/scale_out_test.py" --kj "${KJ:-$root/build/kj}" --root "$root" \
  --servers 2 --workers 8 --submissions 1000 --kills 50 --timeout 14400 "$@"
