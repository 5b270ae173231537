import torch
import torch.distributed as dist

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # data is this rank's tensor; return the mean over all ranks, on every rank.
    ...
