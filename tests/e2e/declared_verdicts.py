#!/usr/bin/env python3
"""Every file that declares a verdict on its first line gets exactly that verdict through `kj`.

Usage:
  declared_verdicts.py --kj KJ PROBLEMS_ROOT            # each problem: `kj problem check`
      [--except NAME]...                                 # ... but these
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
                          replaces the same option of the run's defaults (`--timeout 20` for
                          a file declaring time_limit, else 60; `--memory-limit 3072`);
  `# reason: <text>`      the verdict's reason must contain <text>;
  `# max-speedup: <x>`    an accepted run must not be more than x times faster than the reference
                          timed beside it (a faked time would be);
  `# open-hole: <why>`    a hole of in-process timing (docs/security.md, "What cannot hold"):
                          where the run was timed in the submission's process (every benchmark's
                          `timing` is in_process: a CPU, or sealing off), the file must get its
                          declared verdict and be ranked *more* than its `# max-speedup:` faster
                          than the reference, which proves the attack still works there; where
                          every benchmark was sealed (a GPU), the bound must hold, which proves
                          sealed timing closes it;
  `# alone: <why>`        judged with nothing else beside it: no other run of this script, and
                          in ctest no other test (e2e_hostile_alone is RUN_SERIAL). A file that
                          declares `# max-speedup:` runs alone too: load beside it skews the
                          comparison with the reference.
--fail-on-flags: a file the static screen flags fails too (honest solutions must pass clean).
--daemons: every file judged through `kj daemon`, one daemon per job: a whole corpus forked run
  after run from the same zygotes, as a CPU worker of kj serve forks it. A run the daemon passed
  over to a cold start fails; a file whose `# args:` the daemon does not judge with is judged by
  kj eval itself, and its line says so.
--jobs N: up to N runs (or problems, without --problem) at once; an `# alone:` file by itself.
--alone only|skip: judge just the files that run alone, or all but them (default: all).
  declared_verdicts.py --kj KJ --honest PROBLEMS_ROOT DIR  # DIR/<problem>/*.py and every
      PROBLEMS_ROOT/*/solutions/correct/*.py, each judged against its problem, flags failing.
"""

import argparse
import collections
import json
import os
import queue
import shutil
import re
import subprocess
import tempfile
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor


def check_problem(kj, root, name):
    """`kj problem check` of one problem: (passed, failed, report lines)."""
    problem = os.path.join(root, name)
    start = time.monotonic()
    proc = subprocess.run([kj, "problem", "check", problem, "--json"], capture_output=True, text=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return 0, 1, [f"FAIL {name}: kj problem check printed no JSON (exit {proc.returncode})\n{proc.stderr}"]
    passed = failed = 0
    lines = []
    for sol in report["solutions"]:
        ok = sol.get("ok", False)
        passed += ok
        failed += not ok
        lines.append(f"{'ok  ' if ok else 'FAIL'} {name}/{sol['file']}: declared {sol['declared']}, "
                     f"got {sol.get('verdict', sol.get('error'))} — {sol.get('reason', '')}")
    lines.append(f"     {name}: {len(report['solutions'])} solutions in {time.monotonic() - start:.1f} s")
    return passed, failed, lines


def check_problems(kj, root, skipped=()):
    names = [name for name in sorted(os.listdir(root))
             if os.path.isfile(os.path.join(root, name, "task.yml")) and name not in skipped]
    passed = failed = 0
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        for p, f, lines in pool.map(lambda name: check_problem(kj, root, name), names):
            passed += p
            failed += f
            print("\n".join(lines), flush=True)
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
                                       "open-hole",
                                       "args", "alone"):
                found.setdefault(key.strip(), value.strip())
    found["expect"] = first.split("expect:", 1)[1].strip() if "expect:" in first else None
    return found


def all_sealed(result: dict) -> bool:
    """Every timed benchmark of the run was a sealed replay (docs/sealed-timing.md)."""
    timed = [b for b in result.get("benchmarks") or [] if b.get("samples_ns")]
    return bool(timed) and all(b.get("timing") == "sealed" for b in timed)


