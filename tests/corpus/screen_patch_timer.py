# expect: security_violation
import torch


class InstantEvent(torch.cuda.Event):
    def elapsed_time(self, other):
        return 0.001


torch.cuda.Event = InstantEvent


def custom_kernel(data):
    a, b = data
    return a + b
