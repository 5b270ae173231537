# expect: security_violation
import builtins

builtins.isinstance = lambda obj, cls: True


def custom_kernel(data):
    a, b = data
    return a
