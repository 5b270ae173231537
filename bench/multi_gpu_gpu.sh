#!/usr/bin/env bash
# On a host with two or more GPUs: the multi-GPU problem (problems/allreduce_mean, world_size 2)
# judged with NCCL, one sandboxed rank per GPU (docs/multi-gpu.md). Every declared verdict, then
# benchmark and leaderboard mode for the correct solutions; the JSON results, the commands, the
# GPU topology and the machine load go to the results folder, for docs/perf.md.
#   bench/multi_gpu_gpu.sh [build/kj] [cuda:0,cuda:1]
# Needs root (each rank's sandbox joins the run's own network namespace). NVLink multicast stays
# off: the judge sets NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
# NVSHMEM_DISABLE_NVLS=1 in every rank's environment, and this script sets them for itself too.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kj="${1:-$root/build/kj}"
devices="${2:-cuda:0,cuda:1}"
problem="$root/problems/allreduce_mean"
out="${KJ_RESULTS_DIR:-$root/build/multi-gpu-results}"
mkdir -p "$out"
status=0
log="$out/commands.txt"
: > "$log"
run() {
  echo "\$ $*" | tee -a "$log"
  "$@" || status=1
}
{
  date -u
  uptime
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  nvidia-smi topo -m 2>&1
} > "$out/host.txt"
cat "$out/host.txt"
# Every declared verdict with NCCL (the hang costs the problem's test_timeout).
run "$kj" problem check "$problem" --device "$devices"
"$kj" problem check "$problem" --device "$devices" --json > "$out/check.json"
for solution in all_reduce all_gather; do
  file="$problem/solutions/correct/$solution.py"
  run "$kj" eval "$problem" "$file" --device "$devices" --mode benchmark
  "$kj" eval "$problem" "$file" --device "$devices" --mode benchmark --json \
    > "$out/benchmark_$solution.json"
  run "$kj" eval "$problem" "$file" --device "$devices" --mode leaderboard --secret-seed 8675309
done
# The medians per benchmark: merged (the slowest rank per sample) and each rank's own.
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sys, os
out = sys.argv[1]
for name in ("all_reduce", "all_gather"):
    r = json.load(open(os.path.join(out, f"benchmark_{name}.json")))
    print(f"{name}: {r['verdict']} on {r['device']} - {r['reason']}")
    for i, b in enumerate(r.get("benchmarks", [])):
        own = [round(x["benchmark_medians_ns"][i] / 1e3, 2) for x in r.get("ranks", [])]
        s = b["summary"]
        ref = b.get("reference_summary", {}).get("median_ns", 0)
        print(f"  bench {i} {b.get('spec')}: median {s['median_ns'] / 1e3:.2f} us (n {s['n']}, "
              f"IQR {s['iqr_ns'] / 1e3:.2f} us), ranks' own medians (us) {own}, "
              f"reference {ref / 1e3:.2f} us")
PY
uptime | tee -a "$out/host.txt"
echo "results in $out"
exit $status
