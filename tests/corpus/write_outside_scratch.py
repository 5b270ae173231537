# expect: runtime_error
# leaves: kjcorpus-escape-marker
import os


def custom_kernel(data):
    written = []
    harness = "/kj/harness/" + "kj_" + "harness/harness.py"  # spelled so the static screen lets it run
    for path in ["/kj/task/reference.py", harness, "/usr/kjcorpus-escape-marker",
                 "/etc/kjcorpus-escape-marker", "/kjcorpus-escape-marker"]:
        try:
            with open(path, "a") as f:
                f.write("pwned\n")
            written.append(path)
        except OSError:
            pass
    # /tmp is the private scratch: writable, gone after the run, never the host's /tmp.
    with open("/tmp/kjcorpus-escape-marker", "w") as f:
        f.write("inside only\n")
    if written:
        return data[0] + data[1]  # escaped: would be accepted, and the test fails
    raise PermissionError("everything outside scratch is read-only or absent")
