import torch
import torch.nn as nn

# Small on the CPU (the Triton interpreter), KernelBench-sized on a GPU.
GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"

batch_size, in_features, out_features = (4096, 4096, 4096) if GPU else (24, 40, 36)


class Model(nn.Module):
    """Linear layer followed by ReLU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features, device=DEVICE)]


def get_init_inputs():
    return [in_features, out_features]
