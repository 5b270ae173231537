#!/usr/bin/env python3
"""Every file that declares a verdict on its first line gets exactly that verdict through `kj`.

Usage:
  declared_verdicts.py --kj KJ PROBLEMS_ROOT            # each problem: `kj problem check`
  declared_verdicts.py --kj KJ --problem DIR CORPUS_DIR  # each corpus file: `kj eval DIR FILE`

Corpus files may add directives on the comment lines after line 1:
  `# leaves: <pattern>`   after the run no process whose command line contains <pattern> may exist
                          on the host, and no host file /tmp/<pattern> either;
  `# mode: leaderboard`   judged in leaderboard mode (first benchmark only, short timing); also
                          `# mode: benchmark`;
  `# problem: <name>`     judged against problems/<name> (beside the --problem directory) instead;
  `# device: gpu`         needs a GPU: skipped ("skip (gpu-only)") unless `--gpu` (which also
                          passes `--device cuda:0`) or `--device cuda:N` is given;
  `# args: <options>`     more `kj eval` options, e.g. `--secret-seed 12345`; an option named here
                          replaces the same option of the run's defaults (`--timeout 20`...);
  `# reason: <text>`      the verdict's reason must contain <text>;
  `# max-speedup: <x>`    an accepted run must not be more than x times faster than the reference
                          timed beside it (a faked time would be).
--fail-on-flags: a file the static screen flags fails too (honest solutions must pass clean).
  declared_verdicts.py --kj KJ --honest PROBLEMS_ROOT DIR  # DIR/<problem>/*.py and every
      PROBLEMS_ROOT/*/solutions/correct/*.py, each judged against its problem, flags failing.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time


def check_problems(kj, root):
    passed = failed = 0
    for name in sorted(os.listdir(root)):
        problem = os.path.join(root, name)
        if not os.path.isfile(os.path.join(problem, "task.yml")):
            continue
        start = time.monotonic()
        proc = subprocess.run([kj, "problem", "check", problem, "--json"], capture_output=True, text=True)
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            print(f"FAIL {name}: kj problem check printed no JSON (exit {proc.returncode})\n{proc.stderr}")
            failed += 1
            continue
        for sol in report["solutions"]:
            ok = sol.get("ok", False)
            passed += ok
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}/{sol['file']}: declared {sol['declared']}, "
                  f"got {sol.get('verdict', sol.get('error'))} — {sol.get('reason', '')}")
        print(f"     {name}: {len(report['solutions'])} solutions in {time.monotonic() - start:.1f} s")
    return passed, failed


def leftovers(pattern):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if pattern in cmd and "declared_verdicts" not in cmd:
            found.append(f"pid {pid}: {cmd.strip()}")
    if os.path.exists(os.path.join("/tmp", pattern)):
        found.append(f"host file /tmp/{pattern}")
    return found


def directives(path):
    """Line 1's `expect:` and the `key: value` directives of the comment lines right after it."""
    found = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
        for line in f:
            if not line.startswith(("#", "//")):
                break
            text = line.lstrip("#/ ").rstrip("\n")
            key, sep, value = text.partition(":")
            if sep and key.strip() in ("leaves", "mode", "problem", "device", "reason", "max-speedup",
                                       "args"):
                found.setdefault(key.strip(), value.strip())
    found["expect"] = first.split("expect:", 1)[1].strip() if "expect:" in first else None
    return found


def wants_gpu(extra):
    return any(arg.startswith("cuda") for arg in extra) or "--device=cuda" in " ".join(extra)


GPU_ONLY = False  # --gpu-only: just the `# device: gpu` files


