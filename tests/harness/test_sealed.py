"""Sealed timing's decisions (harness/kj_harness/sealed.py and Evaluation.seal/timed_benchmark):
which recorded calls are replayed, how a replay's addresses are bound to fresh buffers, and what
a ranked case reports when it cannot be sealed. The recording and the replay themselves need a
GPU (docs/sealed-timing.md has their measurements); here the shim's records are written by hand
in its format."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

from kj_harness import harness, sealed  # noqa: E402

HASH = "ab" * 32


def tensor(ptr, nbytes, shape, dtype="float32"):
    return {"storage_ptr": ptr, "storage_nbytes": nbytes, "storage_offset": 0, "shape": shape,
            "stride": [1], "dtype": dtype, "device": "cuda:0"}


def recording(base, grid=(4, 1, 1), scalar=1024, extra_ops=(), output_at=None, stream=7,
              structure="tensor", scratch=0x9000_0000):
    """A vector add as the shim records it: a(base), b(base+4096), out(base+8192) and a
    scalar n, plus a scratch word; `base` moves the buffers as a second call's would."""
    out_ptr = base + 8192 if output_at is None else output_at
    params = (base.to_bytes(8, "little") + (base + 4096).to_bytes(8, "little")
              + out_ptr.to_bytes(8, "little") + scratch.to_bytes(8, "little")
              + scalar.to_bytes(4, "little") + b"\0" * 4)
    ptrs = [{"at": 0, "value": base, "range": [base, 4096]},
            {"at": 8, "value": base + 4096, "range": [base + 4096, 4096]},
            {"at": 16, "value": out_ptr, "range": [out_ptr, 4096]},
            {"at": 24, "value": scratch, "range": [scratch, 1 << 20]}]
    lines = [
        {"ev": "begin", "serial": 1, "attr_size": 72},
        {"ev": "image", "index": 0, "hash": HASH, "kind": "cubin", "size": 10, "file": "x"},
        {"ev": "function", "id": 0, "handle": 1, "kernel": False, "name": "add_kernel",
         "image": HASH, "params": [[0, 8], [8, 8], [16, 8], [24, 8], [32, 4]], "attrs": []},
        {"ev": "launch", "seq": 0, "api": "cuLaunchKernelEx", "ptsz": 0, "result": 0,
         "function": 0, "grid": list(grid), "block": [128, 1, 1], "smem": 0, "stream": stream,
         "param_source": "kernelParams", "params": params.hex(), "ptrs": ptrs},
        *extra_ops,
        {"ev": "end", "calls": 1 + len(extra_ops)},
    ]
    tensors = {"input": [tensor(base, 4096, [1024]), tensor(base + 4096, 4096, [1024])],
               "output": [tensor(out_ptr, 4096, [1024])]}
    return {"jsonl": "\n".join(json.dumps(x) for x in lines) + "\n", "tensors": tensors,
            "structure": structure}


