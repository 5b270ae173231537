# expect: accepted
# PyTorch's own softmax over the last dimension.
import torch.nn.functional as F


def custom_kernel(data):
    return F.softmax(data, dim=-1)
