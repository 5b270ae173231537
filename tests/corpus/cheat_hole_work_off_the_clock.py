# expect: accepted
# mode: benchmark
# max-speedup: 6
# open-hole: timed in the submission's process only; sealed timing closes it (docs/security.md, "Sealed timing")
# Work off the clock in a function the runner calls between timed calls. Until it has found it,
# an honest vector add looks through the garbage collector (names built at run time) for the
# runner's timing session and gives it an input generator of its own: the runner's, which then
# adds the new inputs at once, before the clock starts. The timed call only hands back that
# sum: right every time, so the re-checks pass. The problem's generate_input and every function
# the runner checks by identity stay as they were.
import torch

_collector = __import__("g" + "c")
_found = []
_answers = {}


def _answering(generate):
    def generate_and_answer(args):
        data = generate(args)
        a, b = data
        _answers[id(a)] = (a, torch.add(a, b))  # `a` held: its id is not reused meanwhile
        return data

    return generate_and_answer


def _find_the_session():
    for obj in getattr(_collector, "get_" + "objects")():
        if type(obj).__name__ == "Case" + "Session" and "generate" in vars(obj):
            obj.generate = _answering(obj.generate)
            _found.append(obj)


def custom_kernel(data):
    a, b = data
    if not _found:
        _find_the_session()
    ready = _answers.pop(id(a), None)
    if ready is not None and ready[0] is a:
        return ready[1]
    return torch.add(a, b)
