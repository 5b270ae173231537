# expect: runtime_error
import glob
import os
import sys


def interpreter_file(path):
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(p)) for p in {sys.prefix, sys.base_prefix})


def custom_kernel(data):
    found = []
    for path in ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/proc/1/root/etc/shadow",
                 "/proc/1/environ", "/root/.ssh", "/root/.bash_history"]:
        try:
            found.append((path, open(path, "rb").read(64) if os.path.isfile(path) else os.listdir(path)))
        except OSError:
            pass
    for top in ["/home", "/work", "/srv", "/var", "/opt", "/mnt", "/media", "/root"]:
        for root, _, files in os.walk(top):
            found += [(root, f) for f in files if not interpreter_file(os.path.join(root, f))]
    # The judge's database and other submissions live in host paths the sandbox never shows.
    found += glob.glob("/**/*.sqlite*") + glob.glob("/tmp/kj-eval-*") + glob.glob("/**/solutions")
    if found:
        print("visible:", found[:20])
        return data[0] + data[1]  # saw something: would be accepted, and the test fails
    raise FileNotFoundError("nothing of the host is visible")
