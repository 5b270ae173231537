"""The checker's warm-up (harness.Evaluation.warm_checker): on a GPU the first check in a fresh
CUDA context loads the reference's and the comparison's kernels, so the harness runs the check
once on the reference's own output while the runner makes its first call. It must run while the
runner works (after the command is sent, before its reply is read), only once, and change
nothing a verdict depends on, whatever the reference does in it. Needs torch (run with the
harness interpreter)."""

import os
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

from kj_harness import harness  # noqa: E402

REFERENCE = textwrap.dedent('''
    import torch

    calls = []
    FAIL = {fail!r}

    def generate_input(size, seed):
        calls.append(("generate", seed))
        g = torch.Generator().manual_seed(seed)
        return torch.randn(size, generator=g), torch.empty(size)

    def ref_kernel(data):
        calls.append(("ref_kernel",))
        if FAIL == "ref_kernel":
            raise RuntimeError("the reference failed")
        a, out = data
        out.copy_(a * 2)
        return out

    def check_implementation(data, output):
        calls.append(("check",))
        if FAIL == "check" or (FAIL == "first check" and calls.count(("check",)) == 1):
            raise torch.cuda.OutOfMemoryError("out of memory")
        expected = ref_kernel(data)
        return bool(torch.allclose(expected, output)), ""
''')


class FakeRunner:
    """Answers `run` with the reference's own output, recording when each step happened."""

    def __init__(self, evaluation, log):
        self.evaluation = evaluation
        self.log = log
        self.pending = None

    def post(self, header):
        self.log.append("post")
        self.pending = header

    def ask(self, header):
        self.post(header)
        return self.collect()

    def collect(self):
        self.log.append("collect")
        data = self.evaluation.generate(self.pending["args"])
        output = self.evaluation.reference.ref_kernel(data)
        return {"ok": True, "elapsed_ns": 1.0}, output


class WarmCheckerTest(unittest.TestCase):
    def evaluation(self, fail=None):
        task = tempfile.mkdtemp(prefix="kj-warm-checker-")
        self.addCleanup(shutil.rmtree, task, True)
        with open(os.path.join(task, "reference.py"), "w") as f:
            f.write(REFERENCE.format(fail=fail))
        sys.modules.pop("reference", None)
        sys.path.insert(0, task)
        self.addCleanup(sys.path.remove, task)
        job = {"device": "cpu", "mode": "test", "task_dir": task, "tests": []}
        evaluation = harness.Evaluation(job, reporter=None)
        evaluation.import_reference()
        self.assertFalse(evaluation.checker_cold)  # on a CPU there is nothing to warm
        evaluation.checker_cold = True  # as on a GPU
        log = []
        evaluation.runners["a"] = FakeRunner(evaluation, log)
        real_warm = evaluation.warm_checker

        def warm(args):
            log.append("warm")
            real_warm(args)

        evaluation.warm_checker = warm
        real_read = harness.read_output
        harness.read_output = lambda reply, blob, device: (blob, None)
        self.addCleanup(setattr, harness, "read_output", real_read)
        return evaluation, log

    def test_runs_once_while_the_runner_works(self):
        evaluation, log = self.evaluation()
        args = {"size": 64, "seed": 7}
        first = evaluation.check_case(args)
        second = evaluation.check_case(args)
        self.assertEqual(log, ["post", "warm", "collect", "post", "collect"])
        self.assertEqual((first["status"], second["status"]), ("pass", "pass"))
        # The warm-up checked the reference's own output: a reference call and a check.
        reference_calls = [c[0] for c in evaluation.reference.calls]
        self.assertGreaterEqual(reference_calls.count("check"), 3)

    def test_a_failing_warm_up_is_silent(self):
        for fail in ("ref_kernel", "check"):
            with self.subTest(fail=fail):
                evaluation, _ = self.evaluation(fail)
                evaluation.warm_checker({"size": 64, "seed": 7})  # raises nothing
                self.assertFalse(evaluation.checker_cold)

    def test_a_check_failing_only_in_the_warm_up_leaves_the_verdict(self):
        evaluation, log = self.evaluation("first check")
        fields = evaluation.check_case({"size": 64, "seed": 7})
        self.assertEqual(log, ["post", "warm", "collect"])
        self.assertEqual(fields["status"], "pass")


if __name__ == "__main__":
    unittest.main()
