# expect: security_violation
import reference

reference.check_implementation = lambda data, output: (True, "")


def custom_kernel(data):
    a, b = data
    return a - b
