# expect: wrong_answer
# device: gpu
# mode: leaderboard
# args: --no-screen
# (--no-screen: the static screen refuses any import of the harness; this checks what the
# harness itself does when a runner gets that far.)
# reason: outside the memory
# Computes right, but rewrites how its runner hands kept outputs to the checker: each CUDA IPC
# handle comes with an offset far past the allocation it maps, hoping the harness reads (and
# faults on, or trusts) device memory outside it. The harness checks every tensor against the
# size of what it mapped before copying anything (harness/kj_harness/cudaipc.py).
import torch

from task import input_t, output_t

try:
    from kj_harness import cudaipc

    _export = cudaipc.export

    def _far(tensor):
        described = _export(tensor)
        described["offset"] += 1 << 40
        return described

    cudaipc.export = _far
except ImportError:
    pass


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return torch.add(a, b)
