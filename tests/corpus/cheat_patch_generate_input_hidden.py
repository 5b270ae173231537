# expect: security_violation
# mode: leaderboard
# Wraps the problem's generate_input inside the runner: the runner calls it, untimed, to make
# each call's inputs, so the wrapper computes the answer there and the timed call only returns
# it. The runner checks that its input generator is still the one it started with.
import importlib

_ref = importlib.import_module("refer" + "ence")
_original = getattr(_ref, "generate" + "_input")
_answers = {}


def _generate(*args, **kwargs):
    a, b = _original(*args, **kwargs)
    _answers[a.data_ptr()] = a + b
    return a, b


object.__setattr__(_ref, "generate" + "_input", _generate)


def custom_kernel(data):
    a, b = data
    answer = _answers.pop(a.data_ptr(), None)
    return answer if answer is not None else a + b
