"""The GPU sampling path of kj_harness.timing, run against a simulated device (no GPU needed):
what is counted, what is not, and which outputs stay available for re-checking."""

import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))


class SimulatedGpu:
    """One timeline: work queued on the main stream, plus work left running on another stream."""

    def __init__(self):
        self.main = 0.0  # ns at which the main stream's queued work ends
        self.other = 0.0  # ns at which other streams' work ends
        self.idle_tail = 4_000.0  # a marker recorded after a sync lands this long after
        self.capturing = None
        self.host = 0.0  # the host's clock, ns
        self.host_delay = 0.0  # the host stalls this long once, after its next sync returns
        self.synced = False

    def run(self, ns, other_ns=0.0, writes=None):
        """`writes`: the output tensor the work computes (its value becomes 1.0)."""
        if self.capturing is not None:
            self.capturing.append((ns, other_ns, writes))
            return
        if writes is not None:
            writes.value = 1.0
        self.synced = False
        self.main += ns
        if other_ns:
            self.other = max(self.other, self.main + other_ns)

    def synchronize(self):
        self.main = max(self.main, self.other) + self.idle_tail
        self.synced = True

    def record_time(self):
        if self.synced and self.host_delay:  # the stall: the device idles, the host's clock runs
            self.host += self.host_delay
            self.main += self.host_delay
            self.host_delay = 0.0
        return self.main


def fake_torch(gpu):
    torch = types.ModuleType("torch")
    torch.int32 = "int32"

    class Tensor:
        layout = "strided"
        device = types.SimpleNamespace(type="cuda")

        def __init__(self, n=1, value=0.0):
            self.n = n
            self.value = value

        def detach(self):
            return self

        def clone(self):
            return Tensor(self.n, self.value)

        def numel(self):
            return self.n

        def element_size(self):
            return 4

        def zero_(self):
            gpu.run(40_000)  # the L2 flush
            return self

        def copy_(self, other):
            return self

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = gpu.record_time()

        def synchronize(self):
            gpu.synchronize()

        def elapsed_time(self, other):
            return (other.t - self.t) / 1e6  # ms

    class Graph:
        def replay(self):
            for ns, other_ns, writes in self.work:
                gpu.run(ns, other_ns, writes)

    class GraphContext:
        def __init__(self, graph, stream=None):
            self.graph = graph

        def __enter__(self):
            gpu.capturing = []

        def __exit__(self, *exc):
            self.graph.work, gpu.capturing = gpu.capturing, None

    class Stream:
        def wait_stream(self, other):
            pass

    class StreamContext:
        def __init__(self, stream):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    cuda = types.ModuleType("torch.cuda")
    cuda.Event = Event
    cuda.synchronize = gpu.synchronize
    cuda._sleep = lambda cycles: gpu.run(cycles / 1.98)
    cuda.get_device_properties = lambda device: types.SimpleNamespace(L2_cache_size=60 << 20)
    cuda.Stream = Stream
    cuda.CUDAGraph = Graph
    cuda.graph = GraphContext
    cuda.stream = StreamContext
    cuda.current_stream = lambda: Stream()
    torch.cuda = cuda
    torch.Tensor = Tensor
    torch.strided = "strided"
    torch.device = lambda name: types.SimpleNamespace(index=0, type="cuda")
    torch.empty = lambda n, dtype=None, device=None: Tensor(n)
    torch.equal = lambda a, b: a.value == b.value
    return torch


