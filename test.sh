#!/usr/bin/env bash
# Runs every test: sets up (once), builds, then ctest (unit suites and end-to-end through kj).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
cd "$root/build"
# Tests run side by side, one per core (CTEST_PARALLEL_LEVEL overrides); a test that needs the
# machine to itself is RUN_SERIAL, and the longest start first (COST), in CMakeLists.txt. The
# PostgreSQL tests get a throwaway cluster on loopback.
exec "$root/scripts/test_postgres.sh" with \
  ctest --output-on-failure --parallel "${CTEST_PARALLEL_LEVEL:-$(nproc)}" "$@"
