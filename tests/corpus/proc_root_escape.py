# expect: runtime_error
# The classic chroot escape through procfs: another process's root, cwd and exe links point at
# its view of the filesystem. Inside the pid namespace pid 1 is the sandbox's own init (a copy
# of the judge), and it and the harness are not dumpable, so the links cannot be followed.
import os


def custom_kernel(data):
    ppid = os.getppid()
    reached = []
    for pid in ("1", str(ppid), "self"):
        for link, probe in (("root", "etc/shadow"), ("root", "etc/hostname"), ("root", "root"),
                            ("cwd", "."), ("exe", None)):
            path = f"/proc/{pid}/{link}" + (f"/{probe}" if probe else "")
            try:
                if os.path.isdir(path):
                    entries = os.listdir(path)
                    # Our own root and cwd are the sandbox's: the same tmpfs root as "/".
                    if pid == "self" or os.path.samestat(os.stat(path), os.stat("/" if link == "root" else ".")):
                        continue
                    reached.append((path, entries[:5]))
                else:
                    with open(path, "rb") as f:
                        head = f.read(64)
                    if pid == "self" and link == "exe":
                        continue  # our own interpreter
                    reached.append((path, head))
            except OSError:
                pass
    if reached:
        print("escaped through", reached)
        a, b = data
        return a + b  # escaped: would be accepted, and the test fails
    raise PermissionError("no /proc/<pid>/{root,cwd,exe} leads outside the sandbox")