class GpuSampling(unittest.TestCase):
    def setUp(self):
        self.gpu = SimulatedGpu()
        self.saved = sys.modules.get("torch")
        sys.modules["torch"] = fake_torch(self.gpu)
        from kj_harness import timing
        self.timing = timing
        timing.SmClock = lambda index: types.SimpleNamespace(read=lambda: 1980.0)
        timing.PersistingL2 = lambda: (lambda: None)
        timing._clock_ns = lambda: int(self.gpu.host)

    def tearDown(self):
        if self.saved is not None:
            sys.modules["torch"] = self.saved
        else:
            del sys.modules["torch"]

    def session(self, kernel, **settings):
        torch = sys.modules["torch"]
        generate = lambda args: (torch.Tensor(1 << 20), args["seed"])
        s = self.timing.settings_from({"warmup_seconds": 0.0, **settings})
        return self.timing.CaseSession(kernel, generate, "cuda:0", s, {"size": 1, "seed": 7})

    def test_counts_the_kernel_not_the_flush_or_spin(self):
        def kernel(data):
            self.gpu.run(100_000)
            return data[1]

        session = self.session(kernel)
        self.assertEqual(session.prepare()["method"], "per_call")
        samples = [session.sample(i)["ns"] for i in range(5)]
        for ns in samples:
            self.assertAlmostEqual(ns, 100_000, delta=1)
        self.assertEqual(session.other_stream_samples, 0)

    def test_work_left_on_another_stream_is_counted(self):
        def kernel(data):
            self.gpu.run(100_000, other_ns=60_000)  # returns while 60 µs more run elsewhere
            return data[1]

        session = self.session(kernel)
        session.prepare()
        result = session.sample(0)
        self.assertAlmostEqual(result["ns"], 160_000, delta=1)
        self.assertEqual(result["other_stream_samples"], 1)

    def test_a_host_stall_before_the_marker_is_not_other_stream_work(self):
        def kernel(data):
            self.gpu.run(100_000)
            self.gpu.host_delay = 500_000.0  # e.g. the thread descheduled after the sync
            return data[1]

        session = self.session(kernel)
        session.prepare()
        result = session.sample(0)
        self.assertAlmostEqual(result["ns"], 100_000, delta=1)
        self.assertEqual(result["other_stream_samples"], 0)

    def test_other_stream_work_is_counted_through_a_host_stall(self):
        def kernel(data):
            self.gpu.run(100_000, other_ns=60_000)
            self.gpu.host_delay = 500_000.0
            return data[1]

        session = self.session(kernel)
        session.prepare()
        result = session.sample(0)
        self.assertAlmostEqual(result["ns"], 160_000, delta=1)
        self.assertEqual(result["other_stream_samples"], 1)

    def test_short_kernels_are_timed_as_graph_batches_and_keep_their_last_outputs(self):
        outputs = []

        def kernel(data):
            self.gpu.run(4_000)
            outputs.append(data)
            return data[1]

        session = self.session(kernel)
        info = session.prepare()
        self.assertEqual(info["method"], "graph")
        self.assertGreaterEqual(info["batch"], 16)
        self.assertAlmostEqual(session.sample(0)["ns"], 4_000, delta=1)
        # Only the last replay's outputs are valid, under the calls whose inputs they hold.
        session.sample(1)
        self.assertEqual(sorted(session.kept_outputs),
                         list(range(info["batch"], 2 * info["batch"])))

    def test_a_kernel_the_capture_does_not_see_is_timed_per_call(self):
        # Inline CUDA launching on the legacy default stream runs once, eagerly, while the graph
        # is captured, and never in a replay: as a graph batch its outputs would never be
        # written again and the re-check would reject an honest kernel.
        torch = sys.modules["torch"]

        def legacy_stream_kernel(data):
            out = torch.Tensor(1 << 20)
            capturing, self.gpu.capturing = self.gpu.capturing, None
            self.gpu.run(4_000, writes=out)  # not captured: runs now
            self.gpu.capturing = capturing
            return out

        def captured_kernel(data):
            out = torch.Tensor(1 << 20)
            self.gpu.run(4_000, writes=out)
            return out

        self.assertEqual(self.session(legacy_stream_kernel).prepare()["method"], "per_call")
        session = self.session(captured_kernel)
        self.assertEqual(session.prepare()["method"], "graph")
        self.assertTrue(all(out.value == 1.0 for out in session.graph_outputs))

    def test_a_graph_batch_lasts_at_least_graph_sample_ns(self):
        def kernel(data):
            self.gpu.run(4_000)
            return data[1]

        default = self.session(kernel).prepare()["batch"]
        longer = self.session(kernel, graph_sample_ns=300_000.0).prepare()
        self.assertEqual(longer["method"], "graph")
        self.assertEqual(longer["batch"], 75)  # 300 us of 4 us calls
        self.assertLess(default, 75)
        self.assertEqual(self.timing.graph_batch(6 << 20, 100 << 20, 4_000.0, 0.0), 17)
        self.assertEqual(self.timing.graph_batch(1, 100 << 20, 4_000.0, 0.0), 256)

    def test_reservoir_keeps_late_calls_too(self):
        def kernel(data):
            self.gpu.run(100_000)
            return data[0]  # 4 MiB each

        session = self.session(kernel, keep_output_bytes=10 * (4 << 20))
        session.prepare()
        for i in range(400):
            session.sample(i)
        kept = sorted(session.kept_outputs)
        self.assertEqual(len(kept), 10)
        self.assertGreater(max(kept), 200, "a reservoir keeps late calls as often as early ones")


    def test_kept_outputs_are_as_the_call_left_them(self):
        # Work finishing after the call returned (a thread writing the output later) does not
        # reach what the harness re-checks.
        returned = []

        def kernel(data):
            self.gpu.run(100_000)
            returned.append(torch_tensor(1 << 20))
            return returned[-1]

        torch_tensor = sys.modules["torch"].Tensor
        session = self.session(kernel)
        session.prepare()
        session.sample(0)
        returned[-1].value = 42  # written after the timed region ended
        self.assertEqual(session.kept_outputs[0].value, 0)

    def test_a_tensor_subclass_is_not_kept_as_an_output(self):
        from kj_harness import guard

        class Lazy(sys.modules["torch"].Tensor):
            pass

        def kernel(data):
            self.gpu.run(100_000)
            return Lazy(1 << 20)

        session = self.session(kernel)
        session.prepare()
        session.sample(0)
        self.assertIn("subclass", guard.find_not_an_output(session.kept_outputs.values()))


