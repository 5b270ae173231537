# expect: accepted
import torch


def custom_kernel(data):
    x, weight, bias = data
    var, mean = torch.var_mean(x, dim=-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * weight + bias
