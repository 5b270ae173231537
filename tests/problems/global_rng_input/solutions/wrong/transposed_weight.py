# expect: wrong_answer
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, w = data
    return x @ w.t()
