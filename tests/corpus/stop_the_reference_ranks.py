# expect: accepted
# mode: benchmark
# problem: allreduce_mean
# alone: run as the other stop_the_reference file is, with nothing beside it
# stop_the_reference.py on a multi-rank problem: an honest all-reduce that would make the
# reference slow instead of itself fast. At import, on every rank, it forks a helper that looks
# for the process timing the reference beside it in its rank's sandbox (another child of its own
# parent, the rank's harness: same user, visible in /proc), lowers its priority and keeps it
# stopped with SIGSTOP nearly all the time, letting it run in slivers: when the reference was
# timed beside the submission, the speedup was inflated (6.9x on a CPU). The judge times the
# reference alone, in fresh sandboxes, once every rank of the submission's run has ended: no
# process of the submission exists any more, and the helpers find nothing to stop.
# What this file asserts is that last fact, exactly: every call looks for such a process and,
# if one exists, returns a wrong answer, so the file is accepted only where the reference is
# out of its reach. (A bound on the speedup cannot assert it on a CPU: gloo's all-reduce times
# of one file spread 1.7-11 ms from run to run, so honest ratios of 0.4-3x occur once the
# reference is no longer sampled in the same rounds.) Otherwise it computes as the reference
# does (float64 accumulation, the same collective).
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
    if _siblings(_runner, _harness):  # the reference's runner is within reach: say so
        return torch.zeros_like(data)
    total = data.to(torch.float64)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return (total / dist.get_world_size()).to(torch.float32)
