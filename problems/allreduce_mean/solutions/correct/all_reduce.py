# expect: accepted
import torch.distributed as dist

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    total = data.clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.div_(dist.get_world_size())
