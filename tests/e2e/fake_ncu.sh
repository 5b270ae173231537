#!/bin/sh
# A stand-in for Nsight Compute's `ncu`, for profile mode on a machine without a GPU ($KJ_NCU
# names it). Called the two ways the judge calls ncu (src/judge/profile.cpp):
#   ncu [options] --export REPORT COMMAND...   writes REPORT.ncu-rep, then runs COMMAND
#   ncu --import REPORT.ncu-rep --page raw --csv   prints one kernel's metrics as ncu's CSV
# The report holds a marker line and the command's arguments, so a test can tell it came back.
set -eu
if [ "${1:-}" = "--import" ]; then
  head -n 1 "$2" | grep -q '^kj fake ncu report$' || { echo "==ERROR== not a report: $2"; exit 1; }
  echo '==PROF== Connected to process 42'
  echo '"ID","Kernel Name","gpu__time_duration.sum","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","sm__throughput.avg.pct_of_peak_sustained_elapsed","smsp__average_warp_latency_issue_stalled_long_scoreboard_per_warp_active.pct"'
  echo '"","","usecond","%","%","%"'
  echo '"0","fake_add_kernel(const float *, float *)","12.5","81.5","20.25","150.5"'
  exit 0
fi
report=
while [ $# -gt 0 ]; do
  case "$1" in
    --export) report=$2; shift 2 ;;
    --clock-control|--target-processes|--nvtx-include|--section) shift 2 ;;
    --nvtx|--force-overwrite) shift ;;
    *) break ;;
  esac
done
[ -n "$report" ] || { echo "fake ncu: no --export" >&2; exit 2; }
printf 'kj fake ncu report\nprofiled: %s\n' "$*" > "$report.ncu-rep"
exec "$@"
