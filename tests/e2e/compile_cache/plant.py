# expect: accepted
# Leaves a file in Triton's cache directory and says on stdout whether an earlier run's was
# there: the judge keeps the file for the next run of this same file by the same user, and only
# for it (tests/e2e/compile_cache_test.py).
import os

import torch

from task import input_t, output_t

MARK = os.path.join(os.environ["TRITON_CACHE_DIR"], "KJCACHEPLANT", "plant.json")
print("cache: found" if os.path.exists(MARK) else "cache: empty", flush=True)
os.makedirs(os.path.dirname(MARK), exist_ok=True)
with open(MARK, "w") as f:
    f.write('{"planted": true}')


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return torch.add(a, b)
