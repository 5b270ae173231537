# expect: accepted
import torch.nn.functional as F


def custom_kernel(data):
    x, weight, bias = data
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
