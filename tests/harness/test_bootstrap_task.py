"""kj bootstrap's inputs and comparison (harness/kj_harness/bootstrap.py), as a row sees them: a
random variant of a recorded call keeps its shapes, dtypes, sign range and index range, is the
same for the same seed in the runner and the checker, and is drawn on the row's device; outputs
are compared with the tolerances of their dtype, with the count and the first element that
differs. Needs torch (run with the harness interpreter); CUDA parts run where a GPU is."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

import torch  # noqa: E402

from kj_harness import bootstrap  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def variant(value, seed, device="cpu"):
    return bootstrap._randomize(value, torch.Generator(device=device).manual_seed(seed), device)


class VariantTest(unittest.TestCase):
    def test_keeps_structure_shapes_and_dtypes_on_the_device(self):
        recorded = ([torch.randn(3, 4), torch.randn(5, dtype=torch.float64)],
                    {"half": torch.randn(2, 2).half(), "bf": torch.randn(7).bfloat16(),
                     "index": torch.tensor([0, 3, 9]), "mask": torch.tensor([True, False]),
                     "scale": 0.5, "empty": torch.empty(0, 3)})
        for device in DEVICES:
            got = variant(recorded, 7, device)
            self.assertIsInstance(got, tuple)
            self.assertIsInstance(got[0], list)
            self.assertEqual(got[1]["scale"], 0.5)
            for old, new in [(recorded[0][0], got[0][0]), (recorded[0][1], got[0][1])] + [
                    (recorded[1][k], got[1][k]) for k in ("half", "bf", "index", "mask", "empty")]:
                self.assertEqual(new.shape, old.shape)
                self.assertEqual(new.dtype, old.dtype)
                self.assertEqual(new.device.type, device)
            self.assertFalse(torch.equal(got[0][0].cpu(), recorded[0][0]), "not a fresh draw")

    def test_same_seed_same_inputs_another_seed_others(self):
        # The runner and the checker each make a timed call's inputs from its seed.
        recorded = (torch.randn(64, 64), torch.randint(0, 10, (32,)))
        for device in DEVICES:
            a, b, c = (variant(recorded, s, device) for s in (11, 11, 12))
            for x, y in zip(a, b):
                self.assertTrue(torch.equal(x, y))
            self.assertFalse(torch.equal(a[0], c[0]))

    def test_sign_range_spread_and_mean_kept(self):
        positive = torch.rand(100_000) * 3  # e.g. variances, lengths
        signed = torch.randn(100_000) * 2 + 5
        for device in DEVICES:
            p, s = variant((positive, signed), 3, device)
            self.assertGreaterEqual(float(p.min()), 0.0)
            self.assertAlmostEqual(float(s.mean()), float(signed.mean()), delta=0.05)
            self.assertAlmostEqual(float(s.std()), float(signed.std()), delta=0.05)

    def test_integers_stay_valid_indices(self):
        index = torch.tensor([2, 5, 7, 7, 3], dtype=torch.int32)
        for device in DEVICES:
            got = variant(index, 5, device)
            self.assertEqual(got.dtype, torch.int32)
            self.assertGreaterEqual(int(got.min()), 2)
            self.assertLessEqual(int(got.max()), 7)


class CompareTest(unittest.TestCase):
    def test_within_tolerance_passes_with_its_largest_error(self):
        for device in DEVICES:
            expected = torch.ones(100, device=device)
            got = expected + 5e-5
            self.assertAlmostEqual(bootstrap.compare(got, expected), 5e-5, delta=1e-6)

    def test_a_difference_names_its_count_and_first_element(self):
        for device in DEVICES:
            expected = torch.zeros(4, 5, device=device)
            got = expected.clone()
            got[1, 2] = 1.0
            got[3, 0] = -1.0
            with self.assertRaisesRegex(bootstrap.Mismatch,
                                        r"output: 2 of 20 elements differ.*at \(1, 2\) got 1 "
                                        r"expected 0"):
                bootstrap.compare(got, expected)

    def test_a_prefix_sum_is_held_to_its_own_scale(self):
        # An honest float32 row cumsum (4096 long) summed in another order than torch's: an
        # element near zero carries the rounding of partial sums of magnitude ~45 (seen on a
        # GPU: 2.6e-4 off at an expected 0.019, rejected with a flat atol of 1e-4).
        torch.manual_seed(0)
        x = torch.randn(64, 4096, dtype=torch.float64)
        expected = torch.cumsum(x, dim=1).float()
        blocked = torch.cumsum(x.float().view(64, 64, 64), dim=2)
        carry = torch.cumsum(blocked[:, :, -1], dim=1) - blocked[:, :, -1]
        got = (blocked + carry.unsqueeze(2)).view(64, 4096)
        for device in DEVICES:
            e, g = expected.to(device), got.to(device)
            near_zero = int(e[3].abs().argmin())
            g[3, near_zero] = e[3, near_zero] + 3e-4
            self.assertLess(bootstrap.compare(g, e), 1e-2)
            # Wrong by a thousandth of the output's scale (a half-precision shortcut) still fails.
            with self.assertRaisesRegex(bootstrap.Mismatch, "median"):
                bootstrap.compare(e + 1e-3 * float(e.abs().median()), e)
            # An output of values near 1 keeps the flat tolerance, a few huge elements in it too.
            small = torch.full((100,), 0.5, device=device)
            with self.assertRaises(bootstrap.Mismatch):
                bootstrap.compare(small + 3e-4, small)
            small[:3] = 1e6
            with self.assertRaises(bootstrap.Mismatch):
                bootstrap.compare(small + 3e-4, small)

    def test_non_finite_values_must_match(self):
        for device in DEVICES:
            expected = torch.tensor([1.0, float("nan"), float("inf")], device=device)
            self.assertEqual(bootstrap.compare(expected.clone(), expected), 0.0)
            with self.assertRaises(bootstrap.Mismatch):
                bootstrap.compare(torch.tensor([1.0, 2.0, float("inf")], device=device), expected)
            with self.assertRaises(bootstrap.Mismatch):
                bootstrap.compare(torch.tensor([1.0, float("nan"), -float("inf")], device=device),
                                  expected)

    def test_integers_exact_and_dtypes_shapes_checked(self):
        for device in DEVICES:
            expected = torch.arange(6, device=device)
            with self.assertRaisesRegex(bootstrap.Mismatch, r"1 of 6 elements differ .*at \(5,\)"):
                bootstrap.compare(torch.tensor([0, 1, 2, 3, 4, 9], device=device), expected)
            with self.assertRaisesRegex(bootstrap.Mismatch, "dtype"):
                bootstrap.compare(expected.float(), expected)
            with self.assertRaisesRegex(bootstrap.Mismatch, "shape"):
                bootstrap.compare(expected[:3], expected)

    def test_an_output_on_the_host_is_compared_with_one_on_the_device(self):
        expected = torch.ones(3, device=DEVICES[-1])
        self.assertEqual(bootstrap.compare(torch.ones(3), expected), 0.0)

    def test_structures_and_tolerance_by_dtype(self):
        expected = (torch.ones(3, dtype=torch.float16), {"n": 2, "x": 1.5})
        got = (torch.ones(3, dtype=torch.float16) * 1.005, {"n": 2, "x": 1.5})
        self.assertGreater(bootstrap.compare(got, expected), 0.0)  # half: 1e-2
        with self.assertRaisesRegex(bootstrap.Mismatch, r"output\[1\]\['n'\]"):
            bootstrap.compare((got[0], {"n": 3, "x": 1.5}), expected)


if __name__ == "__main__":
    unittest.main()
