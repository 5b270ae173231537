# expect: accepted
# mode: benchmark
# problem: allreduce_mean
# max-speedup: 2
# stop_the_reference.py on a multi-rank problem: an honest all-reduce that makes the reference
# slow instead of itself fast. At import, on every rank, it forks a helper that looks for the
# process timing the reference beside it in its rank's sandbox (another child of its own parent,
# the rank's harness: same user, visible in /proc), lowers its priority and keeps it stopped with
# SIGSTOP nearly all the time, letting it run in slivers. The reference's all-reduce then waits
# on stopped peers, and the speedup is inflated (when the reference was timed beside the
# submission, on every rank). The judge times the reference alone, in fresh sandboxes, once
# every rank of the submission's run has ended: no process of the submission exists any more,
# and the helpers find nothing to stop. Accepted at its honest speedup: it computes as the
# reference does (float64 accumulation, the same collective), so about 1.
import os
import signal
import time

import torch
import torch.distributed as dist

from task import input_t, output_t


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
        os.closerange(3, 4096)  # none of the runner's pipes, nor its process group's sockets
        _stopper(_runner, _harness)
    finally:
        os._exit(0)


def custom_kernel(data: input_t) -> output_t:
    total = data.to(torch.float64)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return (total / dist.get_world_size()).to(torch.float32)
