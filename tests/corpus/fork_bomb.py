# expect: time_limit
# leaves: kjcorpus-forkbomb
import os
import sys

sys.argv[0] = "kjcorpus-forkbomb"


def custom_kernel(data):
    while True:
        try:
            os.fork()
        except OSError:
            pass
