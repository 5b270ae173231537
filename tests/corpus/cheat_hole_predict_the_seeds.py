# expect: accepted
# mode: benchmark
# max-speedup: 6
# open-hole: timed in the submission's process only; sealed timing closes it (docs/security.md, "Sealed timing")
# Reads the seeds. The runner must generate every timed call's inputs, so the case's arguments
# (their seed already mixed with the salt of this timing) are in its memory, and how each call's
# seed derives from them is public. At its first call this vector add finds the runner's timing
# session (the garbage collector, names built at run time), derives the next 400 calls' seeds,
# generates their inputs and adds them, all during the untimed warm-up. A timed call then hands
# back the answer for the call it is (the session's count of timed calls): right every time.
import hashlib

import torch

_collector = __import__("g" + "c")
_session = []
_answers = []


def _seed(seed, iteration):
    digest = hashlib.sha256(f"kj:iteration:{iteration}:{seed}".encode()).digest()
    return int.from_bytes(digest[:7], "little")


def _predict(session):
    for iteration in range(400):
        a, b = session.generate({**session.args, "seed": _seed(session.args["seed"], iteration)})
        _answers.append(torch.add(a, b))


def _find_the_session():
    for obj in getattr(_collector, "get_" + "objects")():
        if type(obj).__name__ == "Case" + "Session":
            _session.append(obj)
            _predict(obj)
            return


def custom_kernel(data):
    a, b = data
    if not _session:
        _find_the_session()
    if _session:
        seen = _session[0].seen
        if seen < len(_answers) and _answers[seen].shape == a.shape:
            return _answers[seen]
    return torch.add(a, b)