def wants_gpu(extra):
    return any(arg.startswith("cuda") for arg in extra) or "--device=cuda" in " ".join(extra)


GPU_ONLY = False  # --gpu-only: just the `# device: gpu` files
JOBS = 1  # --jobs: runs at once
TIME_LIMIT_TIMEOUT = 20.0  # --time-limit-timeout: the wall limit of a file declaring time_limit
DAEMONS = None  # --daemons: a queue of the daemons' sockets, one taken per run
ALONE = "all"  # --alone: "only" the files that run alone, "skip" them, or "all"


def runs_alone(found):
    return "alone" in found or "max-speedup" in found


class Runs:
    """At most JOBS runs at once; a run that must be alone waits for the others and holds them off."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.running = 0
        self.alone = False
        self.cond = threading.Condition()

    def hold(self, alone):
        with self.cond:
            self.cond.wait_for(lambda: not self.alone and
                               (self.running == 0 if alone else self.running < self.jobs))
            self.running += 1
            self.alone = alone

    def release(self):
        with self.cond:
            self.running -= 1
            self.alone = False
            self.cond.notify_all()


def corpus_cases(problem, corpus, extra, names=None):
    """The files of CORPUS to judge against PROBLEM: ([(problem, name, path, directives)], failed)."""
    cases, failed = [], 0
    for name in names if names is not None else sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if not os.path.isfile(path) or not name.endswith((".py", ".cu")):
            continue
        found = directives(path)
        if found["expect"] is None:
            print(f"FAIL {name}: no '# expect:' on line 1")
            failed += 1
            continue
        if found.get("device") == "gpu" and not wants_gpu(extra):
            print(f"skip (gpu-only) {name}: needs a GPU (pass --gpu or --device cuda:N)")
            continue
        if GPU_ONLY and found.get("device") != "gpu":
            continue
        if ALONE == "skip" and runs_alone(found):
            print(f"skip (alone) {name}: runs by itself (--alone only)")
            continue
        if ALONE == "only" and not runs_alone(found):
            continue
        cases.append((problem, name, path, found))
    return cases, failed


def waits(found):
    """A run declared to end at the wall-clock limit: it mostly waits for it."""
    return found["expect"] == "time_limit" and not runs_alone(found)


def check_cases(kj, cases, extra, fail_on_flags=False, headings=None):
    """Judges every case in JOBS lanes; prints one line per case in the cases' order, each after
    the lines headings[i] names, if any. With more than one lane, the first takes the runs that
    wait for the wall-clock limit, so the others' work goes on beside them rather than two waits
    side by side; a lane whose queue is empty helps the others. Runs that must be alone go last."""
    order = sorted(range(len(cases)), key=lambda i: runs_alone(cases[i][3]))
    queues = (collections.deque(i for i in order if waits(cases[i][3])),
              collections.deque(i for i in order if not waits(cases[i][3])))
    if JOBS == 1:
        queues = (collections.deque(order), collections.deque())
    results = [Future() for _ in cases]
    runs, lock = Runs(JOBS), threading.Lock()

    def lane(prefer):
        while True:
            with lock:
                queue = queues[prefer] or queues[1 - prefer]
                if not queue:
                    return
                i = queue.popleft()
            try:
                results[i].set_result(check_file(kj, *cases[i], extra, fail_on_flags, runs))
            except BaseException as exc:  # reported by the reader below
                results[i].set_exception(exc)

    lanes = [threading.Thread(target=lane, args=(0 if n == 0 else 1,), daemon=True)
             for n in range(JOBS)]
    for thread in lanes:
        thread.start()
    passed = failed = 0
    for i in range(len(cases) + 1):
        for heading in (headings or {}).get(i, []):
            print(heading)
        if i == len(cases):
            break
        ok, line = results[i].result()
        passed += ok
        failed += not ok
        print(line, flush=True)
    for thread in lanes:
        thread.join()
    return passed, failed


def check_corpus(kj, problem, corpus, extra, fail_on_flags=False, names=None):
    cases, failed = corpus_cases(problem, corpus, extra, names)
    passed, more = check_cases(kj, cases, extra, fail_on_flags)
    return passed, failed + more


def check_file(kj, problem, name, path, found, extra, fail_on_flags, runs):
    """One `kj eval` of a file and every check its directives ask for: (ok, report line)."""
    declared = found["expect"]
    leaves = found.get("leaves")
    mode = []
    if found.get("mode") in ("leaderboard", "benchmark"):
        # A file whose speedup over the reference is checked gets enough samples for a stable
        # median: with 12 on a CPU, an honest run was once 4.5x "faster" than the reference
        # timed beside it (its samples spread 0.09-7.8 ms); with 200 it is 0.9-1.2x.
        samples = ["200", "--max-time", "2"] if "max-speedup" in found else ["12", "--max-time", "1"]
        mode = ["--mode", found["mode"], "--case", "0", "--max-repeats", *samples]
    target = os.path.join(os.path.dirname(os.path.abspath(problem)), found["problem"]) \
        if "problem" in found else problem
    own = found.get("args", "").split()
    if not any(arg.split("=", 1)[0] == "--timeout" for arg in own + extra):
        # A short wall limit keeps the runs that must reach it fast; the others get a margin for
        # a loaded machine (the verdicts do not depend on the values).
        own += ["--timeout", f"{TIME_LIMIT_TIMEOUT:g}" if declared == "time_limit" else "60"]
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
    runs.hold(alone=runs_alone(found))
    socket = DAEMONS.get() if DAEMONS is not None else None
    try:
        start = time.monotonic()
        daemon = ["--daemon-socket", socket] if socket else ["--no-daemon"]
        proc = subprocess.run([kj, "eval", target, path, "--json", *mode, *own, *rest, *daemon],
                              capture_output=True, text=True)
        elapsed = time.monotonic() - start
    finally:
        if socket:
            DAEMONS.put(socket)
        runs.release()
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
    if "open-hole" in found and "max-speedup" not in found:
        problems.append("`# open-hole:` without `# max-speedup:`: nothing says the hole is open")
    if "max-speedup" in found and verdict == "accepted":
        speedup = result.get("speedup")
        if not isinstance(speedup, (int, float)):
            problems.append("no speedup over the reference was reported")
        elif "open-hole" in found and not all_sealed(result):
            if speedup <= float(found["max-speedup"]):
                problems.append(f"an open hole that no longer gets through: {speedup:.1f}x, not "
                                f"more than {found['max-speedup']}x (remove `# open-hole:` if "
                                f"it is closed)")
        elif speedup > float(found["max-speedup"]):
            problems.append(f"{speedup:.1f}x faster than the reference (at most "
                            f"{found['max-speedup']}x): a faked time was ranked")
    # `--zygote` (passed on to kj eval): a run the zygote passed over was not checked on that path.
    zygote_warnings = [w for w in (result.get("sandbox") or {}).get("warnings", []) or []
                       if w.startswith("zygote")]
    if "--zygote" in [*own, *rest] and zygote_warnings:
        problems.append(f"not forked from the zygote: {zygote_warnings[0]}")
    note = ""
    if socket:
        if "judged by the kj daemon" in proc.stderr:
            if zygote_warnings:
                problems.append(f"not forked from the daemon's zygote: {zygote_warnings[0]}")
        elif "judged here, not by the kj daemon" in proc.stderr:
            note = " [judged by kj eval: " + proc.stderr.split("not by the kj daemon: ")[1].split(
                "\n")[0] + "]"
        else:
            problems.append("not judged by the daemon: " + proc.stderr[-300:])
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
        return False, f"FAIL {name} ({elapsed:.1f} s): " + "; ".join(problems)
    return True, f"ok   {name} ({elapsed:.1f} s): {verdict} — {reason}{note}"


def check_honest(kj, problems_root, honest, extra):
    """Every honest solution: accepted, and nothing flagged by the screen."""
    cases, headings, failed = [], {}, 0
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
            found, f = corpus_cases(problem, folder, extra)
            headings.setdefault(len(cases), []).append(f"     {os.path.relpath(folder)}")
            cases += found
            failed += f
    passed, more = check_cases(kj, cases, extra, fail_on_flags=True, headings=headings)
    return passed, failed + more


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
    parser.add_argument("--except", dest="skipped", action="append", default=[], metavar="PROBLEM",
                        help="without --problem: leave out this problem (another test checks it)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--alone", choices=("all", "only", "skip"), default="all",
                        help="only the files that run alone (`# alone:`, `# max-speedup:`), or "
                             "all but them")
    parser.add_argument("--daemons", action="store_true",
                        help="judge through kj daemon, one per job (corpus files only)")
    parser.add_argument("--time-limit-timeout", type=float, default=20,
                        help="the wall limit for a file that declares time_limit (default 20 s)")
    parser.add_argument("path")
    args, extra = parser.parse_known_args()
    global GPU_ONLY, JOBS, ALONE, TIME_LIMIT_TIMEOUT
    JOBS = max(1, args.jobs)
    ALONE = args.alone
    TIME_LIMIT_TIMEOUT = args.time_limit_timeout
    if args.gpu_only:
        GPU_ONLY = args.gpu = True
    if args.gpu and not any(arg.startswith("--device") for arg in extra):
        extra += ["--device", "cuda:0"]
    if args.problem or args.honest:
        if "--memory-limit" not in extra:
            extra += ["--memory-limit", "3072"]
    if args.honest:
        passed, failed = check_honest(args.kj, args.honest, args.path, extra)
    elif args.problem:
        daemons = start_daemons(args.kj, extra) if args.daemons else []
        try:
            passed, failed = check_corpus_path(args, extra)
        finally:
            failed += stop_daemons(args.kj, daemons)
    else:
        passed, failed = check_problems(args.kj, args.path, args.skipped)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def check_corpus_path(args, extra):
    """The corpus (a folder, or one file of it) against --problem."""
    if os.path.isfile(args.path):
        return check_corpus(args.kj, args.problem, os.path.dirname(args.path) or ".", extra,
                            args.fail_on_flags, [os.path.basename(args.path)])
    return check_corpus(args.kj, args.problem, args.path, extra, args.fail_on_flags)


def start_daemons(kj, extra):
    """One `kj daemon` per job, judging with the runs' memory limit and device; their sockets go
    in DAEMONS."""
    global DAEMONS
    settings = []
    for option in ("--memory-limit", "--device", "--python", "--harness"):
        if option in extra:
            settings += [option, extra[extra.index(option) + 1]]
    home = tempfile.mkdtemp(prefix="kj-verdicts-daemons-")
    DAEMONS = queue.Queue()
    daemons = []
    for n in range(JOBS):
        socket = os.path.join(home, f"daemon-{n}.sock")
        proc = subprocess.Popen([kj, "daemon", "--socket", socket, *settings],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = proc.stdout.readline()
        if "listening on" not in line:
            raise SystemExit("kj daemon did not start: " + line + proc.stdout.read())
        daemons.append((proc, socket))
        DAEMONS.put(socket)
    return daemons


def stop_daemons(kj, daemons):
    """Stops each daemon; a daemon that does not end cleanly (exit 0) is a failure."""
    failed = 0
    for proc, socket in daemons:
        subprocess.run([kj, "daemon", "stop", "--socket", socket], capture_output=True, timeout=60)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        rest = proc.stdout.read()
        served = rest.split("stopped after ")[1].split()[0] if "stopped after " in rest else "?"
        if code != 0:
            failed += 1
            print(f"FAIL kj daemon at {socket} ended with {code}: {rest[-500:]}")
        else:
            print(f"     kj daemon at {socket} stopped cleanly after {served} call(s)")
    if daemons:
        shutil.rmtree(os.path.dirname(daemons[0][1]), ignore_errors=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
