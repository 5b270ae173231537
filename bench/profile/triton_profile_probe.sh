#!/usr/bin/env bash
# On a GPU host with Nsight Compute: how ncu treats a Triton kernel, from the plainest case to the
# judge's. Each step has a time limit; a step still running at half of it has its process tree
# and each process's kernel stack written down, so a hang shows where it waits.
#
#   bench/profile/triton_profile_probe.sh OUT_DIR [KJ]      (KJ: the kj binary, default build/kj)
#   STEPS="6 7" bench/profile/triton_profile_probe.sh ...   only those steps
#
# Steps: (1) a plain Triton script in one process, cold compile cache; (2) the same after a fork
# without exec (as the judge's runner is started), cold cache; (3) the fork with the cache filled
# beforehand without ncu; (4) the fork with a parent that holds a CUDA context too (as the
# judge's checker does); (5) the fork with 8 GiB of device memory held by the child; (6) kj eval
# --mode profile on the bundled Triton vectoradd (its stderr has the harness's Python stacks
# every 20 s while it runs); (7) kj eval --mode profile on the bundled lang: cu vectoradd;
# (8) the fork whose child closes the descriptors it did not start with, as the judge's runner
# does; (9) the fork from a non-dumpable parent, as the judge's runner is; (10) the fork after
# the parent ran a CPU operator and set torch's deterministic flag, as the judge's harness does.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: triton_profile_probe.sh OUT_DIR [KJ]}"
kj="${2:-$root/build/kj}"
python="${KJ_PYTHON:-python3}"
mkdir -p "$out"
ncu="${KJ_NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}"
script="$root/bench/profile/triton_under_ncu.py"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

snapshot() {  # snapshot FILE PID: the process tree under PID, states and kernel stacks
  local file="$1" top="$2"
  {
    echo "## $(date -u +%T) tree under $top"
    ps -eo pid,ppid,stat,wchan:32,etimes,args --forest | awk -v top="$top" '
      NR == 1 { print; next }
      { ppid[$1] = $2; line[$1] = $0; order[NR] = $1 }
      END { for (i = 2; i <= NR; i++) { p = order[i]; q = p
              while (q != "" && q != top && q != 1 && q != 0) q = ppid[q]
              if (q == top) print line[p] } }'
    for pid in $(pgrep -g "$(ps -o pgid= "$top" | tr -d ' ')" 2>/dev/null); do
      echo "### $pid $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-150)"
      grep -E '^(State|Threads)' /proc/$pid/status 2>/dev/null
      for task in /proc/$pid/task/*; do
        echo "task ${task##*/}: $(cat $task/wchan 2>/dev/null) $(head -3 $task/stack 2>/dev/null | tr '\n' '|')"
      done
    done
  } >> "$file" 2>&1
}

step() {  # step NAME LIMIT_S COMMAND...: runs it with a limit, snapshots it at half the limit
  local name="$1" limit="$2"; shift 2
  [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" ${name%%-*} "* ]] || return 0
  local log="$out/$name.log" start rc
  echo "== $name: $*" | tee -a "$out/summary.txt"
  start=$(date +%s%N)
  setsid "$@" > "$log" 2>&1 &
  local pid=$!
  ( sleep $((limit / 2)); kill -0 $pid 2>/dev/null && snapshot "$out/$name.stuck.txt" $pid ) &
  local watcher=$!
  ( sleep "$limit"; kill -0 $pid 2>/dev/null && { snapshot "$out/$name.stuck.txt" $pid;
      kill -KILL -- -$pid; } ) &
  local killer=$!
  wait $pid; rc=$?
  kill $watcher $killer 2>/dev/null; wait $watcher $killer 2>/dev/null
  printf '   rc %s after %d ms%s\n' "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))" \
    "$([ -f "$out/$name.stuck.txt" ] && echo ' (snapshot taken: still running at half the limit)')" \
    | tee -a "$out/summary.txt"
}

{
  echo "# $(date -u) $(hostname)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$ncu" --version | tail -1
  "$python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"

wrap=("$ncu" --clock-control none --target-processes all --nvtx --nvtx-include kj_profile/
      --section SpeedOfLight --force-overwrite)
TRITON_CACHE_DIR="$scratch/c1" step 1-direct-cold 60 "${wrap[@]}" --export "$scratch/r1" "$python" "$script" direct
TRITON_CACHE_DIR="$scratch/c2" step 2-fork-cold 60 "${wrap[@]}" --export "$scratch/r2" "$python" "$script" fork
[ -z "${STEPS:-}" ] || [[ " $STEPS " == *" 3 "* ]] &&
  TRITON_CACHE_DIR="$scratch/c3" "$python" "$script" fork > "$out/3-fill-cache.log" 2>&1
TRITON_CACHE_DIR="$scratch/c3" step 3-fork-warm 60 "${wrap[@]}" --export "$scratch/r3" "$python" "$script" fork
TRITON_CACHE_DIR="$scratch/c4" step 4-fork-both 60 "${wrap[@]}" --export "$scratch/r4" "$python" "$script" both
TRITON_CACHE_DIR="$scratch/c5" step 5-fork-big 60 "${wrap[@]}" --export "$scratch/r5" "$python" "$script" big
TRITON_CACHE_DIR="$scratch/c8" step 8-fork-closefds 45 "${wrap[@]}" --export "$scratch/r8" "$python" "$script" closefds
TRITON_CACHE_DIR="$scratch/c9" step 9-fork-nondump 45 "${wrap[@]}" --export "$scratch/r9" "$python" "$script" nondump
TRITON_CACHE_DIR="$scratch/c10" step 10-fork-cpuop 40 "${wrap[@]}" --export "$scratch/r10" "$python" "$script" cpuop
for r in r1 r2 r3 r4 r5 r8 r9 r10; do
  [ -f "$scratch/$r.ncu-rep" ] && echo "$r: report $(stat -c %s "$scratch/$r.ncu-rep") bytes" || echo "$r: no report"
done | tee -a "$out/summary.txt"
step 6-kj-profile 130 "$kj" eval "$root/problems/vectoradd_triton" \
  "$root/problems/vectoradd_triton/solutions/correct/triton.py" --mode profile --device cuda:0 \
  --python "$python" --timeout "${KJ_TIMEOUT:-100}" --json
step 7-kj-profile-cu 120 "$kj" eval "$root/problems/vectoradd_cu" \
  "$root/problems/vectoradd_cu/solutions/correct/float4.cu" --mode profile --device cuda:0 \
  --python "$python" --timeout 100 --json
