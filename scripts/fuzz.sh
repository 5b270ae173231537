#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/: clang, ASan and UBSan) in build-fuzz/ and runs each for
# SECONDS (default 60) on its seed corpus, one after the other; prints per target the executions,
# the seconds and the crashes. Exits 1 when a target crashed or reported: the input that did it is
# kept in build-fuzz/crashes/TARGET/ (reproduce: build-fuzz/fuzz/fuzz_TARGET FILE).
# Inputs the fuzzer found interesting accumulate in build-fuzz/corpus/TARGET/, so runs add up;
# build-fuzz/runs.tsv lists every run (time, target, executions, seconds, crashes).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
all=(task_yml submission kernelbench harness_events api_request parquet_import)
seconds=60
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (${all[*]})" >&2; exit 2; }
done

build="$root/build-fuzz"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Arrow (parquet_import) comes from the harness venv's pyarrow, as for kj-parquet.
python="${KJ_PYTHON:-$(cat "$root/build/harness-python" 2>/dev/null || true)}"
if [ -z "$python" ] && [[ " ${targets[*]} " == *" parquet_import "* ]]; then
  echo "fuzz: no harness venv (scripts/setup.sh), so no Arrow: parquet_import is skipped" >&2
  targets=("${targets[@]/parquet_import/}")
  read -r -a targets <<<"${targets[*]}"
fi
(cd "$root" && cmake --preset fuzz ${python:+-DKJ_HARNESS_PYTHON="$python"} "${launcher[@]}" >/dev/null)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

# Seed corpora from the repository's own files: directories as they are, single files linked
# into a directory of their own (libFuzzer takes directories).
seed_links() {  # DIR FILE...: DIR holds a link to each FILE
  local dir=$1
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  for f in "$@"; do ln -s "$f" "$dir/$(realpath --relative-to="$root" "$f" | tr / _)"; done
}
seeds() {
  case $1 in
    task_yml)
      seed_links "$build/seeds/task_yml" "$root"/problems/*/task.yml "$root"/tests/problems/*/task.yml
      echo "$build/seeds/task_yml" ;;
    submission) echo "$root/tests/corpus $root/tests/honest $root/problems" ;;
    kernelbench) echo "$root/tests/kernelbench" ;;
    harness_events | api_request) echo "$root/fuzz/seeds/$1" ;;
    parquet_import)
      if [ ! -d "$build/seeds/parquet_import" ]; then
        "${python:-python3}" "$root/fuzz/seeds/parquet_files.py" "$build/seeds/parquet_import"
      fi
      echo "$build/seeds/parquet_import" ;;
  esac
}

failed=0
printf '%-16s %12s %8s %8s\n' target executions seconds crashes
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  log="$build/logs/$t.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  read -r -a seed_dirs <<<"$(seeds "$t")"
  start=$(date +%s)
  rc=0
  "$build/fuzz/fuzz_$t" "$corpus" "${seed_dirs[@]}" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$crashes" -type f -newermt "@$start" | wc -l)
  if ((rc != 0)); then
    failed=1
    ((found > 0)) || found=1
  fi
  printf '%-16s %12s %8s %8s\n' "$t" "${execs:-?}" "$elapsed" "$found"
  # Every run appended, for adding up the time each target was fuzzed (docs/security.md).
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "${execs:-?}" "$elapsed" "$found" \
    >>"$build/runs.tsv"
  if ((rc != 0)); then
    echo "fuzz: $t stopped with status $rc; the end of its log ($log):" >&2
    # What went wrong, where in kj, and the input that did it.
    grep -E 'terminate called|what\(\)|ERROR:|runtime error|uncaught| in kj::|/src/|SUMMARY|Test unit written' \
      "$log" | head -30 >&2 || tail -40 "$log" >&2
  fi
done
exit "$failed"
