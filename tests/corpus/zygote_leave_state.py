# expect: accepted
# leaves: kj-zygote-mark
# Tries to leave state for the next submission judged by the same worker, whose harness is
# forked from the same zygote (docs/sandbox.md, "Zygote"): files in the scratch, /dev/shm and
# the task directory, a module-level global in modules the zygote imported (sys.modules, torch,
# builtins), an environment variable, and a signal to every process it can see but its own
# harness. Finding any mark an earlier run left raises here, so the run would not be accepted:
# judged twice in a row by one worker (tests/e2e/zygote_test.py), the second run must find none.
import os
import signal
import sys
import types

import torch

MARK = "kj-zygote-mark"
# Reached by a name built at run time: the static screen would refuse a plain patch of builtins
# before anything ran, and the point is what happens at run time.
BUILTINS = sys.modules["".join(["built", "ins"])]
FILES = ["/tmp/" + MARK, "/tmp/work/" + MARK, "/dev/shm/" + MARK, "/kj/task/" + MARK]


def marks_found():
    found = [path for path in FILES if os.path.exists(path)]
    if MARK in sys.modules:
        found.append("sys.modules")
    if hasattr(torch, "kj_zygote_mark"):
        found.append("torch global")
    if hasattr(BUILTINS, "kj_zygote_mark"):
        found.append("builtins global")
    if MARK.upper().replace("-", "_") in os.environ:
        found.append("environment")
    return found


FOUND = marks_found()
if FOUND:
    raise RuntimeError(f"state left by an earlier run: {FOUND}")


def leave_marks():
    for path in FILES:
        try:
            with open(path, "w") as f:
                f.write("left by an earlier submission")
        except OSError:
            pass  # read-only (the task directory): nothing is left there either
    sys.modules[MARK] = types.ModuleType(MARK)
    torch.kj_zygote_mark = True
    setattr(BUILTINS, "kj_zygote_mark", True)
    os.environ[MARK.upper().replace("-", "_")] = "1"
    # Every process in sight but our own harness (killing it would only fail this run): the
    # zygote and earlier runs are in no namespace this process can see.
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in (os.getpid(), os.getppid()):
            try:
                os.kill(int(pid), signal.SIGTERM)
            except OSError:
                pass


leave_marks()


def custom_kernel(data):
    a, b = data
    return a + b
