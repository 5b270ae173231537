# expect: runtime_error
# Links planted in the writable scratch: symlinks to host secrets and to other processes' roots
# (resolved inside the sandbox's own root, so they lead nowhere), hard links to the read-only
# task and harness files (refused across mounts), and a symlink swapped in for the harness's
# working directory, which the harness never reads back.
import os
import shutil

TARGETS = ["/etc/shadow", "/root/.ssh/id_rsa", "/proc/1/root/etc/shadow", "/proc/1/cwd",
           f"/proc/{os.getppid()}/root/etc/passwd", "/../../../../etc/shadow", "/home"]


def custom_kernel(data):
    reached = []
    os.makedirs("/tmp/kjcorpus-links", exist_ok=True)
    for n, target in enumerate(TARGETS):
        link = f"/tmp/kjcorpus-links/s{n}"
        if not os.path.lexists(link):
            os.symlink(target, link)
        try:
            with open(link, "rb") as f:
                reached.append((link, target, f.read(32)))
        except IsADirectoryError:
            reached.append((link, target, os.listdir(link)[:5]))
        except OSError:
            pass
    for n, source in enumerate(["/kj/task/reference.py", "/kj/task/submission.py",
                                "/etc/passwd", "/usr/bin/env"]):
        try:
            os.link(source, f"/tmp/kjcorpus-links/h{n}")
            with open(f"/tmp/kjcorpus-links/h{n}", "a") as f:
                f.write("# changed through a hard link\n")
            reached.append(("hard link", source))
        except OSError:
            pass
    # The harness's working directory replaced by a link to the task: a harness that wrote
    # there would now write into the read-only task (it does not write there at all).
    cwd = os.getcwd()
    if os.path.isdir(cwd) and not os.path.islink(cwd):
        shutil.rmtree(cwd, ignore_errors=True)
        try:
            os.symlink("/kj/task", cwd)
        except OSError:
            pass
    if reached:
        print("reached through links:", reached)
        a, b = data
        return a + b  # would be accepted, and the test fails
    raise PermissionError("no link leads outside the sandbox or into a read-only file")
