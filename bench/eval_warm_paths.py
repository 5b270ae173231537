#!/usr/bin/env python3
"""`kj eval` on its warm paths against itself without them, paired in one sitting.

  compile-cache: the same file judged again with the compile cache (a fresh $KJ_COMPILE_CACHE,
                 filled by one run first) and with --no-compile-cache, alternating;
  daemon:        the same file judged through a `kj daemon` started for the bench and with
                 --no-daemon, alternating.

Each run's wall time is taken around the whole `kj eval` process. Prints per path the median,
min and max, the median of the paired ratios, and for the compile cache how many cached runs
restored files and rebuilt nothing (the hit rate). Every run must get the verdict the first one
got; the bench stops otherwise.

Usage: eval_warm_paths.py --kj KJ --problem DIR --submission FILE --part compile-cache|daemon
       [--runs N] [-- KJ_EVAL_OPTIONS...]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, env):
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - start
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        sys.exit(f"no JSON from {' '.join(cmd)}:\n{proc.stderr[-2000:]}")
    return wall, result, proc.stderr


def summary(name, walls):
    return (f"{name:<34} median {statistics.median(walls):7.3f} s   "
            f"min {min(walls):7.3f}   max {max(walls):7.3f}   (n={len(walls)})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--part", choices=("compile-cache", "daemon"), required=True)
    parser.add_argument("--runs", type=int, default=5)
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    tmp = tempfile.mkdtemp(prefix="kj-bench-warm-")
    env = dict(os.environ, KJ_COMPILE_CACHE=os.path.join(tmp, "cache"))
    base = [args.kj, "eval", args.problem, args.submission, "--json", *extra]
    daemon = None
    try:
        if args.part == "compile-cache":
            warm_cmd = base + ["--no-daemon"]
            cold_cmd = base + ["--no-daemon", "--no-compile-cache"]
            names = ("with the compile cache", "--no-compile-cache")
        else:
            socket = os.path.join(tmp, "daemon.sock")
            settings = [a for i, a in enumerate(extra)
                        if a in ("--device", "--python", "--harness", "--memory-limit")
                        or (i > 0 and extra[i - 1] in ("--device", "--python", "--harness",
                                                        "--memory-limit"))]
            daemon = subprocess.Popen([args.kj, "daemon", "--socket", socket, *settings],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
            line = daemon.stdout.readline()
            if "listening on" not in line:
                sys.exit("kj daemon did not start: " + line + daemon.stdout.read())
            warm_cmd = base + ["--daemon-socket", socket, "--no-compile-cache"]
            cold_cmd = base + ["--no-daemon", "--no-compile-cache"]
            names = ("through kj daemon", "--no-daemon")
        # One run of each first, not counted: fills the cache, lets the daemon's zygote start.
        _, first, _ = run(warm_cmd, env)
        verdict = first["verdict"]
        run(cold_cmd, env)
        warm, cold, ratios, hits = [], [], [], 0
        for _ in range(args.runs):
            w, result, stderr = run(warm_cmd, env)
            c, other, _ = run(cold_cmd, env)
            for r in (result, other):
                if r["verdict"] != verdict:
                    sys.exit(f"verdict {r['verdict']} after {verdict}: {r['reason']}")
            if args.part == "daemon" and "judged by the kj daemon" not in stderr:
                sys.exit("a run was not judged by the daemon:\n" + stderr[-1000:])
            cache = result.get("compile_cache") or {}
            hits += cache.get("restored", 0) > 0 and cache.get("reported", 1) == 0
            warm.append(w)
            cold.append(c)
            ratios.append(w / c)
        print(f"{args.submission} ({verdict}), {args.runs} pairs, {' '.join(extra)}")
        print(summary(names[0], warm))
        print(summary(names[1], cold))
        print(f"paired ratio {names[0]} / {names[1]}: median {statistics.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
        if args.part == "compile-cache":
            print(f"cache hits (files restored, nothing rebuilt): {hits} of {args.runs}")
    finally:
        if daemon is not None:
            subprocess.run([args.kj, "daemon", "stop", "--socket", socket], env=env,
                           capture_output=True, timeout=60)
            daemon.wait(timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
