#!/usr/bin/env bash
# Runs a reference-kernels problem's own eval.py (test mode) on one submission, laid out as its
# task.yml says, to compare its verdict with kj's. Usage: scripts/upstream-eval.sh PROBLEM SUBMISSION
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
problem="$(cd "$1" && pwd)"; submission="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$root/build/kj" problem show "$problem" | python3 -c '
import json, shutil, sys, os
shown = json.load(sys.stdin); problem, submission, tmp = sys.argv[1:4]
for f in shown["files"]:
    shutil.copy(submission if f["source"] == "@SUBMISSION@" else os.path.join(problem, f["source"]), os.path.join(tmp, f["name"]))
with open(os.path.join(tmp, "tests.txt"), "w") as out:
    for t in shown["tests"]:
        out.write("; ".join(f"{k}: {v}" for k, v in t.items()) + "\n")
' "$problem" "$submission" "$tmp"
cd "$tmp" && POPCORN_FD=3 "${KJ_PYTHON:-python3}" eval.py test tests.txt 3>&1 >/dev/null 2>&1 | grep -E "^(check|test\.[0-9]+\.(status|error))" || true
