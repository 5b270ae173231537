# expect: security_violation
import sys


def custom_kernel(data):
    caller = sys._getframe(1)
    while caller is not None and "args" not in caller.f_locals:
        caller = caller.f_back
    a, b = data
    return a + b
