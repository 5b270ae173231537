# expect: wrong_answer
# mode: leaderboard
# Returns a tensor subclass holding no answer; the sum is computed only when the output is
# serialised for the checker, long after the clock stopped. Outputs must be plain tensors.
import torch


class LazySum(torch.Tensor):
    @staticmethod
    def __new__(cls, a, b):
        out = torch.Tensor._make_subclass(cls, torch.empty_like(a))
        out._inputs = (a, b)
        return out

    def __reduce_ex__(self, protocol):
        a, b = self._inputs
        return (a + b).__reduce_ex__(protocol)


def custom_kernel(data):
    a, b = data
    return LazySum(a, b)
