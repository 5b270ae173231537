"""The zygote: one process per worker, inside a sandbox like a harness's, that has imported what
every evaluation needs (torch, numpy, triton) once, and forks one sandboxed harness per request
from the judge (docs/sandbox.md, "Zygote").

It runs only this trusted code and never touches a job: the request it reads holds limits and
the seccomp program, never a submission, a task file or a secret; those reach each run's own
processes through the run's own pipes. A CUDA context does not survive fork, so nothing here
starts CUDA (the imports and the CPU warm-up of `harness.preload` do not, nor does
`harness.warm_triton_keys`, which hashes Triton's own files once for every fork, nor
`harness.warm_triton_imports`, the modules Triton would import at a run's first launch).

Per request (a SOCK_SEQPACKET record on fd 3 with the run's fds attached):
  zygote -> fork -> setup child: new user, mount, pid, ipc, uts and network namespaces,
                    uid/gid maps onto its own ids, then fork -> the run's init (pid 1):
                    says hello with SCM_CREDENTIALS (the judge learns its host pid, moves it into
                    the run's cgroups, then sends go), mounts fresh /tmp, /dev/shm, /proc and
                    the task directories (read-only tmpfs filled from the head of stdin), sets
                    hostname and rlimits, forks the target (pid 2), reaps, reports its status.
  target:           own session, stdio and result fd only, no capabilities, no_new_privs, the
                    judge's seccomp program, then the harness's main().
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import socket
import struct
import sys

CONTROL_FD = 3

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP = 4, 22, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECCOMP_MODE_FILTER = 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Control messages to the judge: [type][length, 2 bytes big-endian][text] (src/sandbox/detail/child.h).
MSG_WARNING, MSG_ERROR, MSG_EXEC_START, MSG_STATUS, MSG_HELLO = b"W", b"E", b"X", b"S", b"H"
GO = b"1"
SETUP_FAILED = 120
MAX_ARCHIVE_HEADER = 1 << 20

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                       ctypes.c_ulong]
libc.unshare.argtypes = [ctypes.c_int]


class SetupError(Exception):
    pass


def check(rc: int, what: str) -> None:
    if rc != 0:
        errno = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(errno)}")


def frame(kind: bytes, text: str) -> bytes:
    data = text.encode(errors="replace")[:2000]
    return kind + len(data).to_bytes(2, "big") + data


def send(ctl: int, kind: bytes, text: str) -> None:
    try:
        os.write(ctl, frame(kind, text))
    except OSError:
        pass


def send_with_credentials(fd: int, data: bytes) -> None:
    """One record carrying our pid, uid and gid: the kernel gives the judge our host pid."""
    sock = socket.socket(fileno=fd)
    try:
        creds = struct.pack("iII", os.getpid(), os.getuid(), os.getgid())
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
    finally:
        sock.detach()


def thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


def close_all_but(keep: set[int]) -> None:
    low = 0
    for fd in sorted(keep) + [os.sysconf("SC_OPEN_MAX")]:
        # Never an empty range: CPython passes closerange(0, 0) to close_range(0, ~0), which
        # closes everything.
        if low < fd:
            os.closerange(low, fd)
        low = fd + 1


def mount(source, target: str, fstype, flags: int, data: str | None = None) -> None:
    check(libc.mount(source.encode() if source else None, target.encode(),
                     fstype.encode() if fstype else None, flags,
                     data.encode() if data else None), f"mount {fstype or 'remount'} on {target}")


def write_file(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise SetupError("stdin ended inside the run's files")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_line(fd: int) -> bytes:
    out = bytearray()
    while len(out) < 32:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            return bytes(out)
        out += byte
    raise SetupError("the run's files do not start with their header length")


def install_files(stdin: int) -> None:
    """The head of stdin: the task directories, each a fresh read-only tmpfs (src/sandbox,
    file_archive). Read byte-exact: what follows is the job, read by the harness."""
    size = int(read_line(stdin) or b"-1")
    if not 0 <= size <= MAX_ARCHIVE_HEADER:
        raise SetupError("bad header of the run's files")
    header = json.loads(read_exact(stdin, size))
    for directory in header["dirs"]:
        target = str(directory["target"])
        files = [(str(name), int(length)) for name, length in directory["files"]]
        total = sum(length for _, length in files)
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV,
              f"mode=0755,size={total + (1 << 20)}")
        for name, length in files:
            if "/" in name or name in ("", ".", ".."):
                raise SetupError(f"bad file name {name!r}")
            fd = os.open(os.path.join(target, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                data = read_exact(stdin, length)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def set_limit(which: int, soft: int, hard: int) -> None:
    resource.setrlimit(which, (soft, hard))


def drop_capabilities() -> None:
    check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient caps")
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.capset(header, data), "drop capabilities")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp(program: bytes) -> None:
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    if not program or len(program) % 8:
        raise SetupError("no seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0),
          "install the seccomp filter")


def move_high(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD, 100)


def target_main(request: dict, program: bytes, ctl: int, stdio: list[int], result: int | None):
    """The run's pid 2: becomes what a freshly exec'd harness would be, then runs it."""
    ctl = move_high(ctl)
    try:
        prepare_target(request, program, ctl, stdio, result)
    except BaseException as exc:  # noqa: BLE001 - reported as the step that failed
        send(ctl, MSG_ERROR, f"target setup: {exc}")
        os._exit(SETUP_FAILED)
    send(ctl, MSG_EXEC_START, "0")
    os.close(ctl)
    # A fresh start's generators are seeded from the OS; forks of one zygote would share its.
    import random

    import numpy

    random.seed()
    numpy.random.seed()
    from . import harness

    code = 1
    try:
        harness.STARTED = harness.time.monotonic()
        code = harness.main()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def prepare_target(request: dict, program: bytes, ctl: int, stdio: list[int],
                   result: int | None) -> None:
    """Only stdio, the result fd and the control fd stay open; then no capabilities, and the
    seccomp program."""
    os.setsid()
    high = [move_high(fd) for fd in stdio]
    high_result = move_high(result) if result is not None else None
    for target, fd in enumerate(high):
        os.dup2(fd, target)
    result_fd = int(request["result_fd"])
    if high_result is not None and result_fd >= 0:
        os.dup2(high_result, result_fd)
    close_all_but({0, 1, 2, ctl} | ({result_fd} if high_result is not None else set()))
    os.chdir(request["workdir"])
    drop_capabilities()
    install_seccomp(program)


def init_main(request: dict, program: bytes, fds: list[int]) -> None:
    """The run's pid 1: announces itself, waits for its cgroups, builds its view, starts the
    target and reaps until it ends."""
    ctl, go, stdin, stdout, stderr = fds[:5]
    result = fds[5] if len(fds) > 5 else None
    send_with_credentials(ctl, frame(MSG_HELLO, "0"))
    if os.read(go, 1) != GO:
        os._exit(SETUP_FAILED)
    os.close(go)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
          f"mode=1777,size={int(request['scratch_bytes'])}")
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=64m")
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    install_files(stdin)
    try:
        socket.sethostname(str(request["hostname"]))
    except OSError as exc:
        send(ctl, MSG_WARNING, f"sethostname: {exc}")
    set_limit(resource.RLIMIT_CORE, 0, 0)
    set_limit(resource.RLIMIT_FSIZE, int(request["file_size"]), int(request["file_size"]))
    set_limit(resource.RLIMIT_NOFILE, int(request["open_files"]), int(request["open_files"]))
    cpu = int(request["cpu_seconds"])
    set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    target = os.fork()
    if target == 0:
        try:
            target_main(request, program, ctl, [stdin, stdout, stderr], result)
        except BaseException as exc:  # noqa: BLE001 - target_main reports its own steps
            send(ctl, MSG_ERROR, f"target: {exc}")
        os._exit(SETUP_FAILED)
    for fd in (stdin, stdout, stderr, result):
        if fd is not None:
            os.close(fd)
    # pid 1 ignores what it has no handler for: nothing from inside may interrupt the reaping.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    any_sigsys = 0
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            status = 0
            break
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS:
            any_sigsys = 1
        if pid == target:
            break
    send(ctl, MSG_STATUS, f"{status} {any_sigsys}")
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def setup_main(request: dict, program: bytes, fds: list[int]) -> None:
    """The zygote's fork: new namespaces, owned by a new user namespace mapped onto our ids."""
    ctl = fds[0]
    try:
        close_all_but(set(fds))
        uid, gid = os.getuid(), os.getgid()
        check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
                           CLONE_NEWUTS | CLONE_NEWNET), "unshare")
        # A non-dumpable process's /proc files belong to root: its maps could not be written.
        # Nothing can reach this process meanwhile: runs see only their own pid namespaces.
        check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
        write_file("/proc/self/setgroups", "deny")
        write_file("/proc/self/uid_map", f"{uid} {uid} 1\n")
        write_file("/proc/self/gid_map", f"{gid} {gid} 1\n")
        set_non_dumpable()
        if os.fork() == 0:
            try:
                init_main(request, program, fds)
            except BaseException as exc:  # noqa: BLE001
                send(ctl, MSG_ERROR, str(exc))
            os._exit(SETUP_FAILED)
    except BaseException as exc:  # noqa: BLE001
        send(ctl, MSG_ERROR, str(exc))
        os._exit(SETUP_FAILED)
    os._exit(0)


