#!/usr/bin/env bash
# Runs every test: sets up (once), builds, then ctest (unit suites and end-to-end through kj).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
cd "$root/build"
ctest --output-on-failure "$@"
