# expect: accepted
# device: gpu
# mode: leaderboard
# args: --no-screen
# (--no-screen: the static screen refuses any import of the harness; this checks what the
# harness itself does when a runner gets that far.)
# Computes right, but its runner hands the checker forged CUDA IPC handles (random bytes) for
# kept outputs. Opening one fails; the harness must neither crash nor blame the judge, and falls
# back to the bytes through the pipe, which are right: accepted.
import os

import torch

from task import input_t, output_t

try:
    from kj_harness import cudaipc

    _export = cudaipc.export

    def _forged(tensor):
        described = _export(tensor)
        described["handle"] = os.urandom(cudaipc.HANDLE_BYTES).hex()
        return described

    cudaipc.export = _forged
except ImportError:
    pass


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return torch.add(a, b)