def set_non_dumpable() -> None:
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "PR_SET_DUMPABLE")


def settle_threads() -> None:
    """A throwaway fork runs the libraries' fork handlers: numpy's OpenBLAS joins the thread pool
    it started at import (each process that calls BLAS later starts its own again), so the
    zygote is left with its one thread, which every fork copies."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(control: socket.socket) -> int:
    while True:
        reap()
        try:
            data, fds, _, _ = socket.recv_fds(control, 1 << 20, 8)
        except InterruptedError:
            continue
        if not data:
            return 0  # the judge closed the socket
        try:
            header, program = data.split(b"\0", 1)
            request = json.loads(header)
            threads = thread_count()
            if threads != 1:
                control.send(f"{threads} threads at fork time; a fork copies only one".encode())
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            if os.fork() == 0:
                control.detach()
                setup_main(request, program, list(fds))
        except (ValueError, OSError) as exc:
            control.send(f"bad request: {exc}"[:2000].encode())
        finally:
            for fd in fds:
                os.close(fd)


def main() -> int:
    control = socket.socket(fileno=CONTROL_FD)
    try:
        from .harness import preload, warm_triton_imports, warm_triton_keys

        preload()
        warm_triton_keys()
        warm_triton_imports()
        import numpy  # noqa: F401
        import random  # noqa: F401

        set_non_dumpable()
        settle_threads()
        threads = thread_count()
        if threads != 1:
            control.send(f"{threads} threads after the imports; a fork copies only one".encode())
            return 1
    except BaseException as exc:  # noqa: BLE001
        control.send(f"the imports failed: {type(exc).__name__}: {exc}"[:2000].encode())
        return 1
    send_with_credentials(CONTROL_FD, b"ready")
    return serve(control)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
