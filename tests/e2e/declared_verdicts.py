#!/usr/bin/env python3
"""Every file that declares a verdict on its first line gets exactly that verdict through `kj`.

Usage:
  declared_verdicts.py --kj KJ PROBLEMS_ROOT            # each problem: `kj problem check`
  declared_verdicts.py --kj KJ --problem DIR CORPUS_DIR  # each corpus file: `kj eval DIR FILE`

Corpus files may add, on their second line, `# leaves: <pattern>`: after the run no process whose
command line contains <pattern> may exist on the host, and no host file /tmp/<pattern> either; or
`# mode: leaderboard`: judged in leaderboard mode (first benchmark only, short timing).
"""

import argparse
import json
import os
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


def check_corpus(kj, problem, corpus, extra):
    passed = failed = 0
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if not os.path.isfile(path) or not name.endswith((".py", ".cu")):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [f.readline(), f.readline()]
        if "expect:" not in lines[0]:
            print(f"FAIL {name}: no '# expect:' on line 1")
            failed += 1
            continue
        declared = lines[0].split("expect:", 1)[1].strip()
        leaves = lines[1].split("leaves:", 1)[1].strip() if "leaves:" in lines[1] else None
        mode = ["--mode", "leaderboard", "--case", "0", "--max-repeats", "12", "--max-time", "1"] \
            if "mode: leaderboard" in lines[1] else []
        start = time.monotonic()
        proc = subprocess.run([kj, "eval", problem, path, "--json", *mode, *extra], capture_output=True,
                              text=True)
        elapsed = time.monotonic() - start
        try:
            result = json.loads(proc.stdout)
            verdict, reason = result["verdict"], result["reason"]
        except (ValueError, KeyError):
            verdict, reason = "no-json", proc.stderr[-500:]
        problems = []
        if verdict != declared:
            problems.append(f"declared {declared}, got {verdict} — {reason}")
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problem", help="evaluate each file of PATH against this problem")
    parser.add_argument("path")
    args, extra = parser.parse_known_args()
    if args.problem:
        # Short limits keep the hostile runs fast; the verdicts do not depend on the values.
        for flag, value in (("--timeout", "20"), ("--memory-limit", "3072")):
            if flag not in extra:
                extra += [flag, value]
        passed, failed = check_corpus(args.kj, args.problem, args.path, extra)
    else:
        passed, failed = check_problems(args.kj, args.path)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
