# expect: runtime_error
import os
import signal


def custom_kernel(data):
    # The judge itself is outside this pid namespace; the nearest parent is the harness.
    os.kill(os.getppid(), signal.SIGKILL)
    for pid in range(1, 64):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return data[0] + data[1]
