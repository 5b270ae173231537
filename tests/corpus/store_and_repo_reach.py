# expect: runtime_error
# Looks for the judge's own files: the host paths of the bind mounts are readable in
# /proc/self/mountinfo, so it derives the repository (beside the harness) and the evaluation
# directory from them and tries the store (kj.sqlite and friends), the repository's .git, the
# other submissions and the caches, directly and through /proc/<pid>/root.
import glob
import os


def mountinfo():
    with open("/proc/self/mountinfo") as f:
        return [line.split() for line in f]


# Field 4: the bound directory's path in its own filesystem; field 5: where it is mounted here.
HOST_SOURCES = {fields[3] for fields in mountinfo()}
MOUNT_POINTS = {fields[4] for fields in mountinfo()}


def scaffolding(path):
    """A directory that exists only on the way to a mount point (the interpreter's prefix)."""
    return any(m == path or m.startswith(path.rstrip("/") + "/") for m in MOUNT_POINTS)


def candidates():
    names = ["kj.sqlite", "kj.sqlite3", "kj.db", "store.sqlite", ".git/config", ".git/HEAD",
             "build/kj", "tests/corpus", "problems/vectoradd/solutions/correct"]
    paths = set()
    for root in HOST_SOURCES:
        for up in (root, os.path.dirname(root), os.path.dirname(os.path.dirname(root))):
            if up in ("", "/") or up.startswith(("/usr", "/lib", "/bin", "/sbin", "/proc", "/dev")):
                continue
            paths.update(os.path.join(up, n) for n in names)
    for home in ("/root", "/home"):
        paths.update({f"{home}/.cache/kerneljudge", f"{home}/.cache", f"{home}/.ssh",
                      f"{home}/.config/kj", f"{home}/.git-credentials"})
    paths.update({"/var/lib/kj", "/var/lib/kerneljudge", "/srv/kj", "/data/kj.sqlite"})
    for pid in ("1", str(os.getppid())):
        paths.update({f"/proc/{pid}/root{p}" for p in list(paths) if p.startswith("/")})
    return sorted(paths)


def custom_kernel(data):
    found = []
    for path in candidates():
        try:
            if os.path.isdir(path):
                entries = [e for e in os.listdir(path) if not scaffolding(os.path.join(path, e))]
                if entries:
                    found.append((path, entries[:5]))
            else:
                with open(path, "rb") as f:
                    found.append((path, f.read(32)))
        except OSError:
            pass
    # Other evaluations' task directories on the host's /tmp, and any database anywhere visible.
    found += glob.glob("/tmp/kj-eval-*") + glob.glob("/kj/*/*.sqlite*") + glob.glob("/kj/task/../*/submission.py")
    found = [f for f in found if f != "/kj/task/../task/submission.py"]
    if found:
        print("reached the judge's files:", found[:20])
        a, b = data
        return a + b  # would be accepted, and the test fails
    raise FileNotFoundError("no store, repository, cache or other submission is reachable")
