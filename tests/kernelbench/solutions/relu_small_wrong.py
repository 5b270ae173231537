# ReLU that leaks 5 % of negative values: beyond KernelBench's atol = rtol = 1e-2.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, 0.05 * x)
