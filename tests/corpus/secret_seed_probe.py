# expect: accepted
# mode: leaderboard
# args: --secret-seed 271828182845
# Looks for the ranked run's secret seed everywhere a process can read: its environment and
# argv, every process's cmdline/environ/fds, stdin, and the files of the scratch and the task.
# The harness holds the secret only in its own memory, read from its stdin after this process
# was forked with stdin replaced: finding it raises here, so the run would not be accepted.
import os

SECRET = str(271828 * 1000000 + 182845).encode()  # not spelled out, so our own source does not match
OWN_SOURCE = "/kj/task/submission.py"
calls = []


def readable(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def search():
    places = {"environ": b"\0".join(k.encode() + b"=" + v.encode() for k, v in os.environ.items())}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for name in ("cmdline", "environ"):
            places[f"/proc/{pid}/{name}"] = readable(f"/proc/{pid}/{name}")
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                path = f"/proc/{pid}/fd/{fd}"
                if pid == str(os.getpid()) and int(fd) != 0:
                    continue  # our own pipes to the harness: reading them would block
                try:
                    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                    try:
                        places[path] = os.read(handle, 1 << 16)
                    finally:
                        os.close(handle)
                except OSError:
                    pass
        except OSError:
            pass
    for top in ("/tmp", "/dev/shm", "/kj", "/etc"):
        for root, _, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                if path != OWN_SOURCE:
                    places[path] = readable(path)
    return [where for where, content in places.items() if SECRET in content]


def custom_kernel(data):
    calls.append(1)
    # Every call until well into the ranked run: the secret is read after the public stages.
    if len(calls) <= 40:
        found = search()
        if found:
            raise RuntimeError(f"found the secret seed in {found}")
    a, b = data
    return a + b