class StopRule(unittest.TestCase):
    def test_minimums_then_precision_then_caps(self):
        from kj_harness.timing import settings_from, stop_reason
        s = settings_from({})
        self.assertIsNone(stop_reason([100.0] * 5, 1.0, s))  # fewer than 10 samples
        self.assertIsNone(stop_reason([100.0] * 20, 0.1, s))  # less than the 0.25 s minimum
        self.assertEqual(stop_reason([100.0] * 20, 0.6, s), "precise_sem")
        noisy = [100.0, 200.0] * 10
        self.assertIsNone(stop_reason(noisy, 0.6, s))
        self.assertEqual(stop_reason(noisy, 15.0, s), "max_seconds")
        self.assertEqual(stop_reason(noisy * 50, 1.0, s), "max_samples")

    def test_a_tight_stdev_stops_where_the_standard_error_does_not(self):
        from kj_harness.timing import settings_from, stop_reason
        s = settings_from({})
        # 0.4 % CV over 10 samples: rel. SEM ~0.13 % misses 0.1 %, rel. stdev meets 0.5 %.
        self.assertEqual(stop_reason([996.0, 1004.0] * 5, 0.6, s), "precise_stdev")

    def test_the_minimum_and_the_precision_are_settings(self):
        from kj_harness.timing import settings_from, stop_reason
        samples = [100.0, 104.0] * 10  # 2 % stdev: a rel. SEM of 0.45 %
        self.assertIsNone(stop_reason(samples, 0.2, settings_from({})))  # under 0.25 s
        self.assertIsNone(stop_reason(samples, 1.0, settings_from({})))  # over 0.1 %
        self.assertEqual(stop_reason(samples, 1.0, settings_from({"target_rel_sem": 0.005})),
                         "precise_sem")
        self.assertEqual(stop_reason(samples, 0.2, settings_from({"min_seconds": 0.1,
                                                                   "target_rel_sem": 0.005})),
                         "precise_sem")

    def test_caps_stop_even_before_the_minimums(self):
        from kj_harness.timing import settings_from, stop_reason
        s = settings_from({"min_seconds": 100})
        self.assertEqual(stop_reason([100.0, 200.0, 300.0], 15.0, s), "max_seconds")
        self.assertEqual(stop_reason([100.0, 200.0] * 500, 1.0, s), "max_samples")

    def test_a_few_stalled_samples_do_not_keep_a_precise_median_going(self):
        from kj_harness.timing import settings_from, stop_reason
        s = settings_from({})
        # 200 samples within ±0.5 % of 30 µs, 3 of them hit by a 2 ms host stall: the stdev
        # (over 300 % of the mean) fails both classic rules; the median's robust standard error
        # (~0.05 %) meets 0.1 %.
        clean = [30_000.0 * (1 + 0.005 * ((i * 37 % 101) / 50 - 1)) for i in range(200)]
        stalled = clean[:197] + [2_000_000.0] * 3
        self.assertEqual(stop_reason(stalled, 1.0, s), "precise_median")
        # The same with 19 samples is too few for quartiles to decide.
        self.assertIsNone(stop_reason(stalled[:16] + [2_000_000.0] * 3, 1.0, s))
        # Spread in the bulk of the samples (IQR ~10 % of the median) is not precise.
        wide = [30_000.0 * (1 + 0.1 * ((i * 37 % 101) / 50 - 1)) for i in range(200)]
        self.assertIsNone(stop_reason(wide, 1.0, s))


