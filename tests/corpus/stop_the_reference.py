# expect: accepted
# mode: benchmark
# max-speedup: 2
# An honest kernel that makes the reference slow instead of itself fast. At import it forks a
# helper that looks for the process timing the reference beside it (another child of its own
# parent, the harness: same user, visible in /proc), lowers its priority (so that, continued, it
# cannot preempt its stopper and finish a call in one go) and keeps it stopped with SIGSTOP nearly
# all the time, letting it run in slivers: every timed call of the reference then spans a stop,
# so the speedup is inflated (165x on a CPU when the reference was timed beside the submission).
# The judge times the reference alone, in a sandbox of its own, once the submission's run has
# ended: no process of the submission exists any more, and the helper finds nothing to stop.
# Accepted at its honest speedup: it computes as the reference does (the same numerics context,
# whose cost dominates on a CPU), so about 1.
import os
import signal
import time

from utils import DeterministicContext


def _siblings(runner, harness):
    """Processes whose parent is the harness, other than this runner: the reference's runner."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (runner, os.getpid()):
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == harness:
            found.append(int(name))
    return found


def _signal(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _stopper(runner, harness):
    targets, rescan = [], 0.0
    try:
        while os.getppid() == runner:  # ends with the runner
            now = time.monotonic()
            if now >= rescan:
                targets, rescan = _siblings(runner, harness), now + 0.2
                for pid in targets:
                    try:
                        os.setpriority(os.PRIO_PROCESS, pid, 19)
                    except OSError:
                        pass
            _signal(targets, signal.SIGSTOP)
            time.sleep(0.01)
            _signal(targets, signal.SIGCONT)
            time.sleep(0.00005)
    finally:
        _signal(targets, signal.SIGCONT)


_runner, _harness = os.getpid(), os.getppid()
if os.fork() == 0:
    try:
        os.closerange(3, 4096)  # none of the runner's pipes
        _stopper(_runner, _harness)
    finally:
        os._exit(0)


def custom_kernel(data):
    with DeterministicContext():
        a, b = data
        return a + b
