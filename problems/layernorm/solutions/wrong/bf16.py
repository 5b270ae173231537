# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    # Low precision: bfloat16 input and output.
    y = torch.nn.functional.layer_norm(x.to(torch.bfloat16), (x.shape[-1],), weight.to(torch.bfloat16),
                                       bias.to(torch.bfloat16), eps=1e-5)
    return y.to(torch.float32)
