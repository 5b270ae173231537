# A KernelBench-style problem of ours (level-1 shape, small sizes for the CPU tests).
import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU of one tensor."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 64
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
