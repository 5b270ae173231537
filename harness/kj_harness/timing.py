"""Timing one benchmark case, in the runner process (docs/timing.md has the recipe and why).

GPU: every sample gets fresh inputs (new seed, new buffers), a cold L2 (a memset of at least twice
the L2 size and a reset of persisting lines) queued behind a short spin so the host's launch of
the kernel is hidden, and CUDA events around the call with a device-wide sync after it. Kernels
whose per-call time is below `graph_below_ns` are timed as CUDA-graph batches over rotated input
sets instead. CPU: the monotonic clock around the call, inputs rotated between two sets.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import time

DEFAULTS = {
    "min_samples": 10,
    "min_seconds": 0.5,
    "target_rel_sem": 0.001,
    "target_rel_stdev": 0.005,
    "max_seconds": 15.0,
    "max_samples": 1000,
    "warmup_seconds": 0.05,
    "graph_below_ns": 10_000,
    "launch_floor_ns": 3_000,
    "keep_output_bytes": 2 << 30,
}


def settings_from(job_timing: dict) -> dict:
    merged = dict(DEFAULTS)
    # Older names kept so `--max-repeats/--max-time` work.
    if "max_repeats" in job_timing:
        merged["max_samples"] = int(job_timing["max_repeats"])
    if "max_time_s" in job_timing:
        merged["max_seconds"] = float(job_timing["max_time_s"])
    for key in DEFAULTS:
        if key in job_timing:
            merged[key] = type(DEFAULTS[key])(job_timing[key])
    if merged["max_samples"] < merged["min_samples"]:
        merged["min_samples"] = merged["max_samples"]
    if merged["max_seconds"] < merged["min_seconds"]:
        merged["min_seconds"] = merged["max_seconds"]
    return merged


def derive_seed(seed: int, iteration: int) -> int:
    """Seed of the inputs of timed call `iteration`; the same in the harness and the runner."""
    digest = hashlib.sha256(f"kj-iteration:{seed}:{iteration}".encode()).digest()
    return int.from_bytes(digest[:7], "little")


def iteration_args(args: dict, iteration: int) -> dict:
    if "seed" not in args or not isinstance(args["seed"], int):
        return args  # nothing to vary: the same inputs every call
    return {**args, "seed": derive_seed(args["seed"], iteration)}


def stop_reason(samples: list[float], elapsed: float, s: dict) -> str | None:
    """The stopping rule (mirrors kj::bench::should_stop)."""
    n = len(samples)
    if n >= s["max_samples"]:
        return "max_samples"
    if elapsed >= s["max_seconds"]:
        return "max_seconds"
    if n < max(s["min_samples"], 2) or elapsed < s["min_seconds"]:
        return None
    mean = sum(samples) / n
    if mean <= 0:
        return None
    stdev = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1))
    if stdev / math.sqrt(n) / mean <= s["target_rel_sem"]:
        return "precise_sem"
    if stdev / mean <= s["target_rel_stdev"]:
        return "precise_stdev"
    return None


class SmClock:
    """SM clock (MHz) through NVML, read after each sample; None when NVML is unavailable."""

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


def _reset_persisting_l2() -> None:
    try:
        ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache()
    except (OSError, AttributeError):
        pass


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


class CaseTimer:
    """Times `kernel` on one case; `generate(args)` makes inputs. Results are plain data."""

    def __init__(self, kernel, generate, device: str, settings: dict):
        self.kernel = kernel
        self.generate = generate
        self.device = device
        self.s = settings
        self.on_gpu = device.startswith("cuda")
        self.kept_outputs: dict[int, object] = {}
        self.kept_bytes = 0

    def keep(self, iteration: int, output) -> None:
        size = _nbytes(output)
        if self.kept_bytes + size <= self.s["keep_output_bytes"]:
            self.kept_outputs[iteration] = output
            self.kept_bytes += size

    def run(self, args: dict) -> dict:
        if self.on_gpu:
            return self._run_gpu(args)
        return self._run_cpu(args)

    def _run_cpu(self, args: dict) -> dict:
        pool = [self.generate(iteration_args(args, i)) for i in range(2)]
        begin = time.perf_counter_ns()
        while time.perf_counter_ns() - begin < self.s["warmup_seconds"] * 1e9:
            self.kernel(pool[0])
        samples: list[float] = []
        begin = time.perf_counter_ns()
        reason = None
        while reason is None:
            i = len(samples)
            t0 = time.perf_counter_ns()
            output = self.kernel(pool[i % 2])
            samples.append(float(time.perf_counter_ns() - t0))
            if i < 2:
                self.keep(i, output)
            reason = stop_reason(samples, (time.perf_counter_ns() - begin) / 1e9, self.s)
        return {"samples_ns": samples, "clock": "monotonic", "stop_reason": reason,
                "kept": sorted(self.kept_outputs), "method": "per_call"}

    def _run_gpu(self, args: dict) -> dict:
        import torch

        device = torch.device(self.device)
        props = torch.cuda.get_device_properties(device)
        l2_bytes = max(int(getattr(props, "L2_cache_size", 0)), 50 << 20)
        flush = torch.empty(2 * l2_bytes // 4, dtype=torch.int32, device=device)
        clock = SmClock(device.index or 0)
        # About 30 µs of queued spin hides the host-side launch of a Python-level kernel call.
        spin_cycles = int(30e-6 * (clock.read() or 1980.0) * 1e6)

        # Warm-up on a throwaway input (compilation, autotuning, allocator).
        data = self.generate(iteration_args(args, 10**9))
        begin = time.perf_counter_ns()
        estimate = []
        while time.perf_counter_ns() - begin < self.s["warmup_seconds"] * 1e9 or len(estimate) < 3:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.kernel(data)
            end.record()
            torch.cuda.synchronize()
            estimate.append(start.elapsed_time(end) * 1e6)
            if len(estimate) >= 1000:
                break
        per_call = sorted(estimate)[len(estimate) // 2]
        if per_call < self.s["graph_below_ns"]:
            result = self._run_graph(args, flush, clock, per_call)
            if result is not None:
                return result

        samples: list[float] = []
        clocks: list[float | None] = []
        live = []  # the last inputs stay alive so the allocator hands out new addresses
        begin = time.perf_counter_ns()
        reason = None
        while reason is None:
            i = len(samples)
            data = self.generate(iteration_args(args, i))
            live = (live + [data])[-3:]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            torch.cuda._sleep(spin_cycles)
            _reset_persisting_l2()
            flush.zero_()
            start.record()
            output = self.kernel(data)
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) * 1e6)
            clocks.append(clock.read())
            self.keep(i, output)
            reason = stop_reason(samples, (time.perf_counter_ns() - begin) / 1e9, self.s)
        return {"samples_ns": samples, "sm_clock_mhz": clocks, "clock": "cuda_event",
                "stop_reason": reason, "kept": sorted(self.kept_outputs), "method": "per_call",
                "at_launch_floor": sorted(samples)[len(samples) // 2] < self.s["launch_floor_ns"]}

    def _run_graph(self, args: dict, flush, clock: SmClock, per_call_ns: float) -> dict | None:
        """Short kernels: one sample = one replay of a graph of `batch` calls on rotated inputs
        whose footprint exceeds the L2, so each call reads memory the previous ones evicted."""
        import torch

        one = self.generate(iteration_args(args, 0))
        footprint = max(_nbytes(one), 1)
        batch = int(min(256, max(16, math.ceil(flush.numel() * 4 / footprint))))
        inputs = [one] + [self.generate(iteration_args(args, i)) for i in range(1, batch)]
        stream = torch.cuda.Stream()
        graph = torch.cuda.CUDAGraph()
        try:
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for data in inputs[:2]:  # warm on the side stream before capture
                    self.kernel(data)
            torch.cuda.current_stream().wait_stream(stream)
            torch.cuda.synchronize()
            with torch.cuda.graph(graph, stream=stream):
                outputs = [self.kernel(data) for data in inputs]
        except Exception:  # noqa: BLE001 - not capturable (host syncs, allocations): per-call timing
            torch.cuda.synchronize()
            return None
        samples: list[float] = []
        clocks: list[float | None] = []
        begin = time.perf_counter_ns()
        reason = None
        round_index = 0
        while reason is None:
            round_index += 1
            for j, data in enumerate(inputs):  # fresh contents, same captured buffers
                _copy_into(data, self.generate(iteration_args(args, round_index * batch + j)))
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            _reset_persisting_l2()
            flush.zero_()
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) * 1e6 / batch)
            clocks.append(clock.read())
            reason = stop_reason(samples, (time.perf_counter_ns() - begin) / 1e9, self.s)
        # The last round's inputs and outputs can be checked: keep them under their iterations.
        for j, out in enumerate(outputs):
            self.keep(round_index * batch + j, out)
        return {"samples_ns": samples, "sm_clock_mhz": clocks, "clock": "cuda_graph",
                "stop_reason": reason, "kept": sorted(self.kept_outputs), "method": "graph",
                "batch": batch, "estimate_ns": per_call_ns,
                "at_launch_floor": sorted(samples)[len(samples) // 2] < self.s["launch_floor_ns"]}
