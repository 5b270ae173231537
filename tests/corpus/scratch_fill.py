# expect: accepted
# leaves: kjcorpus-scratch-fill
# Fills every writable filesystem (the /tmp scratch, the harness's working directory, /dev/shm)
# until it refuses, in files below the file-size limit, then returns the right answer: the
# harness must still report through a full scratch, and nothing may appear on the host.
import errno
import os

CHUNK = b"\xa5" * (16 << 20)


def fill(directory):
    written = 0
    for n in range(100000):
        path = os.path.join(directory, f"kjcorpus-scratch-fill-{n}")
        try:
            with open(path, "wb") as f:
                for _ in range(32):  # 512 MiB per file, below RLIMIT_FSIZE
                    f.write(CHUNK)
                    written += len(CHUNK)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                return written
            raise
    raise AssertionError(f"{directory} took {written} bytes and never filled up")


def custom_kernel(data):
    if not os.path.exists("/tmp/kjcorpus-scratch-fill-0"):
        # /tmp and the working directory share the scratch tmpfs; /dev/shm is its own.
        for directory in ("/tmp", os.getcwd(), "/dev/shm"):
            print(directory, "filled after", fill(directory) >> 20, "MiB")
    a, b = data
    return a + b