class Examine(unittest.TestCase):
    def test_calls_that_differ_only_in_buffers_are_replayed_on_fresh_ones(self):
        the_plan, reasons = sealed.examine([recording(0x1000_0000), recording(0x2000_0000)])
        self.assertEqual(reasons, [])
        (step,) = the_plan["steps"]
        self.assertEqual(step["name"], "add_kernel")
        self.assertEqual(the_plan["scratch"], [1 << 20])
        bases = {("input", 0): 0x7000_0000, ("input", 1): 0x7100_0000,
                 ("output", 0): 0x7200_0000, ("scratch", 0): 0x7300_0000}
        raw = sealed.patched_params(step, bases)
        words = [int.from_bytes(raw[i:i + 8], "little") for i in range(0, 32, 8)]
        self.assertEqual(words, [0x7000_0000, 0x7100_0000, 0x7200_0000, 0x7300_0000])
        self.assertEqual(int.from_bytes(raw[32:36], "little"), 1024)  # the scalar is kept

    def test_a_grid_chosen_from_the_input_values_is_timed_in_process(self):
        _, reasons = sealed.examine([recording(0x1000_0000), recording(0x2000_0000, grid=(8, 1, 1))])
        self.assertTrue(any("grid" in r for r in reasons), reasons)

    def test_a_scalar_chosen_from_the_input_values_is_timed_in_process(self):
        _, reasons = sealed.examine([recording(0x1000_0000), recording(0x2000_0000, scalar=7)])
        self.assertIn("call 0: parameter bytes other than addresses differ", reasons)

    def test_an_output_that_is_an_input_in_one_call_only_is_timed_in_process(self):
        # Call B writes its answer into its first input's buffer instead of the output.
        b = recording(0x2000_0000, output_at=0x2000_0000)
        b["tensors"]["output"] = [tensor(0x2000_8000, 4096, [1024])]
        _, reasons = sealed.examine([recording(0x1000_0000), b])
        self.assertTrue(any("points at" in r for r in reasons), reasons)

    def test_what_a_replay_cannot_reproduce_is_named(self):
        to_host = {"ev": "memcpy", "seq": 1, "api": "cuMemcpyDtoHAsync", "result": 0,
                   "kind": "DtoH", "dst": 1, "src": 0x1000_0000, "bytes": 4, "stream": 7,
                   "src_range": [0x1000_0000, 4096]}
        graph = {"ev": "graph_launch", "seq": 1, "api": "cuGraphLaunch", "result": 0, "stream": 7}
        other = dict(to_host, src=0x2000_0000, src_range=[0x2000_0000, 4096])
        cases = {
            "copies to the host": ([to_host], [other]),
            "cuGraphLaunch": ([graph], [graph]),
        }
        for expected, (extra_a, extra_b) in cases.items():
            _, reasons = sealed.examine([recording(0x1000_0000, extra_ops=extra_a),
                                         recording(0x2000_0000, extra_ops=extra_b)])
            self.assertTrue(any(expected in r for r in reasons), (expected, reasons))
        second_stream = {"ev": "memset", "seq": 1, "api": "cuMemsetD32Async", "result": 0,
                         "elem": 4, "value": 0, "count": 1, "dst": 0x9000_0000, "stream": 9,
                         "dst_range": [0x9000_0000, 1 << 20]}
        _, reasons = sealed.examine([recording(0x1000_0000, extra_ops=[second_stream]),
                                     recording(0x2000_0000, extra_ops=[second_stream])])
        self.assertIn("2 streams", reasons)
        _, reasons = sealed.examine([recording(0x1000_0000, structure="dict"),
                                     recording(0x2000_0000, structure="dict")])
        self.assertTrue(any("not a tensor" in r for r in reasons), reasons)

    def test_a_garbled_recording_is_a_reason_not_an_exception(self):
        broken = recording(0x1000_0000)
        broken["jsonl"] = "{not json\n"
        the_plan, reasons = sealed.examine([broken, recording(0x2000_0000)])
        self.assertIsNone(the_plan)
        self.assertIn("cannot be read", reasons[0])
        unfinished = recording(0x1000_0000)
        unfinished["jsonl"] = unfinished["jsonl"].replace('{"ev": "end", "calls": 1}\n', "")
        self.assertIsNone(sealed.examine([unfinished, recording(0x2000_0000)])[0])
        self.assertIsNone(sealed.examine([recording(0x1000_0000)])[0])
        missing = recording(0x1000_0000)
        del missing["tensors"]
        self.assertIsNone(sealed.examine([missing, recording(0x2000_0000)])[0])

    def test_an_image_whose_bytes_are_not_the_recorded_ones_is_refused(self):
        import hashlib
        import tempfile

        with tempfile.TemporaryDirectory() as directory:
            data = b"\x7fELF image"
            digest = hashlib.sha256(data).hexdigest()
            with open(os.path.join(directory, f"{digest}.cubin"), "wb") as f:
                f.write(data)
            self.assertEqual(sealed.read_image(directory, digest, "cubin"), data)
            with open(os.path.join(directory, f"{digest}.cubin"), "wb") as f:
                f.write(b"\x7fELF other")
            with self.assertRaises(sealed.BadRecord):
                sealed.read_image(directory, digest, "cubin")
            with self.assertRaises(sealed.BadRecord):
                sealed.read_image(directory, "../" + digest[3:], "cubin")


class Reporter:
    def __init__(self):
        self.events = []

    def emit(self, event, **fields):
        self.events.append((event, fields))


def evaluation(device="cuda:0", mode="leaderboard", **timing_settings):
    job = {"mode": mode, "device": device, "task_dir": "/nonexistent", "tests": [],
           "benchmarks": [], "timing": timing_settings}
    return harness.Evaluation(job, Reporter())


def timed(runner):
    """time_rounds' result for one runner: its keys only, as time_rounds returns them."""
    return {"samples": {runner: [5000.0, 5100.0]}, "clocks": {runner: [None, None]},
            "infos": {runner: {"clock": "cuda_event", "method": "per_call"}},
            "stop_reason": "precision", "prepare_s": 0.1}


