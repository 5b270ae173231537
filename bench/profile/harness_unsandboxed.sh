#!/usr/bin/env bash
# The judge's harness on the bundled Triton vectoradd, profile-style (first benchmark case, one
# sample, inside the `kj_profile` range), run directly without the sandbox, optionally under ncu:
# tells a problem of the harness under Nsight Compute from one of the sandbox.
#
#   bench/profile/harness_unsandboxed.sh OUT_DIR [DEVICE] [--no-ncu]    (DEVICE: cuda:0, or cpu)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: harness_unsandboxed.sh OUT_DIR [DEVICE] [--no-ncu]}"
device="${2:-cuda:0}"
python="${KJ_PYTHON:-python3}"
mkdir -p "$out"
task="$(mktemp -d)"
trap 'rm -rf "$task"' EXIT
problems="$root/problems"
cp "$problems/vectoradd/task.py" "$problems/utils.py" "$problems/vectoradd/reference.py" "$task/"
cp "$problems/vectoradd_triton/solutions/correct/triton.py" "$task/submission.py"
mkdir -p "$task/work"
cat > "$task/job.json" <<JSON
{"protocol": 1, "mode": "benchmark", "device": "$device", "task_dir": "$task", "workdir": "$task/work",
 "result_fd": 3, "tests": [], "benchmarks": [{"seed": 31232, "size": 1024}],
 "timing": {"max_samples": 1, "min_samples": 1, "graph_below_ns": 0}, "time_reference": false,
 "kernel_language": "triton"}
JSON
wrap=()
if [ "${3:-}" != --no-ncu ] && [ "$device" != cpu ]; then
  ncu="${KJ_NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}"
  wrap=("$ncu" --clock-control none --target-processes all --nvtx --nvtx-include kj_profile/
        --section SpeedOfLight --force-overwrite --export "$out/profile")
fi
[ "$device" = cpu ] && export TRITON_INTERPRET=1
cd "$task"
tr -d '\n' < job.json > job.line && echo >> job.line
KJ_PROFILE=1 PYTHONPATH="$root/harness" timeout "${LIMIT_S:-60}" "${wrap[@]}" "$python" -m kj_harness \
  < job.line 3> "$out/result.jsonl" > "$out/stdout.txt" 2> "$out/stderr.txt" && rc=0 || rc=$?
echo "harness exit $rc; report: $(ls "$out"/*.ncu-rep 2>/dev/null || echo none)"
tail -3 "$out/result.jsonl"
