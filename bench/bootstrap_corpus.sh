#!/usr/bin/env bash
# The bundled bootstrap corpus (datasets/bootstrap-corpus: 31 PyTorch functions and 6
# KernelBench-style modules) through `kj bootstrap` with its hand-written translations: every row
# verified by the judge and timed against PyTorch. On a GPU host the programs pick GPU-sized
# inputs; on the CPU (Triton's interpreter) small ones.
#
#   bench/bootstrap_corpus.sh [DEVICE] [OUT_DIR]     DEVICE: cuda:0 (default) or cpu
#   KJ_BOOTSTRAP_ARGS="--no-zygote" bench/... ...      more arguments for kj bootstrap
#   HARNESS=DIR bench/bootstrap_corpus.sh ...          another harness folder (an older
#                                                      checkout's harness/, for an A/B)
#   CONCURRENCY=N bench/bootstrap_corpus.sh ...        rows in flight (default 1 on a GPU: a
#                                                      timed evaluation has the GPU alone, but
#                                                      other rows' host work still moves its
#                                                      medians, docs/bootstrap.md; 2 on the CPU)
#
# Writes OUT_DIR/{functions,kernelbench}/{rows.jsonl,rows.parquet,summary.json} and prints a
# table of speedups, the rows verified per hour and where a row's time went (the median seconds
# of each step, from the journal). docs/bootstrap.md records the H200 figures.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
device="${1:-cuda:0}"
out="${2:-$root/bench/results/bootstrap-$(date -u +%Y%m%dT%H%M%S)}"
kj="${KJ:-$root/build/kj}"
python="${KJ_PYTHON:-$(cat "$root/build/harness-python" 2>/dev/null || command -v python3)}"
export KJ_PYTHON="$python"
corpus="$root/datasets/bootstrap-corpus"
translate="python3 $corpus/translate.py"
timing=(--max-repeats 200 --max-time 5)
concurrency="${CONCURRENCY:-1}"
if [ "$device" = cpu ]; then
  timing=(--max-repeats 5 --max-time 2)
  concurrency="${CONCURRENCY:-2}"
fi
mkdir -p "$out"
start_ns=$(date +%s%N)
for part in functions kernelbench; do
  input="$corpus/corpus.jsonl"
  [ "$part" = kernelbench ] && input="$corpus/kernelbench"
  "$kj" bootstrap "$input" --out "$out/$part" --translator-command "$translate" \
    --device "$device" --concurrency "$concurrency" --turns 1 "${timing[@]}" \
    --harness "${HARNESS:-$root/harness}" ${KJ_BOOTSTRAP_ARGS:-} || true
done
wall=$(( ($(date +%s%N) - start_ns) / 1000000 ))e-3  # seconds (no bc on some GPU hosts)
"$python" - "$out" "$wall" "$concurrency" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
wall, concurrency = float(sys.argv[2]), sys.argv[3]
print(f"{'row':40} {'verdict':15} {'PyTorch':>12} {'Triton':>12} {'speedup':>8}")
for part in ("functions", "kernelbench"):
    for line in (out / part / "rows.jsonl").read_text().splitlines():
        r = json.loads(line)
        t = r["timings"][0] if r.get("timings") else {}
        us = lambda ns: f"{ns / 1000:.1f} us" if ns else "-"
        speedup = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
        print(f"{r['row_id']:40} {r['verdict']:15} {us(t.get('reference_median_ns')):>12} "
              f"{us(t.get('median_ns')):>12} {speedup:>8}")
    print(part, json.dumps(json.loads((out / part / "summary.json").read_text())))
rows = [json.loads(line) for part in ("functions", "kernelbench")
        for line in (out / part / "journal.jsonl").read_text().splitlines() if line.strip()]
accepted = sum(r.get("verdict") == "accepted" for r in rows)
print(f"{len(rows)} rows ({accepted} accepted) in {wall:.0f} s at concurrency {concurrency}: "
      f"{len(rows) / wall * 3600:.0f} rows/h, {wall / max(1, len(rows)):.1f} s a row")
steps = {}
for r in rows:
    for step, seconds in r.get("elapsed_s", {}).items():
        steps.setdefault(step, []).append(seconds)
print("median seconds per row: " + ", ".join(
    f"{step} {statistics.median(v):.1f}" for step, v in steps.items()))
PY