class RankedCase(unittest.TestCase):
    """What a timed case reports, given what sealing it came to."""

    def run_case(self, e, seal, outcomes):
        e.seal = lambda case, secret: seal
        asked = []

        def time_and_recheck(runner, args):
            asked.append(runner)
            return outcomes[runner]

        e.time_and_recheck = time_and_recheck
        e.runners = {"a": FakeRunner({}), harness.SEALED: FakeRunner({})}
        passed = e.timed_benchmark(0, {"size": 1024, "seed": 1}, "ranked", 5)
        (event, fields), = [x for x in e.report.events if x[0] == "benchmark"]
        return passed, fields, asked

    def test_a_sealed_case_says_so(self):
        e = evaluation()
        passed, fields, asked = self.run_case(
            e, (harness.SEALED, "", 0.2),
            {harness.SEALED: ("pass", timed(harness.SEALED), {"timing": 1.0})})
        self.assertTrue(passed)
        self.assertEqual((fields["timing"], asked), ("sealed", [harness.SEALED]))
        self.assertNotIn("timing_note", fields)
        self.assertEqual(fields["seconds"]["seal"], 0.2)
        # What the replay kept cached goes back before the next case records in the other runner.
        self.assertEqual(e.runners[harness.SEALED].asked, ["release"])

    def test_a_case_that_cannot_be_sealed_is_timed_in_process_with_the_reason(self):
        passed, fields, asked = self.run_case(
            evaluation(), ("a", "call 0: grid [4, 1, 1] vs [8, 1, 1]", 0.1),
            {"a": ("pass", timed("a"), {"timing": 1.0})})
        self.assertTrue(passed)
        self.assertEqual((fields["timing"], asked), ("in_process", ["a"]))
        self.assertIn("grid", fields["timing_note"])

    def test_a_replay_that_fails_while_timed_falls_back_never_rejects(self):
        passed, fields, asked = self.run_case(
            evaluation(), (harness.SEALED, "", 0.1),
            {harness.SEALED: ("recheck", {"status": "fail", "message": "timed call 3 wrong"}, {}),
             "a": ("pass", timed("a"), {"timing": 1.0})})
        self.assertTrue(passed)
        self.assertEqual(asked, [harness.SEALED, "a"])
        self.assertEqual(fields["timing"], "in_process")
        self.assertIn("timed call 3 wrong", fields["timing_note"])

    def test_a_problem_that_requires_sealed_timing_fails_a_case_that_is_not(self):
        passed, fields, _ = self.run_case(
            evaluation(require_sealed=1), ("a", "2 streams", 0.1),
            {"a": ("pass", timed("a"), {"timing": 1.0})})
        self.assertFalse(passed)
        self.assertEqual(fields["status"], "fail")
        self.assertIn("ranked_timing: sealed", fields["message"])
        self.assertIn("2 streams", fields["message"])

    def test_a_wrong_in_process_output_still_fails(self):
        failure = {"status": "fail", "message": "timed call 2 produced a wrong output"}
        passed, fields, _ = self.run_case(evaluation(), ("a", "2 streams", 0.1),
                                          {"a": ("recheck", failure, {})})
        self.assertFalse(passed)
        self.assertEqual(fields["message"], failure["message"])

    def test_on_a_cpu_the_case_is_in_process_without_a_note(self):
        e = evaluation(device="cpu", require_sealed=1)
        self.assertEqual(e.sealed_why_not, "no GPU")
        passed, fields, _ = self.run_case(e, ("a", e.sealed_why_not, 0.0),
                                          {"a": ("pass", timed("a"), {"timing": 1.0})})
        self.assertTrue(passed)  # no GPU, nothing to seal: the requirement is a GPU's
        self.assertEqual(fields["timing"], "in_process")
        self.assertNotIn("timing_note", fields)

    def test_why_a_run_is_not_sealed(self):
        self.assertEqual(evaluation(sealed=0).sealed_why_not, "sealed timing is off for this run")
        self.assertEqual(evaluation(mode="compare").sealed_why_not, "mode compare")
        saved = os.environ.pop("KJ_RECORD_SHIM", None)
        try:
            self.assertEqual(evaluation().sealed_why_not, "the recording shim is not preloaded")
        finally:
            if saved is not None:
                os.environ["KJ_RECORD_SHIM"] = saved


class Starting:
    """A runner that answered its `load`."""

    def __init__(self, reply):
        self.reply = reply
        self.stopped = False

    def collect(self):
        return self.reply, b""

    def stop(self):
        self.stopped = True


