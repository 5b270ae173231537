# expect: accepted
# Scans fixed-size chunks, then adds each chunk's offset (the running total before it).
import torch
import torch.nn.functional as F


def custom_kernel(data):
    n = data.numel()
    chunk = 1024
    padded = F.pad(data, (0, (-n) % chunk)).view(-1, chunk).to(torch.float64)
    inner = padded.cumsum(dim=1)
    offsets = torch.cumsum(inner[:, -1], dim=0) - inner[:, -1]
    return (inner + offsets[:, None]).reshape(-1)[:n].to(torch.float32)
