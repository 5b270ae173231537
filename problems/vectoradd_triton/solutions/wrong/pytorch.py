# expect: compile_error
# A correct answer in PyTorch, but this problem asks for a Triton kernel (kernel_language).
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return a + b
