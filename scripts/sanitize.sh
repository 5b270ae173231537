#!/usr/bin/env bash
# Builds the unit suites with AddressSanitizer and UndefinedBehaviorSanitizer (the `asan` preset,
# in build-asan/) and runs them (ctest -L unit): a sanitizer report fails its test. The
# end-to-end tests are not run here (./test.sh runs them on the normal build).
# Usage: scripts/sanitize.sh [ctest arguments...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
(cd "$root" && cmake --preset asan "${launcher[@]}" >/dev/null)
units=(problem_test sandbox_test judge_test bench_test store_test worker_test server_test)
# datasets_test exists where Arrow was found (the harness venv's pyarrow).
cmake --build "$root/build-asan" --target help | grep -q datasets_test && units+=(datasets_test)
cmake --build "$root/build-asan" -j"$(nproc)" --target "${units[@]}"
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
# Every report is fatal (-fno-sanitize-recover=all); leaks are reported at exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The PostgreSQL store tests against a throwaway cluster, as in test.sh (stopped even on failure).
pg_dir="$(mktemp -u "${TMPDIR:-/tmp}/kj-asan-postgres.XXXXXX")"
trap '"$root/scripts/test_postgres.sh" stop "$pg_dir"' EXIT
export KJ_TEST_POSTGRES_URL="$("$root/scripts/test_postgres.sh" start "$pg_dir")"
cd "$root/build-asan"
ctest -L unit --output-on-failure "$@"
