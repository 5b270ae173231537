# expect: security_violation
# Resource limits: raising its own hard limits is refused (no CAP_SYS_RESOURCE), so it turns
# on the harness instead, which runs as the same user: prlimit() on another process could
# shrink the harness's address space or open files so that the trusted side fails and the
# run looks like the judge's own fault. The seccomp filter kills prlimit on another process.
import os
import resource


def custom_kernel(data):
    for limit in (resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE, resource.RLIMIT_CPU,
                  resource.RLIMIT_FSIZE, resource.RLIMIT_AS):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            try:
                resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                raise AssertionError(f"raised hard limit {limit} past {hard}")
            except (ValueError, OSError):
                pass
    resource.prlimit(os.getppid(), resource.RLIMIT_AS, (64 << 20, 64 << 20))
    resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (3, 3))
    a, b = data
    return a + b
