# expect: wrong_answer
from collections import namedtuple

import torch

from task import input_t, output_t

_Factors = namedtuple("Factors", "h tau")


class Factors(_Factors):
    """Returns zeros, and would put the right answer in place if the judge iterated it with
    the class's own __iter__ (work done after the clock stopped). The judge reads the tuple's
    items directly, so it checks the zeros. Not a plain named tuple (its base is one), so it
    is refused as an output either way."""

    def __iter__(self):
        h, tau = torch.geqrf(self.source)
        return iter((h, tau))


def custom_kernel(data: input_t) -> output_t:
    out = Factors(torch.zeros_like(data), torch.zeros(data.shape[:-1], device=data.device))
    out.source = data
    return out
