#!/usr/bin/env python3
"""Sealed timing, design 2 (a cross-process fence): a probe.

Run on an H100: the fence adds ~285 µs per interval, so design 2 is rejected for ranking
(docs/sealed-timing.md).

The trusted side (this process) holds the clock; the submission runs in a child process. Per
sample, on the trusted stream: a gate (a spin kernel long enough for the host round trip), an
L2 flush, an interprocess event `go` and the timing event `start`. The child's stream waits for
`go`, launches `custom_kernel` (K calls), and records the interprocess event `done`; the
trusted stream waits for `done` and records `end`. Interprocess events carry no timing, so
the interval is read from the trusted side's own events, and the gate keeps the host's round
trip out of it (checked per sample: `start` must still be pending when `end` is queued).
Right after `end`, the trusted stream copies the child's output (ordered after `done` on the
GPU) and checks it against the reference.

Measured beside it, in this process: the same gate, flush and events around `custom_kernel`
called here (today's in-process method). Printed: median and IQR of both, their ratio, the
share of samples whose gate held, and whether a hostile child that records `done` before
doing its work on another stream is timed short and still passes the check.

Usage (GPU host): bench/sealed/fence_probe.py --kj build/kj --problem problems/vectoradd \\
    --submission problems/vectoradd/solutions/correct/triton.py --case 2 [--calls 1 10] \\
    [--samples 200] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conformance import layout_for_eval  # noqa: E402  (task files laid out as KernelBot does)

GATE_SECONDS = 0.004
FLUSH_BYTES = 256 << 20


def child_main(conn, task_dir: str, args: dict, go_handle, hostile: bool) -> None:
    """The untrusted side: the submission's process."""
    sys.path.insert(0, task_dir)
    os.chdir(task_dir)
    import torch

    torch.cuda.set_device(0)
    reference = importlib.import_module("reference")
    submission = importlib.import_module("submission")
    data = reference.generate_input(**args)
    go = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), go_handle)
    done = torch.cuda.Event(enable_timing=False, interprocess=True)
    conn.send(done.ipc_handle())
    stream = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    out = submission.custom_kernel(data)  # compile and warm up outside the samples
    torch.cuda.synchronize()
    while True:
        cmd = conn.recv()
        if cmd[0] == "exit":
            return
        if cmd[0] == "output":
            conn.send(out)
            continue
        calls = cmd[1]
        stream.wait_event(go)
        if hostile:  # `done` first, the work afterwards on a stream nothing waits for
            done.record(stream)
            side.wait_event(go)
            with torch.cuda.stream(side):
                for _ in range(calls):
                    out = submission.custom_kernel(data)
        else:
            for _ in range(calls):
                out = submission.custom_kernel(data)
            done.record(stream)
        conn.send(("launched",))


class Bracket:
    """The trusted side's gate, flush and events for one sample."""

    def __init__(self, torch):
        self.torch = torch
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        props = torch.cuda.get_device_properties(0)
        clock_hz = getattr(props, "clock_rate", 1_980_000) * 1000  # kHz in the properties
        self.gate_cycles = int(GATE_SECONDS * clock_hz)
        self.go = torch.cuda.Event(enable_timing=False, interprocess=True)

    def open(self):
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(self.gate_cycles)
        self.flush.zero_()
        self.go.record()
        start.record()
        return start, end


def one_sample(kernel, data, bracket: Bracket, calls: int) -> tuple[float, bool]:
    """ns per call of `calls` calls of kernel(data) under the bracket, and whether the gate held."""
    start, end = bracket.open()
    for _ in range(calls):
        kernel(data)
    held = not start.query()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e6 / calls, held


def in_process(torch, submission, data, bracket: Bracket, calls: int, samples: int) -> dict:
    return interleaved(torch, {"one": (submission.custom_kernel, data)}, bracket, calls,
                       samples)["one"]


def interleaved(torch, sides: dict, bracket: Bracket, calls: int, samples: int) -> dict:
    """name -> (kernel, data) sampled in turns, the order reversed every other round, so slow
    drifts of the GPU (clocks, temperature) reach every side alike; a summary per name."""
    times = {name: [] for name in sides}
    held = dict.fromkeys(sides, 0)
    for kernel, data in sides.values():
        kernel(data)
    torch.cuda.synchronize()
    order = list(sides)
    for _ in range(samples):
        for name in order:
            ns, gate = one_sample(*sides[name], bracket, calls)
            times[name].append(ns)
            held[name] += gate
        order.reverse()
    return {name: summary(times[name], held[name], samples) for name in sides}


