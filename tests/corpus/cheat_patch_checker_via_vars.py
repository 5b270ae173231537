# expect: wrong_answer
# Rewrites the checker inside the runner through the module dictionaries (no assignment the
# screen can see) and returns a wrong answer; the harness checks with its own copy.
import sys


def custom_kernel(data):
    for name in ("refer" + "ence", "ut" + "ils"):
        module = sys.modules.get(name)
        if module is not None:
            for key in ("check_" + "implementation", "check_" + "close"):
                if key in vars(module):
                    vars(module)[key] = lambda *args, **kwargs: (True, "")
    a, b = data
    return a * b
