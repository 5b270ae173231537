#!/usr/bin/env bash
# Acceptance run on a GPU host: every bundled solution gets its declared verdict on the GPU,
# the hostile corpus gets its verdicts, reference-kernels problems (if given) are judged by
# folder, and each problem's Triton solution is benchmarked. Logs go to OUT_DIR.
# Usage: scripts/gpu-check.sh OUT_DIR [REFERENCE_PROBLEM_DIR...]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$1"; shift
kj="$root/build/kj"
py="${KJ_PYTHON:-python3}"
dev="${KJ_DEVICE:-cuda:0}"
mkdir -p "$out"
common=(--device "$dev" --python "$py")

# A first evaluation shows at once whether the sandbox works on this host.
"$kj" eval "$root/problems/vectoradd" "$root/problems/vectoradd/solutions/correct/triton.py" \
  "${common[@]}" -v > "$out/first.log" 2>&1
cat "$out/first.log"
grep -q "verdict: accepted" "$out/first.log" || exit 1

pids=()
for p in "$root"/problems/*/; do
  n="$(basename "$p")"
  "$kj" problem check "$p" "${common[@]}" > "$out/check-$n.log" 2>&1 &
  pids+=($!)
done
python3 "$root/tests/e2e/declared_verdicts.py" --kj "$kj" --problem "$root/problems/vectoradd" \
  "$root/tests/corpus" "${common[@]}" --memory-limit 16384 > "$out/corpus.log" 2>&1 &
pids+=($!)
if (($#)); then
  python3 "$root/scripts/check_solution_folders.py" --kj "$kj" --device "$dev" "$@" \
    > "$out/reference-kernels.log" 2>&1 &
  pids+=($!)
fi
for pid in "${pids[@]}"; do wait "$pid"; done
tail -n 3 "$out"/check-*.log "$out/corpus.log" "$out"/reference-kernels.log 2>/dev/null

# Benchmarks last, on a quiet GPU.
for p in "$root"/problems/*/; do
  n="$(basename "$p")"
  "$kj" eval "$p" "$p/solutions/correct/triton.py" --mode benchmark "${common[@]}" --max-time 2 \
    > "$out/bench-$n.txt" 2>&1
  grep -E "verdict|median|score" "$out/bench-$n.txt"
done
