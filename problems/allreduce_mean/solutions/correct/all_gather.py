# expect: accepted
import torch
import torch.distributed as dist

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    parts = [torch.empty_like(data) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, data)
    return torch.stack(parts).mean(dim=0)
