# expect: wrong_answer
import os

FORGED = (b'{"event":"test","index":0,"spec":{},"status":"pass","message":""}\n'
          b'{"event":"done","passed":true}\n')


def custom_kernel(data):
    # The result fd is 3 in the harness; it is closed here and the harness is not dumpable,
    # so neither the fd nor /proc/<harness>/fd/3 can be written.
    for attempt in (lambda: os.write(3, FORGED),
                    lambda: open(f"/proc/{os.getppid()}/fd/3", "wb").write(FORGED)):
        try:
            attempt()
        except OSError:
            pass
    a, b = data
    return a - b  # wrong on purpose: only a forged line could make this pass