class Rounds(unittest.TestCase):
    """time_rounds: one series (the submission's, or the reference's in a run of its own) stops
    on its own stopping rule; two (kj compare) on their ratio."""

    @staticmethod
    def rounds(names, take_sample):
        """time_rounds on simulated samples, a round every 5 ms of a simulated clock."""
        from unittest import mock

        from kj_harness import harness, timing
        evaluation = harness.Evaluation.__new__(harness.Evaluation)
        evaluation.settings = timing.settings_from({})
        evaluation.ranks = None
        evaluation.prepare = lambda name, args: {"ok": True}
        evaluation.agree = lambda passed: passed
        evaluation.take_sample = take_sample
        now = [0.0]

        def clock():
            now[0] += 0.005
            return now[0]

        with mock.patch.object(harness.time, "monotonic", clock):
            return evaluation.time_rounds(names, {})

    def test_one_series_stops_on_its_own_rule(self):
        steady = [30_000.0 * (1 + 0.001 * ((i * 37 % 101) / 50 - 1)) for i in range(2000)]
        result = self.rounds(["a"], lambda name, i: (steady[i], None))
        self.assertIn(result["stop_reason"], ("precise_sem", "precise_median"))
        self.assertLess(len(result["samples"]["a"]), 200)  # ~0.25 s of rounds, not the 1000 cap
        noisy = [20_000.0, 60_000.0] * 1000  # never precise: only a cap stops it
        result = self.rounds(["reference"], lambda name, i: (noisy[i], None))
        self.assertEqual(result["stop_reason"], "max_samples")
        self.assertEqual(len(result["samples"]["reference"]), 1000)

    def test_two_submissions_compared_stop_on_their_ratio(self):
        # Each series alone is noisy; their ratio is exactly 1: the comparison stops early.
        noisy = [20_000.0, 60_000.0] * 1000
        result = self.rounds(["a", "b"], lambda name, i: (noisy[i], None))
        self.assertIn(result["stop_reason"], ("precise_sem", "precise_median"))
        self.assertLess(len(result["samples"]["a"]), 1000)

class OutputsThroughIpc(unittest.TestCase):
    """On a GPU, outputs to check come as CUDA IPC handles; one that does not open in the harness
    (a forged handle, a driver that refuses) turns the rest of the run back to bytes."""

    def test_a_handle_that_does_not_open_turns_the_run_to_bytes(self):
        from unittest import mock

        from kj_harness import cudaipc, harness
        sent = []

        class Runner:
            def ask(self, command):
                sent.append(command)
                return {"ok": True, "via": "ipc" if command["ipc"] else "bytes"}, b""

        def read_output(reply, blob, device):
            if reply["via"] == "ipc":
                raise cudaipc.IpcUnavailable("the handle does not open")
            return "the output", None

        evaluation = harness.Evaluation.__new__(harness.Evaluation)
        evaluation.runners = {"a": Runner()}
        evaluation.device = "cuda:0"
        evaluation.recheck_ipc = True
        evaluation.recheck_ipc_problem = ""
        with mock.patch.object(harness, "read_output", read_output):
            reply, output, problem = evaluation.ask_output("a", {"cmd": "run", "args": {}})
            self.assertEqual((reply["via"], output, problem), ("bytes", "the output", None))
            self.assertEqual([c["ipc"] for c in sent], [True, False])  # the call made again
            evaluation.ask_output("a", {"cmd": "outputs", "indices": [3]})
        self.assertEqual([c["ipc"] for c in sent], [True, False, False])  # and bytes from then on
        self.assertIn("does not open", evaluation.recheck_ipc_problem)

    def test_a_failed_call_is_not_made_again(self):
        from kj_harness import harness
        sent = []

        class Runner:
            def ask(self, command):
                sent.append(command)
                return {"ok": False, "error": {"type": "RuntimeError"}}, b""

        evaluation = harness.Evaluation.__new__(harness.Evaluation)
        evaluation.runners = {"a": Runner()}
        evaluation.device = "cuda:0"
        evaluation.recheck_ipc = True
        reply, output, problem = evaluation.ask_output("a", {"cmd": "run", "args": {}})
        self.assertFalse(reply["ok"])
        self.assertEqual(len(sent), 1)
        self.assertTrue(evaluation.recheck_ipc)


if __name__ == "__main__":
    unittest.main()
