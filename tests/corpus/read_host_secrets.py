# expect: runtime_error
import glob
import os


def custom_kernel(data):
    found = []
    for path in ["/etc/shadow", "/etc/gshadow", "/root", "/home", "/work", "/var/lib", "/proc/1/root/etc/shadow"]:
        if os.path.exists(path):
            try:
                if os.path.isdir(path):
                    found += os.listdir(path)
                else:
                    found.append(open(path).read(64))
            except OSError:
                pass
    # The judge's database and other submissions live in host paths the sandbox never shows.
    found += glob.glob("/**/*.sqlite*", recursive=False) + glob.glob("/tmp/kj-eval-*")
    if found:
        return data[0] + data[1]  # saw something: would be accepted, and the test fails
    raise FileNotFoundError("nothing of the host is visible")
