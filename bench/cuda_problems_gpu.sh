#!/usr/bin/env bash
# On a GPU host: the lang: cu problems judged for real (every declared verdict), their correct
# solutions timed, profile mode on a Triton and a CUDA submission, and, when a KernelBench
# checkout's level-1 folder is given, a PyTorch-only subset through bench/kernelbench.py.
#   bench/cuda_problems_gpu.sh [build/kj] [cuda:0] [path/to/KernelBench/KernelBench/level1]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kj="${1:-$root/build/kj}"
device="${2:-cuda:0}"
level1="${3:-}"
out="${KJ_RESULTS_DIR:-$root/build/cuda-problems-results}"
mkdir -p "$out"
status=0
run() {
  echo "\$ $*"
  "$@" || status=1
}
for p in vectoradd_cu vectorsum_cu; do
  run "$kj" problem check "$root/problems/$p" --device "$device"
done
run "$kj" eval "$root/problems/vectoradd_cu" "$root/problems/vectoradd_cu/solutions/correct/float4.cu" \
  --device "$device" --mode benchmark
run "$kj" eval "$root/problems/vectorsum_cu" "$root/problems/vectorsum_cu/solutions/correct/warp_shuffle.cu" \
  --device "$device" --mode benchmark
run "$kj" eval "$root/problems/vectoradd_triton" "$root/problems/vectoradd_triton/solutions/correct/triton.py" \
  --device "$device" --mode profile
"$kj" eval "$root/problems/vectoradd_triton" "$root/problems/vectoradd_triton/solutions/correct/triton.py" \
  --device "$device" --mode profile --json > "$out/profile_triton.json"
run "$kj" eval "$root/problems/vectoradd_cu" "$root/problems/vectoradd_cu/solutions/correct/float4.cu" \
  --device "$device" --mode profile
"$kj" eval "$root/problems/vectoradd_cu" "$root/problems/vectoradd_cu/solutions/correct/float4.cu" \
  --device "$device" --mode profile --json > "$out/profile_cuda.json"
if [ -n "$level1" ]; then
  run python3 "$root/bench/kernelbench.py" --kj "$kj" --device "$device" --max-time 5 --first 15 \
    --json "$out/kernelbench_level1.json" "$level1"
fi
echo "results in $out"
exit $status
