# expect: accepted
# leaves: kjcorpus-daemon
# Leaves work running after custom_kernel returns: a spinning thread per call, and a
# double-forked daemon in its own session that ignores SIGTERM/SIGHUP and spins. The answer is
# right, so the run is accepted; the threads end with the runner and the daemon dies with the
# pid namespace when the run ends, even though nothing waits for it.
import os
import signal
import sys
import threading

started = []


def spin(seed):
    x = seed
    while True:
        x = (x * 1103515245 + 12345) % 2147483648


def daemonize():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            os.execv(sys.executable, [sys.executable, "-c", "while True: pass", "kjcorpus-daemon"])
        os._exit(0)


def custom_kernel(data):
    a, b = data
    out = a + b
    if not started:
        started.append(1)
        daemonize()
        os.wait()
    threading.Thread(target=spin, args=(len(started),), daemon=True).start()
    return out
