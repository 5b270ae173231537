# expect: wrong_answer
# screen_patch_checker.py with the assignment hidden from the static screen: the patch lands in
# the submission's own process; the harness checks with its own, untouched reference.
import importlib


def custom_kernel(data):
    module = importlib.import_module("refer" + "ence")
    object.__setattr__(module, "check_" + "implementation", lambda data, output: (True, ""))
    a, b = data
    return a - b
