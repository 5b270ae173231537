"""Timing, split between the trusted harness (which decides when to stop) and the runner (which
takes one sample when asked). docs/timing.md has the recipe and why.

GPU sample: fresh inputs (new seed, new buffers), cold L2 (persisting lines reset, then a memset
of twice the L2 size) queued behind a spin so the host's launch of the kernel is hidden, CUDA
events around the call, a device-wide sync after it, and the SM clock read through NVML. A kernel
whose per-call time is below `graph_below_ns` is sampled as a CUDA-graph replay of a batch of
calls over rotated input sets whose footprint exceeds the L2. CPU sample: the monotonic clock
around the call, inputs rotated between two sets.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import math
import os
import random
import sys
import time

from . import guard

# Bound when the harness starts, before any submission code: replacing time.perf_counter_ns
# later does not reach the judge's CPU clock.
_clock_ns = time.perf_counter_ns

OTHER_STREAM_SLACK_NS = 20_000.0
# Set by the judge in profile mode: the timed call runs inside the NVTX range ncu captures.
PROFILING = os.environ.get("KJ_PROFILE") == "1"
PROFILE_TRACE_S = 20


def trace_when_profiling() -> None:
    """Under Nsight Compute a run is many times slower than without it: every PROFILE_TRACE_S
    seconds the process's Python stacks go to stderr, so a profile that runs out of time shows
    where it was."""
    if PROFILING:
        import faulthandler

        faulthandler.dump_traceback_later(PROFILE_TRACE_S, repeat=True, file=sys.stderr)

DEFAULTS = {
    "min_samples": 10,
    "min_seconds": 0.25,  # harness/cuda/eval.cu: the same
    "target_rel_sem": 0.001,
    "target_rel_stdev": 0.005,
    "max_seconds": 15.0,
    "max_samples": 1000,
    "warmup_seconds": 0.05,
    # >0: exactly this many warm-up calls instead of a time budget. Multi-rank runs need it: a
    # call of one rank meets the others in collectives, so every rank must make the same calls.
    "warmup_calls": 0,
    "graph_below_ns": 10_000.0,
    # A graph batch also lasts at least this long on the device (0: the footprint alone sets
    # it). A longer batch needs fewer samples for the same precision but lowers short kernels'
    # medians (a replay's start-up shared by more calls; docs/timing.md), so it is off.
    "graph_sample_ns": 0.0,
    "launch_floor_ns": 3_000.0,
    "spin_us": 200.0,
    "keep_output_bytes": 2 << 30,
    "recheck": 1,  # timed outputs re-checked after timing; 0: every kept one
    "recheck_ipc": 1,  # on a GPU, outputs reach the checker as CUDA IPC handles (checks, re-checks)
    # On a GPU, timed calls are replays of the submission's recorded launches in a runner that
    # holds no submission code (sealed.py); 0: timed in the submission's own process.
    "sealed": 1,
    # 1: a timed case that cannot be sealed fails instead of being timed in process (a problem's
    # `ranked_timing: sealed`, for ranked runs on a GPU).
    "require_sealed": 0,
}


def settings_from(job_timing: dict) -> dict:
    merged = dict(DEFAULTS)
    # Short names used by `kj eval --max-repeats/--max-time`.
    if "max_repeats" in job_timing:
        merged["max_samples"] = int(job_timing["max_repeats"])
    if "max_time_s" in job_timing:
        merged["max_seconds"] = float(job_timing["max_time_s"])
    for key in DEFAULTS:
        if key in job_timing:
            merged[key] = type(DEFAULTS[key])(job_timing[key])
    merged["min_samples"] = min(merged["min_samples"], merged["max_samples"])
    merged["min_seconds"] = min(merged["min_seconds"], merged["max_seconds"])
    return merged


def derive_seed(seed: int, salt: str) -> int:
    digest = hashlib.sha256(f"kj:{salt}:{seed}".encode()).digest()
    return int.from_bytes(digest[:7], "little")


def iteration_args(args: dict, iteration: int) -> dict:
    """Inputs of timed call `iteration`: the same in the harness and the runner."""
    if not isinstance(args.get("seed"), int):
        return args  # nothing to vary: the same inputs every call
    return {**args, "seed": derive_seed(args["seed"], f"iteration:{iteration}")}


def secret_args(args: dict, secret: int) -> dict:
    """A ranked case: its seed mixed one-way with the secret, which never leaves the harness."""
    if not isinstance(args.get("seed"), int):
        return args
    return {**args, "seed": derive_seed(args["seed"], f"secret:{secret}")}


def timed_args(case: dict, salt: int, secret: int | None = None) -> dict:
    """The arguments a benchmark case is timed on (each call then derives its own from them,
    iteration_args): the case's seed mixed with the ranked run's secret (leaderboard mode) and
    with the salt drawn for this timing, so no file states them. The one derivation: the
    submission's timing and the reference's, timed alone in a job of its own after the
    submission's run (judge.cpp), both go through it, so both are timed on the same inputs."""
    if secret is not None:
        case = secret_args(case, secret)
    return secret_args(case, salt)


