import torch
import torch.nn as nn

# Small on the CPU (the Triton interpreter), KernelBench-sized on a GPU.
GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"

batch_size, features = (4096, 4096) if GPU else (16, 200)


class Model(nn.Module):
    """Layer normalisation over the last dimension, with learned weight and bias."""

    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, features, device=DEVICE)]


def get_init_inputs():
    return [features]
