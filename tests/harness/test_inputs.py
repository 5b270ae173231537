"""Inputs generated the same way in the runner and in the checker (harness.seed_global_generators):
before each generate_input, the global generators a problem may draw from (torch's CPU one,
CUDA's default ones, Python's random) are seeded from the case's arguments, exactly as
torch.manual_seed and random.seed would, so both processes draw the same inputs whatever either
drew before. Needs torch (run with the harness interpreter)."""

import hashlib
import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

import torch  # noqa: E402

from kj_harness.harness import seed_global_generators  # noqa: E402


def draws() -> tuple:
    return torch.randn(8).tolist(), torch.randint(0, 1 << 30, (4,)).tolist(), random.random()


class SeedGlobalGenerators(unittest.TestCase):
    def test_the_same_draws_as_torch_manual_seed(self):
        args = {"size": 1024, "seed": 31232}
        seed = int.from_bytes(hashlib.sha256(json.dumps(args, sort_keys=True).encode())
                              .digest()[:8], "little") >> 1
        torch.manual_seed(seed)
        random.seed(seed)
        expected = draws()
        torch.randn(100)  # whatever was drawn in between
        random.random()
        seed_global_generators(args)
        self.assertEqual(draws(), expected)

    def test_other_arguments_draw_other_inputs(self):
        seed_global_generators({"size": 1024, "seed": 1})
        first = draws()
        seed_global_generators({"size": 1024, "seed": 2})
        self.assertNotEqual(draws(), first)
        seed_global_generators({"size": 1024, "seed": 1})
        self.assertEqual(draws(), first)

    @unittest.skipUnless(torch.cuda.is_available(), "needs a GPU")
    def test_cuda_default_generators_are_seeded_too(self):
        torch.cuda.init()
        seed_global_generators({"seed": 7})
        first = torch.randn(8, device="cuda").tolist()
        torch.randn(100, device="cuda")
        seed_global_generators({"seed": 7})
        self.assertEqual(torch.randn(8, device="cuda").tolist(), first)


if __name__ == "__main__":
    unittest.main()