ROBUST_RULE_MIN_SAMPLES = 20  # kj::bench::kRobustRuleMinSamples


def _quantile(ordered: list[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values (kj::bench::quantile_sorted)."""
    pos = q * (len(ordered) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def stop_reason(samples: list[float], elapsed: float, s: dict) -> str | None:
    """The stopping rule, the one place it is written (docs/timing.md): keep going until both
    minimums are reached, then stop once the relative standard error or the relative stdev
    meets its target, or (from ROBUST_RULE_MIN_SAMPLES on) the median's robust standard error
    does; the caps stop even before the minimums."""
    n = len(samples)
    if n >= 2 and elapsed >= s["min_seconds"] and n >= s["min_samples"]:
        mean = sum(samples) / n
        if mean > 0:
            stdev = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1))
            if stdev / math.sqrt(n) / mean <= s["target_rel_sem"]:
                return "precise_sem"
            if stdev / mean <= s["target_rel_stdev"]:
                return "precise_stdev"
        if n >= ROBUST_RULE_MIN_SAMPLES:
            # The robust standard error of the median (docs/timing.md): a few samples hit by a
            # host stall swell the stdev, not the median or the IQR.
            ordered = sorted(samples)
            median = _quantile(ordered, 0.5)
            sigma = (_quantile(ordered, 0.75) - _quantile(ordered, 0.25)) / 1.349
            if median > 0 and 1.2533 * sigma / math.sqrt(n) / median <= s["target_rel_sem"]:
                return "precise_median"
    if n >= s["max_samples"]:
        return "max_samples"
    if elapsed >= s["max_seconds"]:
        return "max_seconds"
    return None


def graph_batch(footprint_bytes: int, flush_bytes: int, estimate_ns: float,
                graph_sample_ns: float) -> int:
    """Calls in one CUDA-graph sample: their inputs together at least the flush buffer (twice the
    L2), and together at least `graph_sample_ns` long by the warm-up's estimate; 16 to 256."""
    return int(min(256, max(16, math.ceil(flush_bytes / max(footprint_bytes, 1)),
                            math.ceil(graph_sample_ns / max(estimate_ns, 1.0)))))


class SmClock:
    """SM clock (MHz) through NVML; None when NVML is unavailable."""

    def __init__(self, device_index: int):
        self.handle = None
        try:
            self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if self.nvml.nvmlInit_v2() != 0:
                return
            handle = ctypes.c_void_p()
            bus_id = _pci_bus_id(device_index)
            if bus_id is not None:
                rc = self.nvml.nvmlDeviceGetHandleByPciBusId_v2(bus_id.encode(), ctypes.byref(handle))
            else:
                rc = self.nvml.nvmlDeviceGetHandleByIndex_v2(device_index, ctypes.byref(handle))
            if rc == 0:
                self.handle = handle
        except OSError:
            self.handle = None

    def read(self) -> float | None:
        if self.handle is None:
            return None
        mhz = ctypes.c_uint()
        nvml_clock_sm = 1
        if self.nvml.nvmlDeviceGetClockInfo(self.handle, nvml_clock_sm, ctypes.byref(mhz)) != 0:
            return None
        return float(mhz.value)


def _pci_bus_id(device_index: int) -> str | None:
    import torch

    props = torch.cuda.get_device_properties(device_index)
    try:
        return f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    except AttributeError:
        return None


class PersistingL2:
    """cuCtxResetPersistingL2Cache, so a kernel's access-policy window cannot keep data hot."""

    def __init__(self):
        try:
            self.reset = ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache
        except (OSError, AttributeError):
            self.reset = None

    def __call__(self) -> None:
        if self.reset is not None:
            self.reset()


def _copy_into(target, source) -> None:
    """Refreshes captured input buffers in place with new contents."""
    import torch

    if isinstance(target, torch.Tensor):
        target.copy_(source)
    elif isinstance(target, (list, tuple)):
        for t, s in zip(target, source):
            _copy_into(t, s)
    elif isinstance(target, dict):
        for key in target:
            _copy_into(target[key], source[key])


def _nbytes(obj) -> int:
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 0


_kits: dict[str, tuple] = {}


def _device_kit(device_name: str) -> tuple:
    """What every case timed on a device uses: the L2 flush buffer (twice the L2), the SM clock
    (an NVML handle) and the persisting-L2 reset. Made once per process: opening NVML and
    allocating the buffer again for each case only lengthened every case's preparation."""
    if device_name not in _kits:
        import torch

        device = torch.device(device_name)
        props = torch.cuda.get_device_properties(device)
        l2_bytes = max(int(getattr(props, "L2_cache_size", 0)), 50 << 20)
        _kits[device_name] = (torch.empty(2 * l2_bytes // 4, dtype=torch.int32, device=device),
                              SmClock(device.index or 0), PersistingL2())
    return _kits[device_name]


class CaseSession:
    """Runner side of timing one case: `prepare` once, then `sample(i)` as the harness asks."""

    def __init__(self, kernel, generate, device: str, settings: dict, args: dict):
        self.kernel = kernel
        self.generate = generate
        self.device = device
        self.s = settings
        self.args = args
        self.on_gpu = device.startswith("cuda")
        self.kept_outputs: dict[int, object] = {}
        self.seen = 0
        self.rng = random.Random(os.urandom(16))
        self.method = "per_call"
        self.batch = 1

    def keep(self, iteration: int, output, copy: bool = True) -> None:
        """Reservoir of timed outputs within the byte budget: every call is equally likely to be
        among those the harness re-checks, so being wrong only late does not escape. A kept
        output is copied at once: work that finishes after the call returned is not seen."""
        self.seen += 1
        slots = max(1, int(self.s["keep_output_bytes"]) // max(_nbytes(output), 1))
        if len(self.kept_outputs) < slots:
            self.kept_outputs[iteration] = guard.snapshot(output, copy)
        elif self.rng.randrange(self.seen) < slots:
            del self.kept_outputs[self.rng.choice(list(self.kept_outputs))]
            self.kept_outputs[iteration] = guard.snapshot(output, copy)

    def prepare(self) -> dict:
        if not self.on_gpu:
            self.pool = [self.generate(iteration_args(self.args, -1))]
            self.live = []
            if self.s["warmup_calls"] > 0:
                for _ in range(self.s["warmup_calls"]):
                    self.kernel(self.pool[0])
                return {"method": self.method, "clock": "monotonic"}
            begin = time.perf_counter_ns()
            while time.perf_counter_ns() - begin < self.s["warmup_seconds"] * 1e9:
                self.kernel(self.pool[0])
            return {"method": self.method, "clock": "monotonic"}
        import torch

        self.flush, self.sm_clock, self.reset_l2 = _device_kit(self.device)
        self.spin_cycles = int(self.s["spin_us"] * 1e-6 * (self.sm_clock.read() or 1980.0) * 1e6)
        self.live: list = []
        # Warm-up on throwaway inputs (compilation, autotuning, allocator), estimating the
        # per-call time from the fastest calls, which include the least launch overhead.
        data = self.generate(iteration_args(self.args, -1))
        estimate: list[float] = []
        begin = time.perf_counter_ns()
        fixed = self.s["warmup_calls"]
        while (len(estimate) < fixed if fixed > 0 else
               (time.perf_counter_ns() - begin < self.s["warmup_seconds"] * 1e9 or len(estimate) < 3)
               and len(estimate) < 1000):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            torch.cuda._sleep(self.spin_cycles)
            start.record()
            self.kernel(data)
            end.record()
            torch.cuda.synchronize()
            estimate.append(start.elapsed_time(end) * 1e6)
        self.estimate_ns = min(estimate)
        self._calibrate_tail()
        if self.estimate_ns < self.s["graph_below_ns"] and self._capture_graph():
            self.method = "graph"
        return {"method": self.method, "batch": self.batch, "estimate_ns": self.estimate_ns,
                "clock": "cuda_graph" if self.method == "graph" else "cuda_event"}

    def _calibrate_tail(self) -> None:
        """How long after the end event a marker lands when the GPU is idle: the yardstick for
        telling that a call left work running on another stream."""
        import torch

        gaps = []
        for _ in range(21):
            end, marker = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            end.record()
            torch.cuda.synchronize()
            host_delay_ns = self._record_marker(marker)
            gaps.append(end.elapsed_time(marker) * 1e6 - host_delay_ns)
        gaps.sort()
        self.idle_tail_ns = gaps[len(gaps) // 2]
        self.tail_threshold_ns = 2 * gaps[int(len(gaps) * 0.9)] + OTHER_STREAM_SLACK_NS
        self.other_stream_samples = 0

    @staticmethod
    def _record_marker(marker) -> float:
        """Records `marker` once the device is idle and waits for it. Returns how long this
        host thread took between the sync returning and the marker being queued: a delay of the
        host (scheduling, a signal), not work the device still had, so it is taken off the gap."""
        returned = _clock_ns()
        marker.record()
        queued = _clock_ns()
        marker.synchronize()
        return float(queued - returned)

    def _capture_graph(self) -> bool:
        import torch

        one = self.generate(iteration_args(self.args, 0))
        footprint = max(_nbytes(one), 1)
        batch = graph_batch(footprint, self.flush.numel() * 4, self.estimate_ns,
                            self.s["graph_sample_ns"])
        self.inputs = [one] + [self.generate(iteration_args(self.args, i)) for i in range(1, batch)]
        stream = torch.cuda.Stream()
        self.graph = torch.cuda.CUDAGraph()
        try:
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for data in self.inputs[:2]:
                    self.kernel(data)
            torch.cuda.current_stream().wait_stream(stream)
            torch.cuda.synchronize()
            with torch.cuda.graph(self.graph, stream=stream):
                self.graph_outputs = [self.kernel(data) for data in self.inputs]
            replayable = self._replay_writes_outputs()
        except Exception:  # noqa: BLE001 - not capturable (host syncs, allocations): per call
            replayable = False
        if not replayable:
            torch.cuda.synchronize()
            self.graph, self.graph_outputs = None, []
            return False
        self.batch = batch
        return True

    def _replay_writes_outputs(self) -> bool:
        """Whether a replay of the captured graph computes the outputs. A kernel launched where
        the capture does not see it (the legacy default stream, from inline CUDA that ignores
        the current stream) runs once, eagerly, while capturing and never in a replay: timed as
        a graph its outputs would stay as they were and the re-check would reject an honest
        kernel. So the first call's inputs get new contents, its outputs are copied, the graph
        is replayed once, and some output must have changed. (Not a fill of the outputs: an
        output may be an input the kernel reads, or a view that cannot be written.)"""
        import torch

        _copy_into(self.inputs[0], self.generate(iteration_args(self.args, -2)))
        outputs = guard.input_tensors(self.graph_outputs[0])
        before = [t.clone() for t in outputs]
        self.graph.replay()
        torch.cuda.synchronize()
        return not outputs or any(not torch.equal(b, t) for b, t in zip(before, outputs))

    def sample(self, iteration: int) -> dict:
        if not self.on_gpu:
            # Fresh inputs every call, as on the GPU: a cache keyed on contents never hits.
            data = self.generate(iteration_args(self.args, iteration))
            self.live = (self.live + [data])[-3:]  # older inputs stay alive: new addresses
            t0 = _clock_ns()
            output = self.kernel(data)
            elapsed = float(_clock_ns() - t0)
            self.keep(iteration, output)
            return {"ns": elapsed}
        import torch

        if self.method == "graph":
            base = iteration * self.batch
            for j, data in enumerate(self.inputs):  # fresh contents, same captured buffers
                _copy_into(data, self.generate(iteration_args(self.args, base + j)))
        else:
            data = self.generate(iteration_args(self.args, iteration))
            self.live = (self.live + [data])[-3:]  # older inputs stay alive: new addresses
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        marker = torch.cuda.Event(enable_timing=True)
        collecting = gc.isenabled()
        gc.disable()  # a collection pause inside the window would be timed (as timeit does)
        try:
            torch.cuda.synchronize()
            self.reset_l2()
            torch.cuda._sleep(self.spin_cycles)
            self.flush.zero_()
            start.record()
            if self.method == "graph":
                self.graph.replay()
            elif PROFILING:  # the one call Nsight Compute captures (kj eval --mode profile)
                torch.cuda.nvtx.range_push("kj_profile")
                output = self.kernel(data)
                torch.cuda.nvtx.range_pop()
            else:
                output = self.kernel(data)
            end.record()
            torch.cuda.synchronize()  # device-wide: work the call left on other streams ends too
            host_delay_ns = self._record_marker(marker)
        finally:
            if collecting:
                gc.enable()
        interval_ns = start.elapsed_time(end) * 1e6
        if end.elapsed_time(marker) * 1e6 - host_delay_ns > self.tail_threshold_ns:
            # The device was still busy after the end event: count until it was idle.
            interval_ns = start.elapsed_time(marker) * 1e6 - host_delay_ns - self.idle_tail_ns
            self.other_stream_samples += 1
        elapsed = interval_ns / self.batch
        if self.method == "graph":
            self.kept_outputs = {}  # replays reuse the output buffers: only the last are valid
            self.seen = 0
            for j, out in enumerate(self.graph_outputs):
                self.keep(base + j, out, copy=False)  # static buffers only replays write
        else:
            self.keep(iteration, output)
        return {"ns": elapsed, "sm_clock_mhz": self.sm_clock.read(),
                "other_stream_samples": self.other_stream_samples}
