#!/usr/bin/env bash
# Builds the unit suites with AddressSanitizer and UndefinedBehaviorSanitizer (the `asan` preset,
# in build-asan/) and runs them (ctest -L unit): a sanitizer report fails its test.
# With --all, kj is built the same way and every test runs, the end-to-end ones included (they
# drive the sanitized kj; ./test.sh runs them on the normal build).
# Usage: scripts/sanitize.sh [--all] [ctest arguments...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
all=0
if [ "${1:-}" = --all ]; then
  all=1
  shift
fi
"$root/scripts/setup.sh"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
(cd "$root" && cmake --preset asan "${launcher[@]}" >/dev/null)
units=(problem_test sandbox_test judge_test bench_test store_test worker_test server_test bootstrap_test)
# datasets_test exists where Arrow was found (the harness venv's pyarrow).
# (The list is read whole: grep -q closing the pipe early failed the pipeline under pipefail.)
targets="$(cmake --build "$root/build-asan" --target help)"
[[ $targets == *datasets_test* ]] && units+=(datasets_test)
selection=(-L unit)
if ((all)); then
  units=(all)  # kj, kj-parquet and the rest the end-to-end tests run
  selection=(--parallel "${CTEST_PARALLEL_LEVEL:-$(nproc)}")
fi
cmake --build "$root/build-asan" -j"$(nproc)" --target "${units[@]}"
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
# Every report is fatal (-fno-sanitize-recover=all); leaks are reported at exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The PostgreSQL tests against a throwaway cluster, as in test.sh.
cd "$root/build-asan"
exec "$root/scripts/test_postgres.sh" with ctest "${selection[@]}" --output-on-failure "$@"
