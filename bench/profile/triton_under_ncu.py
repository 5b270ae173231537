"""A plain Triton vector add, called once inside the NVTX range `kj_profile`, for looking at how
Nsight Compute treats Triton outside the judge.

    python3 triton_under_ncu.py direct   # compile and launch in this process
    python3 triton_under_ncu.py fork     # as the judge's runner does: fork (no exec), then CUDA
    python3 triton_under_ncu.py both     # fork; the parent uses CUDA too (as the judge's checker
                                         # does) and waits on a pipe while the child works
    python3 triton_under_ncu.py big      # fork; the child holds 8 GiB of device memory
    python3 triton_under_ncu.py closefds # fork; the child closes every descriptor but 1, 2 and
                                         # those open when this script started
    python3 triton_under_ncu.py nondump  # fork from a parent made non-dumpable (PR_SET_DUMPABLE 0)
    python3 triton_under_ncu.py cpuop    # fork after a CPU operator ran in the parent (as the
                                         # judge's harness warms torch's CPU dispatch)

Each process lists its open descriptors (and what they are) to stderr.

Prints how long the compile and the call took, to stderr, with the process ids.
"""

import ctypes
import os
import sys
import time


def descriptors() -> dict[int, str]:
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass
    return found


AT_START = descriptors()

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def work(hold_bytes: int = 0) -> None:
    start = time.monotonic()
    held = torch.empty(hold_bytes, dtype=torch.uint8, device="cuda") if hold_bytes else None
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK=1024)  # compiles
    torch.cuda.synchronize()
    compiled = time.monotonic()
    print(f"pid {os.getpid()}: compiled in {compiled - start:.1f} s", file=sys.stderr, flush=True)
    torch.cuda.nvtx.range_push("kj_profile")
    add_kernel[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y)
    del held
    print(f"pid {os.getpid()} after CUDA: {descriptors()}", file=sys.stderr, flush=True)
    print(f"pid {os.getpid()}: profiled call done in {time.monotonic() - compiled:.1f} s",
          file=sys.stderr, flush=True)


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "direct"
    if mode == "direct":
        work()
        return 0
    print(f"pid {os.getpid()} at start: {AT_START}", file=sys.stderr, flush=True)
    if mode == "cpuop":
        torch.ones(8).add_(1).sum().item()
        torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled())
    if mode == "nondump":
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.read(go_r, 1)
            print(f"child {os.getpid()} after fork: {descriptors()}", file=sys.stderr, flush=True)
            if mode == "closefds":
                keep = {1, 2} | {fd for fd in AT_START if fd > 3}
                for fd in descriptors():
                    if fd not in keep:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
            work(8 << 30 if mode == "big" else 0)
            os._exit(0)
        except BaseException as e:  # noqa: BLE001 - report and leave
            print(f"child failed: {e!r}", file=sys.stderr, flush=True)
            os._exit(1)
    if mode == "both":
        mine = torch.ones(1 << 20, device="cuda")  # a context and a kernel in the parent
        torch.cuda.synchronize()
        print(f"parent {os.getpid()}: has a CUDA context", file=sys.stderr, flush=True)
    os.write(go_w, b"x")
    _, status = os.waitpid(pid, 0)
    if mode == "both":
        assert float(mine.sum()) == float(1 << 20)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