def fenced(torch, conn, done, bracket: Bracket, calls: int, samples: int, expected, check) -> dict:
    times, held, wrong = [], 0, 0
    stream = torch.cuda.current_stream()
    for index in range(samples):
        start, end = bracket.open()
        conn.send(("call", calls))
        assert conn.recv() == ("launched",)
        stream.wait_event(done)
        held += not start.query()
        end.record()
        if index % 10 == 0:  # the check, ordered on the GPU right after `done`
            conn.send(("output",))
            out = conn.recv()
            copy = out.clone()
            stream.synchronize()  # the copy is done before the child may free `out`
            wrong += not check(copy, expected)
            del out
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e6 / calls)
    return {**summary(times, held, samples), "checked": (samples + 9) // 10, "wrong": wrong}


def table(rows: list[dict]) -> str:
    def cell(stats) -> str:
        return "" if stats is None else f"{stats['median_ns']:.0f} ({stats['iqr_ns']:.0f})"

    lines = ["| child | calls | fenced median ns (IQR) | in-process median ns (IQR) | ratio | "
             "gate held | wrong checks |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        f = row["fenced"]
        lines.append(f"| {'hostile' if row['hostile_child'] else 'honest'} | {row['calls']} | "
                     f"{cell(f)} | {cell(row.get('in_process'))} | "
                     f"{row.get('ratio', float('nan')):.4f} | {f['gate_held']:.2f} | "
                     f"{f['wrong']}/{f['checked']} |")
    return "\n".join(lines)


def summary(times: list[float], held: int, samples: int) -> dict:
    q = statistics.quantiles(times, n=4)
    return {"median_ns": statistics.median(times), "iqr_ns": q[2] - q[0], "n": len(times),
            "gate_held": held / samples}


def probe_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments every sealed-timing probe takes (this one and replay_probe.py)."""
    parser.add_argument("--kj", required=True, help="kj, to lay out the task files")
    parser.add_argument("--problem", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--case", type=int, default=0, help="benchmark case index")
    parser.add_argument("--calls", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--json")


def load_case(args, task_dir: str) -> tuple[dict, object]:
    """The task laid out in `task_dir` as KernelBot does, and put on the import path; returns the
    benchmark case `args.case` (on the GPU where generate_input takes a device) and the task's
    reference module."""
    import inspect

    layout_for_eval(args.kj, args.problem, args.submission, task_dir)
    shown = json.loads(subprocess.run([args.kj, "problem", "show", args.problem],
                                      capture_output=True, text=True, check=True).stdout)
    case = {k: v for k, v in shown["benchmarks"][args.case].items() if k != "bytes"}
    sys.path.insert(0, task_dir)
    reference = importlib.import_module("reference")
    if "device" in inspect.signature(reference.generate_input).parameters:
        case["device"] = "cuda"
    return case, reference


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    probe_arguments(parser)
    args = parser.parse_args()

    import torch
    import torch.multiprocessing as mp

    task_dir = tempfile.mkdtemp(prefix="kj-fence-")
    case, reference = load_case(args, task_dir)
    submission = importlib.import_module("submission")
    data = reference.generate_input(**case)
    expected = reference.ref_kernel(data)
    expected = expected.clone() if isinstance(expected, torch.Tensor) else expected

    def check(out, want) -> bool:
        return bool(torch.allclose(out.float(), want.float(), rtol=1e-3, atol=1e-3))

    bracket = Bracket(torch)
    ctx = mp.get_context("spawn")
    report = {"case": case, "gate_seconds": GATE_SECONDS, "results": []}
    for hostile in (False, True):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=child_main, args=(child, task_dir, case,
                                                    bracket.go.ipc_handle(), hostile))
        proc.start()
        done = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), parent.recv())
        for calls in args.calls:
            row = {"calls": calls, "hostile_child": hostile,
                   "fenced": fenced(torch, parent, done, bracket, calls, args.samples, expected, check)}
            if not hostile:
                row["in_process"] = in_process(torch, submission, data, bracket, calls, args.samples)
                row["ratio"] = row["fenced"]["median_ns"] / row["in_process"]["median_ns"]
            report["results"].append(row)
            print(json.dumps(row), flush=True)
        parent.send(("exit",))
        proc.join(30)
    print(table(report["results"]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