class SealedRunnerStart(unittest.TestCase):
    def test_a_sealed_runner_that_does_not_start_only_ends_sealing(self):
        e = evaluation()
        e.sealed_why_not = None
        e.load_failures = {}
        sealed_runner = Starting({"ok": False, "error": {"type": "RuntimeError",
                                                         "message": "CUDA driver error"}})
        e.runners = {"a": Starting({"ok": True}), harness.SEALED: sealed_runner}
        self.assertTrue(e.load_runners())
        self.assertEqual(list(e.runners), ["a"])
        self.assertTrue(sealed_runner.stopped)
        self.assertIn("did not start (RuntimeError: CUDA driver error)", e.sealed_why_not)

    def test_a_submission_that_does_not_load_still_fails(self):
        e = evaluation()
        e.load_failures = {}
        e.runners = {"a": Starting({"ok": False, "kind": "compile", "error": {
            "type": "SyntaxError", "message": "bad", "traceback": ""}}),
                     harness.SEALED: Starting({"ok": True})}
        self.assertFalse(e.load_runners())


class FakeRunner:
    def __init__(self, replies):
        self.replies = replies
        self.asked = []

    def ask(self, header):
        self.asked.append(header["cmd"])
        return self.replies.get(header["cmd"], {"ok": True}), b""


class Seal(unittest.TestCase):
    def sealing(self, record_reply, bind_reply=None):
        e = evaluation()
        e.sealed_why_not = None
        e.runners = {"a": FakeRunner({"record": record_reply}),
                     harness.SEALED: FakeRunner({"bind": bind_reply or {"ok": True}})}
        return e, e.seal({"size": 1024, "seed": 1}, 5)

    def test_a_failed_recording_times_the_case_in_process(self):
        _, (runner, why, _) = self.sealing({"ok": False, "error": {
            "type": "RuntimeError", "message": "the recording shim could not start a recording"}})
        self.assertEqual(runner, "a")
        self.assertIn("recording failed (RuntimeError", why)

    def test_differing_calls_never_reach_the_sealed_runner(self):
        e, (runner, why, _) = self.sealing({"ok": True, "images": "/tmp/x", "recordings": [
            recording(0x1000_0000), recording(0x2000_0000, grid=(9, 1, 1))]})
        self.assertEqual(runner, "a")
        self.assertIn("grid", why)
        self.assertEqual(e.runners[harness.SEALED].asked, [])

    def test_a_replay_that_does_not_load_times_the_case_in_process(self):
        e, (runner, why, _) = self.sealing(
            {"ok": True, "images": "/tmp/x", "recordings": [recording(0x1000_0000),
                                                            recording(0x2000_0000)]},
            {"ok": False, "error": {"type": "RuntimeError",
                                    "message": "cuModuleLoadData: CUDA error 200"}})
        self.assertEqual(runner, "a")
        self.assertIn("did not load", why)
        self.assertEqual(e.runners[harness.SEALED].asked, ["bind"])
        self.assertEqual(e.runners["a"].asked, ["record", "release"])


class ReplayBinding(unittest.TestCase):
    """What a replayed call does with its inputs before it reaches the driver."""

    def replay(self, torch, inputs):
        kernel = sealed.ReplayKernel.__new__(sealed.ReplayKernel)  # no CUDA: binding only
        kernel.torch, kernel.scratch = torch, []
        kernel.plan = {"inputs": [{"shape": list(t.shape), "stride": list(t.stride()),
                                   "storage_offset": 0, "dtype": "float32"} for t in inputs]}
        return kernel

    def test_a_bound_call_keeps_no_input_alive_once_it_returns(self):
        # The sealed runner binds every timed call: inputs it kept in a reference cycle stayed
        # on the device until the collector ran, and ran the largest cases out of memory.
        import gc
        import weakref

        import torch

        a, b = torch.ones(1024), torch.ones(1024)
        kernel = self.replay(torch, [a, b])
        gone = [weakref.ref(a), weakref.ref(b)]
        collecting = gc.isenabled()
        gc.disable()
        try:
            data = (a, [b])
            bases, flat = kernel.bases_for(data)
            self.assertEqual(bases[("input", 1)], b.untyped_storage().data_ptr())
            del a, b, data, flat
            self.assertEqual([ref() for ref in gone], [None, None])
        finally:
            if collecting:
                gc.enable()

    def test_an_input_laid_out_unlike_the_recorded_one_is_refused(self):
        import torch

        kernel = self.replay(torch, [torch.ones(1024)])
        with self.assertRaisesRegex(ValueError, "laid out unlike"):
            kernel.bases_for((torch.ones(512),))


if __name__ == "__main__":
    unittest.main()
