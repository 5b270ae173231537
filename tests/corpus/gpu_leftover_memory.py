# expect: wrong_answer
# device: gpu
# Probes uninitialised device memory for an expected output left behind by a judge that
# computed the reference on the same device in the same process, or by an earlier tenant:
# large torch.empty buffers, scanned for the first window of the output's size that is not all
# zeros and not one of the inputs. The harness computes the reference in its own process, and
# the driver hands out cleared memory, so whatever is found is not the answer.
import torch

CHUNK = 1 << 28  # elements of float16: 512 MiB per buffer


def custom_kernel(data):
    a, b = data
    n = a.numel()
    pools = []  # all kept, so each is fresh memory rather than the cached block of the last
    for _ in range(8):
        pool = torch.empty(CHUNK, dtype=a.dtype, device=a.device)
        pools.append(pool)
        for start in range(0, CHUNK - n + 1, max(n, 1 << 20)):
            window = pool[start:start + n].view_as(a)
            if torch.count_nonzero(window) > 0 and not torch.equal(window, a) \
                    and not torch.equal(window, b):
                return window.clone()
    return torch.empty_like(a)
