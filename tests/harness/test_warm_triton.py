"""The zygote's Triton warm-up (harness.warm_triton_keys, docs/sandbox.md "Zygote"): the hash of
Triton's own files is computed once in the process that forks runs, so a forked run finds it
ready instead of hashing 400 MB of libtriton.so on its first kernel; under Triton's interpreter
(a CPU run) nothing is warmed. The modules Triton imports at a process's first launch are
imported there too (harness.warm_triton_imports). Needs torch and triton (run with the harness
interpreter)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

from kj_harness import harness  # noqa: E402

try:
    from triton.runtime.cache import triton_key
except ImportError:  # another Triton layout: warm_triton_keys reports triton_key False
    triton_key = None


def in_child(check) -> int:
    """Runs check() in a forked child; its exit status: 0 if check() returned True."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if check() else 1)
        except BaseException:  # noqa: BLE001
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@unittest.skipIf(triton_key is None, "this Triton has no triton.runtime.cache.triton_key")
class WarmTritonTest(unittest.TestCase):
    def setUp(self):
        self.interpret = os.environ.pop("TRITON_INTERPRET", None)
        self.addCleanup(self.restore)
        triton_key.cache_clear()

    def restore(self):
        if self.interpret is not None:
            os.environ["TRITON_INTERPRET"] = self.interpret
        triton_key.cache_clear()

    def test_a_fork_of_a_warmed_process_finds_the_key_computed(self):
        self.assertEqual(in_child(lambda: triton_key.cache_info().currsize == 1), 1,
                         "a fresh process has no key yet: the check below could not fail")
        warmed = harness.warm_triton_keys()
        self.assertTrue(warmed["triton_key"])
        expected = triton_key()
        # The child computes nothing: its first call is a hit on what the parent computed.
        self.assertEqual(in_child(lambda: triton_key.cache_info().currsize == 1
                                  and triton_key.cache_info().misses == 1
                                  and triton_key() == expected
                                  and triton_key.cache_info().misses == 1), 0)

    def test_nothing_is_warmed_under_the_interpreter(self):
        os.environ["TRITON_INTERPRET"] = "1"
        self.assertEqual(harness.warm_triton_keys(), {})
        self.assertEqual(triton_key.cache_info().currsize, 0)


class WarmTritonImportsTest(unittest.TestCase):
    def test_a_fork_finds_the_modules_of_a_first_launch_imported(self):
        import importlib.util
        import threading

        import torch

        expected = [n for n in harness.TRITON_LAUNCH_IMPORTS
                    if importlib.util.find_spec(n.rpartition(".")[0]) is not None
                    and importlib.util.find_spec(n) is not None]
        if not expected:
            self.skipTest("this Triton has none of the modules its first launch imports")
        self.assertEqual(harness.warm_triton_imports(), expected)
        self.assertEqual(in_child(lambda: all(n in sys.modules for n in expected)), 0)
        # Safe to fork after: no thread started, no CUDA.
        self.assertEqual(threading.active_count(), 1)
        self.assertFalse(torch.cuda.is_initialized())


if __name__ == "__main__":
    unittest.main()
