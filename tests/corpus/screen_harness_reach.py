# expect: security_violation
import kj_harness.timing


def custom_kernel(data):
    kj_harness.timing.DEFAULTS["max_samples"] = 1
    a, b = data
    return a + b
