# expect: time_limit
# Freezes the harness and every other process it can see, then itself, so nothing inside is
# left to report: the judge outside the pid namespace must still end the run at the wall limit.
import os
import signal


def custom_kernel(data):
    me = os.getpid()
    os.kill(os.getppid(), signal.SIGSTOP)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                os.kill(int(name), signal.SIGSTOP)  # pid 1 (the namespace init) ignores it
            except OSError:
                pass
    os.kill(me, signal.SIGSTOP)
    a, b = data
    return a + b