def check_corpus(kj, problem, corpus, extra, fail_on_flags=False, names=None):
    passed = failed = 0
    for name in names if names is not None else sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if not os.path.isfile(path) or not name.endswith((".py", ".cu")):
            continue
        found = directives(path)
        declared = found["expect"]
        if declared is None:
            print(f"FAIL {name}: no '# expect:' on line 1")
            failed += 1
            continue
        if found.get("device") == "gpu" and not wants_gpu(extra):
            print(f"skip (gpu-only) {name}: needs a GPU (pass --gpu or --device cuda:N)")
            continue
        if GPU_ONLY and found.get("device") != "gpu":
            continue
        leaves = found.get("leaves")
        mode = []
        if found.get("mode") in ("leaderboard", "benchmark"):
            mode = ["--mode", found["mode"], "--case", "0", "--max-repeats", "12", "--max-time", "1"]
        target = os.path.join(os.path.dirname(os.path.abspath(problem)), found["problem"]) \
            if "problem" in found else problem
        start = time.monotonic()
        own = found.get("args", "").split()
        # A file's own `# args:` win over the run's short defaults (an option is given once).
        given = {arg.split("=", 1)[0] for arg in own if arg.startswith("--")}
        rest, skip = [], False
        for i, arg in enumerate(extra):
            if skip:
                skip = False
                continue
            if arg.split("=", 1)[0] in given:
                skip = "=" not in arg and i + 1 < len(extra) and not extra[i + 1].startswith("--")
                continue
            rest.append(arg)
        proc = subprocess.run([kj, "eval", target, path, "--json", *mode, *own, *rest],
                              capture_output=True, text=True)
        elapsed = time.monotonic() - start
        result = {}
        try:
            result = json.loads(proc.stdout)
            verdict, reason = result["verdict"], result["reason"]
        except (ValueError, KeyError):
            verdict, reason = "no-json", proc.stderr[-500:]
        problems = []
        if verdict != declared:
            problems.append(f"declared {declared}, got {verdict} — {reason}")
        if "reason" in found and found["reason"] not in reason:
            problems.append(f"the reason does not say '{found['reason']}': {reason}")
        if "max-speedup" in found and verdict == "accepted":
            speedup = result.get("speedup")
            if not isinstance(speedup, (int, float)):
                problems.append("no speedup over the reference was reported")
            elif speedup > float(found["max-speedup"]):
                problems.append(f"{speedup:.1f}x faster than the reference (at most "
                                f"{found['max-speedup']}x): a faked time was ranked")
        health = result.get("gpu_health") or {}
        if health.get("checked") and not health.get("ok"):
            problems.append(f"the GPU was left unhealthy: {health.get('message')}")
        flags = [f"{f.get('rule')} (line {f.get('line')})" for f in result.get("screen", []) or []]
        if fail_on_flags and flags:
            problems.append("screen flags: " + ", ".join(flags))
        if leaves:
            time.sleep(0.2)
            problems += [f"left behind {x}" for x in leftovers(leaves)]
        if problems:
            failed += 1
            print(f"FAIL {name} ({elapsed:.1f} s): " + "; ".join(problems))
        else:
            passed += 1
            print(f"ok   {name} ({elapsed:.1f} s): {verdict} — {reason}")
    return passed, failed


def check_honest(kj, problems_root, honest, extra):
    """Every honest solution: accepted, and nothing flagged by the screen."""
    passed = failed = 0
    for name in sorted(os.listdir(problems_root)):
        problem = os.path.join(problems_root, name)
        if not os.path.isfile(os.path.join(problem, "task.yml")):
            continue
        on_gpu = any(arg.startswith("cuda") or arg.startswith("--device=cuda") for arg in extra)
        if not on_gpu and re.search(r'(?m)^lang:\s*["\']?cu\b', open(os.path.join(problem, "task.yml")).read()):
            # A lang: cu solution is compiled and then not run on a CPU host (kj problem check
            # covers that path); here an honest solution must be accepted, which needs a GPU.
            print(f"     {name}: lang: cu, runs only on a GPU (--gpu): skipped")
            continue
        for folder in (os.path.join(problem, "solutions", "correct"), os.path.join(honest, name)):
            if not os.path.isdir(folder):
                continue
            print(f"     {os.path.relpath(folder)}")
            p, f = check_corpus(kj, problem, folder, extra, fail_on_flags=True)
            passed += p
            failed += f
    return passed, failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problem", help="evaluate each file of PATH against this problem")
    parser.add_argument("--honest", metavar="PROBLEMS_ROOT",
                        help="PATH holds honest solutions in one folder per problem of PROBLEMS_ROOT")
    parser.add_argument("--fail-on-flags", action="store_true",
                        help="a file the static screen flags fails")
    parser.add_argument("--gpu", action="store_true",
                        help="also run `# device: gpu` files, on --device cuda:0 unless --device is given")
    parser.add_argument("--gpu-only", action="store_true",
                        help="only the `# device: gpu` files (implies --gpu)")
    parser.add_argument("path")
    args, extra = parser.parse_known_args()
    if args.gpu_only:
        global GPU_ONLY
        GPU_ONLY = args.gpu = True
    if args.gpu and not any(arg.startswith("--device") for arg in extra):
        extra += ["--device", "cuda:0"]
    if args.problem or args.honest:
        # Short limits keep the hostile runs fast; the verdicts do not depend on the values.
        for flag, value in (("--timeout", "20"), ("--memory-limit", "3072")):
            if flag not in extra:
                extra += [flag, value]
    if args.honest:
        passed, failed = check_honest(args.kj, args.honest, args.path, extra)
    elif args.problem:
        if os.path.isfile(args.path):
            passed, failed = check_corpus(args.kj, args.problem, os.path.dirname(args.path) or ".",
                                          extra, args.fail_on_flags, [os.path.basename(args.path)])
        else:
            passed, failed = check_corpus(args.kj, args.problem, args.path, extra, args.fail_on_flags)
    else:
        passed, failed = check_problems(args.kj, args.path)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
