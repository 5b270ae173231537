import torch
import torch.nn as nn

# Small on the CPU (the Triton interpreter), KernelBench-sized on a GPU.
GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"

batch_size, dim = (4096, 16384) if GPU else (16, 300)


class Model(nn.Module):
    """Simple model that performs a ReLU activation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
