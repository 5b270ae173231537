# expect: time_limit
# leaves: kjcorpus-forkbomb
# alone: hundreds of processes spinning on fork() starve anything beside them until the wall limit
import os
import sys

sys.argv[0] = "kjcorpus-forkbomb"


def custom_kernel(data):
    while True:
        try:
            os.fork()
        except OSError:
            pass
