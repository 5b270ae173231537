# expect: accepted
# leaves: kjcorpus-escapee
import os


def custom_kernel(data):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", "exec -a kjcorpus-escapee sleep 1000"])
        os._exit(0)
    return data[0] + data[1]
