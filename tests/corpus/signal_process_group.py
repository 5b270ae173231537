# expect: runtime_error
# Signals everything at once: kill(-1), every process it may signal (the harness, any helper),
# then its own process group, which the harness leads. The harness dies before reporting a
# result; the judge, outside the pid namespace, is out of reach and blames the submission.
import os
import signal


def custom_kernel(data):
    try:
        os.kill(-1, signal.SIGKILL)  # all but itself and the namespace's init
    except OSError:
        pass
    os.killpg(0, signal.SIGKILL)
    a, b = data
    return a + b
