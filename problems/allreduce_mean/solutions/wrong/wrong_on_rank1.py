# expect: wrong_answer
# reason: rank 1 of 2
# Right on rank 0; rank 1 divides by the wrong count (it takes part in the collective, so no rank
# waits: only rank 1's output is wrong).
import torch.distributed as dist

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    total = data.clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.div_(dist.get_world_size() + dist.get_rank())
