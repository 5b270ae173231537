#!/usr/bin/env python3
"""`kj daemon` end to end (docs/sandbox.md, "kj daemon"):

- kj eval sends its calls to a running daemon and says so: verdicts and exit codes as when judged
  locally (accepted, wrong_answer, a hostile file's declared verdict, a bad problem folder), each
  run forked from the daemon's zygote (no sandbox warning), the daemon alive after each;
- a call with another memory limit, or --no-daemon, is judged by kj eval itself;
- a second daemon on the same socket is refused; `kj daemon stop` and SIGTERM each end a daemon
  cleanly: exit 0, the socket removed, its zygote gone.

Usage: daemon_test.py --kj KJ --root REPO
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time


class Daemon:
    def __init__(self, kj, socket, env):
        self.proc = subprocess.Popen([kj, "daemon", "--socket", socket], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        assert "listening on" in line, line + self.proc.stdout.read()
        self.kj, self.socket, self.env = kj, socket, env

    def status(self):
        proc = subprocess.run([self.kj, "daemon", "status", "--socket", self.socket], env=self.env,
                              capture_output=True, text=True, timeout=30)
        return proc.returncode, proc.stdout

    def zygote_pid(self):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            code, text = self.status()
            assert code == 0, text
            if "zygote pid " in text:
                return int(text.split("zygote pid ")[1].split()[0])
            assert "zygote failed" not in text, text
            time.sleep(0.5)
        raise AssertionError("the daemon's zygote never started: " + text)

    def ended(self, timeout=60):
        code = self.proc.wait(timeout=timeout)
        rest = self.proc.stdout.read()
        return code, rest


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    kj = args.kj
    problem = os.path.join(args.root, "problems", "vectoradd")
    solutions = os.path.join(problem, "solutions")
    tmp = tempfile.mkdtemp(prefix="kj-daemon-test-")
    socket = os.path.join(tmp, "run", "daemon.sock")
    env = dict(os.environ, KJ_COMPILE_CACHE=os.path.join(tmp, "cache"))
    env.pop("KJ_DAEMON_SOCKET", None)
    daemons = []
    try:
        daemon = Daemon(kj, socket, env)
        daemons.append(daemon)
        assert oct(os.stat(os.path.dirname(socket)).st_mode & 0o777) == "0o700"
        assert oct(os.stat(socket).st_mode & 0o777) == "0o600"
        zygote = daemon.zygote_pid()

        def evaluate(path, *extra, expect_daemon=True):
            proc = subprocess.run([kj, "eval", problem, path, "--json", "--daemon-socket", socket,
                                   *extra], env=env, capture_output=True, text=True, timeout=600)
            by_daemon = "judged by the kj daemon" in proc.stderr
            assert by_daemon == expect_daemon, (path, extra, proc.stderr[-2000:])
            return proc

        cases = [(os.path.join(solutions, "correct", "pytorch.py"), 0, "accepted"),
                 (os.path.join(solutions, "wrong", "subtract.py"), 1, "wrong_answer"),
                 (os.path.join(args.root, "tests", "corpus", "exit_at_import.py"), 1,
                  "runtime_error")]
        for path, code, verdict in cases:
            proc = evaluate(path)
            result = json.loads(proc.stdout)
            assert (proc.returncode, result["verdict"]) == (code, verdict), (
                path, proc.returncode, result["verdict"], result["reason"])
            assert not result["sandbox"]["warnings"], result["sandbox"]["warnings"]
            assert daemon.status()[0] == 0, "the daemon did not survive " + path
        # Benchmark mode: the reference is timed alone after the submission's run, forked from
        # the same zygote (a reference run that had to start its own harness says so in a
        # warning), and gives the speedup.
        proc = evaluate(cases[0][0], "--mode", "benchmark", "--case", "0")
        result = json.loads(proc.stdout)
        assert result["verdict"] == "accepted", result["reason"]
        assert not result["sandbox"]["warnings"], result["sandbox"]["warnings"]
        assert result["speedup"] and result["benchmarks"][0]["reference_summary"]["n"] >= 10, result
        assert result["process_times"]["reference_wall_s"] > 0, result["process_times"]
        assert daemon.zygote_pid() == zygote, "the zygote was replaced"
        print("ok   kj eval through the daemon: accepted, wrong_answer and a hostile file's "
              "runtime_error, exit codes as local, a benchmark with its reference timed alone, "
              "every run forked from one zygote")

        bad = subprocess.run([kj, "eval", os.path.join(tmp, "no-such-problem"),
                              cases[0][0], "--daemon-socket", socket], env=env,
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and "judged by the kj daemon" in bad.stderr, bad.stderr
        print("ok   a missing problem folder: exit 2 from the daemon, as from kj eval")

        other = evaluate(cases[0][0], "--memory-limit", "4096", expect_daemon=False)
        assert "judged here, not by the kj daemon" in other.stderr and "memory_mib" in other.stderr
        assert other.returncode == 0, other.stderr[-2000:]
        local = evaluate(cases[0][0], "--no-daemon", expect_daemon=False)
        assert local.returncode == 0 and "kj daemon" not in local.stderr, local.stderr
        print("ok   another memory limit and --no-daemon are judged by kj eval itself")

        second = subprocess.run([kj, "daemon", "--socket", socket], env=env, capture_output=True,
                                text=True, timeout=60)
        assert second.returncode == 2 and "already" in second.stderr, second.stderr
        stop = subprocess.run([kj, "daemon", "stop", "--socket", socket], env=env,
                              capture_output=True, text=True, timeout=60)
        assert stop.returncode == 0, stop.stdout + stop.stderr
        code, rest = daemon.ended()
        assert code == 0 and "stopped after" in rest, (code, rest)
        assert not os.path.exists(socket), "the socket was left behind"
        deadline = time.monotonic() + 10
        while alive(zygote) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(zygote), f"the zygote {zygote} outlived its daemon"
        gone = subprocess.run([kj, "daemon", "status", "--socket", socket], env=env,
                              capture_output=True, text=True, timeout=30)
        assert gone.returncode == 1 and "no kj daemon" in gone.stdout, gone.stdout
        print("ok   a second daemon on the socket is refused; kj daemon stop: exit 0, socket "
              "removed, zygote gone")

        daemon = Daemon(kj, socket, env)
        daemons.append(daemon)
        zygote = daemon.zygote_pid()
        daemon.proc.send_signal(signal.SIGTERM)
        code, rest = daemon.ended()
        assert code == 0 and not os.path.exists(socket), (code, rest)
        assert not alive(zygote), f"the zygote {zygote} outlived its daemon"
        print("ok   SIGTERM: the daemon stops cleanly too")
    finally:
        for daemon in daemons:
            if daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("daemon e2e: all passed")


if __name__ == "__main__":
    main()
