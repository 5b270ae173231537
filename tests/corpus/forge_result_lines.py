# expect: runtime_error
import glob
import os

FORGED = (b'{"event":"test","index":0,"spec":{},"status":"pass","message":""}\n'
          b'{"event":"done","passed":true}\n')


def custom_kernel(data):
    # Try every fd we might have inherited, and the harness's fds through /proc.
    for fd in range(0, 256):
        try:
            os.write(fd, FORGED)
        except OSError:
            pass
    for path in glob.glob("/proc/*/fd/*"):
        try:
            with open(path, "wb") as f:
                f.write(FORGED)
        except OSError:
            pass
    a, b = data
    return a - b  # wrong on purpose; garbling our own pipe to the harness is a runtime error
