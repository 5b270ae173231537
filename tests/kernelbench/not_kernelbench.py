# Has a Model but no get_inputs: not a KernelBench problem.
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x
