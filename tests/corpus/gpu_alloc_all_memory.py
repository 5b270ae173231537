# expect: memory_limit
# device: gpu
# Allocates device memory until the GPU has none left and lets the out-of-memory error
# escape. The judge reports device memory exhausted as memory_limit; the memory is returned to
# the driver when the process ends (the GPU health check after the run confirms it).
import torch

hoard = []


def custom_kernel(data):
    a, b = data
    while True:
        hoard.append(torch.empty(1 << 30, dtype=torch.uint8, device=a.device))
