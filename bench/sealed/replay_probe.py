#!/usr/bin/env python3
"""Sealed timing, design 1 (sealed replay): a probe.

Run on an H100 for the bundled vectoradd's Triton and PyTorch solutions and pmpp_v2 vectoradd:
recorded, replayed and checked, medians within 0-2.5 % of in-process ones (docs/sealed-timing.md).

The submission runs in a child process with bench/sealed/record_shim.c preloaded. After
warm-up (compilation, autotuning), the shim records one `custom_kernel` call on inputs A and
one on inputs B (other seeds): the code images its kernels came from, every launch (function,
grid, block, dynamic shared memory, stream, launch attributes, parameter bytes, and which
parameter words are device addresses), and its copies and memsets. The child reports each
input's and output's address, size, shape and dtype, and times `custom_kernel` in its own
process as fence_probe.py's in-process side does (gate, L2 flush, events; 1 and 10 calls).

The trusted side (this process, no shim) compares the two records: the same functions, grids,
blocks, shared memory and parameter bytes, except for addresses, each of which must point at
the same input or output at the same offset in both calls, or into scratch. If anything else
differs, the launches depend on the input values on the host, and such a submission falls
back to in-process timing. Otherwise it loads the recorded images with cuModuleLoadData into
torch's context, makes fresh inputs with generate_input on a third seed, allocates outputs and
scratch, rewrites every address parameter to its own buffers, and replays the launches on its
own stream, timed like the child's (per call, and as CUDA graphs of 10 calls). The replayed
output is checked against the reference on the fresh inputs. Last, the submission is imported
here too and called in turns with the replay, sample by sample in this one context
(`interleaved` in the report): the child's series and the replayed one run one after the
other, in two processes, and differ by the GPU's drift between them.

Here the trusted side checks in the same process and context that replays the submission's
code. In production the replaying process must hold nothing secret on the GPU: the expected
outputs are computed and compared in another process and context, since the replayed kernels
can read and write anything in the context they run in (docs/sealed-timing.md).

Usage (GPU host): bench/sealed/replay_probe.py --kj build/kj --problem problems/vectoradd \\
    --submission problems/vectoradd/solutions/correct/triton.py --case 2 [--calls 1 10] \\
    [--samples 200] [--json OUT] [--records DIR] [--shim kj_record_shim.so]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fence_probe import Bracket, in_process, interleaved, load_case, probe_arguments  # noqa: E402

# The record, its comparison and plan, and the driver calls: the judge's own (harness/kj_harness/
# sealed.py), so the probe measures what the judge runs.
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness"))
from kj_harness.guard import input_tensors  # noqa: E402
from kj_harness.sealed import (Driver, LaunchConfig, address, compare, describe,  # noqa: E402
                               load_function, parse_record, patched_params, plan, structure,
                               unsupported)


def load_record(path: str) -> dict:
    with open(path) as f:
        return parse_record(f.read())


# ------------------------------------------------------------------ the runner's side


def child_main(conn, task_dir: str, case: dict, seeds: list, shim: str, record_dir: str,
               calls: list, samples: int) -> None:
    """The untrusted side: the submission's process, with the shim preloaded."""
    os.environ.pop("LD_PRELOAD", None)  # compilers started from here go without it
    sys.path.insert(0, task_dir)
    os.chdir(task_dir)
    import torch

    lib = ctypes.CDLL(shim)  # the preloaded copy
    lib.kj_record_begin.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.kj_record_end.restype = ctypes.c_longlong
    torch.cuda.set_device(0)
    reference = importlib.import_module("reference")
    submission = importlib.import_module("submission")
    warm = reference.generate_input(**case)
    for _ in range(3):
        submission.custom_kernel(warm)
    torch.cuda.synchronize()
    report, keep = {"recordings": []}, []
    for name, seed in zip("AB", seeds):
        data = reference.generate_input(**{**case, "seed": seed})
        torch.cuda.synchronize()
        path = os.path.join(record_dir, f"{name}.jsonl")
        if lib.kj_record_begin(path.encode(), os.path.join(record_dir, "images").encode()) != 0:
            raise RuntimeError("kj_record_begin failed")
        out = submission.custom_kernel(data)
        torch.cuda.synchronize()
        written = lib.kj_record_end()
        keep.append((data, out))  # alive, so B's buffers lie elsewhere than A's
        report["recordings"].append({
            "path": path, "seed": seed, "written": written, "structure": structure(torch, out),
            "tensors": {"input": describe(data), "output": describe(out)},
            "stream": torch.cuda.current_stream().cuda_stream})
    bracket = Bracket(torch)
    report["in_process"] = {str(k): in_process(torch, submission, warm, bracket, k, samples)
                            for k in calls}
    conn.send(report)


# ------------------------------------------------------------------ the trusted side


class Replay:
    """The recorded call, loaded and bound to this process's buffers."""

    def __init__(self, torch, driver: Driver, the_plan: dict, images: dict, bases: dict):
        self.torch, self.d, self.calls = torch, driver, []
        self.keep = []
        modules, functions = {}, {}
        for step in the_plan["steps"]:
            if step["ev"] == "launch":
                key = (step["image"], step["name"])
                if key not in functions:
                    functions[key] = load_function(driver, modules, step,
                                                   lambda s=step: images[s["image"]])
                self.calls.append(self.bind_launch(step, functions[key], bases))
            else:
                self.calls.append(self.bind_copy(step, bases))
        self.modules = modules

    def bind_launch(self, step, f, bases):
        buf = ctypes.create_string_buffer(patched_params(step, bases) or b"\0")
        base = ctypes.addressof(buf)
        params = (ctypes.c_void_p * max(len(step["layout"]), 1))(
            *[base + off for off, _ in step["layout"]])
        self.keep += [buf, params]
        if step.get("attrs"):
            raw = b"".join(bytes.fromhex(a["bytes"]) for a in step["attrs"])
            attrs = ctypes.create_string_buffer(raw)
            config = LaunchConfig((ctypes.c_uint * 3)(*step["grid"]),
                                  (ctypes.c_uint * 3)(*step["block"]), step["smem"], None,
                                  ctypes.addressof(attrs), len(step["attrs"]))
            self.keep += [attrs, config]

            def launch(stream):
                config.stream = stream
                self.d.cuLaunchKernelEx(ctypes.byref(config), f, params, None)
            return launch
        g, b, smem = step["grid"], step["block"], step["smem"]
        return lambda stream: self.d.cuLaunchKernel(f, *g, *b, smem, stream, params, None)

    def bind_copy(self, step, bases):
        d = self.d
        dst = address(step["dst"], bases)
        if step["ev"] == "memset":
            fn = {1: d.cuMemsetD8Async, 2: d.cuMemsetD16Async, 4: d.cuMemsetD32Async}[step["elem"]]
            return lambda stream: fn(dst, step["value"], step["count"], stream)
        if step["kind"] == "HtoD":
            host = ctypes.create_string_buffer(bytes.fromhex(step["host_bytes"]) or b"\0")
            self.keep.append(host)
            return lambda stream: d.cuMemcpyHtoDAsync_v2(dst, host, step["bytes"], stream)
        src = address(step["src"], bases)
        return lambda stream: d.cuMemcpyDtoDAsync_v2(dst, src, step["bytes"], stream)

    def __call__(self):
        stream = self.torch.cuda.current_stream().cuda_stream  # the capture stream in a graph
        for call in self.calls:
            call(stream)


def fresh_buffers(torch, recording: dict, data, the_plan: dict):
    """This process's inputs (from generate_input), outputs and scratch: bases for plan()'s
    references, the output as the submission returned it, and layout problems if any."""
    problems, bases = [], {}
    fresh = describe(data)
    flat_inputs = input_tensors(data)
    recorded = recording["tensors"]
    for k, (old, new) in enumerate(zip(recorded["input"], fresh)):
        for key in ("shape", "stride", "dtype", "storage_offset", "storage_nbytes"):
            if old[key] != new[key]:
                problems.append(f"input {k}: {key} {old[key]} recorded, {new[key]} fresh")
        bases[("input", k)] = new["storage_ptr"]
    if len(recorded["input"]) != len(fresh):
        problems.append(f"{len(recorded['input'])} input tensors recorded, {len(fresh)} fresh")
    outputs, storages = [], []
    for k, old in enumerate(recorded["output"]):
        alias = next((j for j, t in enumerate(recorded["input"])
                      if t["storage_ptr"] == old["storage_ptr"]), None)
        if alias is not None and alias < len(flat_inputs):
            storage = flat_inputs[alias].untyped_storage()
        else:
            raw = torch.empty(old["storage_nbytes"], dtype=torch.uint8, device="cuda")
            storages.append(raw)
            storage = raw.untyped_storage()
        bases[("output", k)] = storage.data_ptr()
        t = torch.empty(0, dtype=getattr(torch, old["dtype"]), device="cuda")
        t.set_(storage, old["storage_offset"], old["shape"], old["stride"])
        outputs.append(t)
    scratch = [torch.empty(size, dtype=torch.uint8, device="cuda") for size in the_plan["scratch"]]
    for i, s in enumerate(scratch):
        bases[("scratch", i)] = s.data_ptr()
    shape = recording["structure"]
    out = outputs[0] if shape == "tensor" else (tuple(outputs) if shape[0] == "tuple" else outputs)
    return bases, out, problems, (storages, scratch)


def check(reference, data, out) -> tuple[bool, str]:
    if hasattr(reference, "check_implementation"):
        r = reference.check_implementation(data, out)
        if isinstance(r, tuple):
            return bool(r[0]), str(r[1])[:300]
        if isinstance(r, str):
            return r == "", r[:300]
        return bool(r), ""
    import torch

    expected = reference.ref_kernel(data)
    return bool(torch.allclose(out.float(), expected.float(), rtol=1e-3, atol=1e-3)), ""


def scaled(stats: dict, by: int) -> dict:
    return {**stats, "median_ns": stats["median_ns"] / by, "iqr_ns": stats["iqr_ns"] / by}


def trusted_replay(torch, reference, case: dict, seed: int, recording: dict, the_plan: dict,
                   images: dict, calls: list, samples: int) -> dict:
    torch.cuda.init()
    torch.cuda.set_device(0)
    torch.zeros(1, device="cuda")
    driver = Driver()
    ctx = ctypes.c_void_p()
    driver.cuCtxGetCurrent(ctypes.byref(ctx))
    if not ctx.value:
        raise RuntimeError("no current CUDA context after torch's initialisation")
    data = reference.generate_input(**{**case, "seed": seed})
    bases, out, problems, keep = fresh_buffers(torch, recording, data, the_plan)
    result = {"seed": seed, "layout_problems": problems}
    if problems:
        return result
    replay = Replay(torch, driver, the_plan, images, bases)
    for raw in keep[0]:
        raw.fill_(255)  # NaN in floating point: an output the replay did not write fails
    replay()
    torch.cuda.synchronize()
    result["check"] = check(reference, data, out)
    bracket = Bracket(torch)
    runner = types.SimpleNamespace(custom_kernel=lambda _data: replay())
    result["replayed"] = {str(k): in_process(torch, runner, None, bracket, k, samples)
                          for k in calls}
    graphs = {}
    for k in calls:
        try:
            graph = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                replay()
            torch.cuda.synchronize()
            with torch.cuda.graph(graph):
                for _ in range(k):
                    replay()
            runner = types.SimpleNamespace(custom_kernel=lambda _data, g=graph: g.replay())
            graphs[str(k)] = scaled(in_process(torch, runner, None, bracket, 1, samples), k)
        except RuntimeError as e:
            graphs[str(k)] = {"error": str(e)[:300]}
    result["replayed_graph"] = graphs
    # The submission called here too, sample by sample in turns with the replay, in this one
    # context: the comparison the 1 % line is about (the child's in-process series ran before,
    # in another process). Submission code in the trusted process: a probe's shortcut only.
    submission = importlib.import_module("submission")
    own = reference.generate_input(**{**case, "seed": seed + 1})
    result["interleaved"] = {
        str(k): interleaved(torch, {"in_process": (submission.custom_kernel, own),
                                    "replayed": (lambda _data: replay(), None)},
                            bracket, k, samples) for k in calls}
    torch.cuda.synchronize()
    result["check_after_timing"] = check(reference, data, out)
    return result


# ------------------------------------------------------------------ the probe


def build_shim(into: str) -> str:
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    out = os.path.join(into, "kj_record_shim.so")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC", f"-I{cuda}/include",
                    os.path.join(HERE, "..", "..", "harness", "sealed", "record_shim.c"), "-o", out, "-ldl", "-lpthread"],
                   check=True)
    return out


def read_images(record: dict) -> dict:
    images = {}
    for key, ev in record["images"].items():
        if "file" not in ev:
            continue
        with open(ev["file"], "rb") as f:
            data = f.read()
        if hashlib.sha256(data).hexdigest() != ev["hash"]:
            raise RuntimeError(f"image {ev['file']}: its hash is not its name")
        images[key] = data
    return images


def table(report: dict) -> str:
    def cell(stats) -> str:
        if not stats or "median_ns" not in stats:
            return (stats or {}).get("error", "")[:40]
        return f"{stats['median_ns']:.0f} ({stats['iqr_ns']:.0f})"

    lines = ["| calls | replayed median ns (IQR) | replayed as a graph | in-process median ns (IQR) "
             "| ratio replayed/in-process |", "|---|---|---|---|---|"]
    trusted = report.get("trusted") or {}
    for k, inproc in report["in_process"].items():
        rep = (trusted.get("replayed") or {}).get(k)
        graph = (trusted.get("replayed_graph") or {}).get(k)
        ratio = rep["median_ns"] / inproc["median_ns"] if rep else float("nan")
        lines.append(f"| {k} | {cell(rep)} | {cell(graph)} | {cell(inproc)} | {ratio:.4f} |")
    for k, pair in (trusted.get("interleaved") or {}).items():
        ratio = pair["replayed"]["median_ns"] / pair["in_process"]["median_ns"]
        lines.append(f"| {k}, in turns in one process | {cell(pair['replayed'])} | | "
                     f"{cell(pair['in_process'])} | {ratio:.4f} |")
    lines.append("")
    lines.append(f"launches per call: {report['launches_per_call']}; images: {report['images']}; "
                 f"timing: {report['timing']}")
    for reason in report["differences"] + report["unsupported"]:
        lines.append(f"  - {reason}")
    if trusted.get("check"):
        lines.append(f"check of the replayed output on fresh inputs: {trusted['check']}; "
                     f"after timing: {trusted.get('check_after_timing')}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    probe_arguments(parser)
    parser.add_argument("--records", help="keep the records and images here")
    parser.add_argument("--shim", help="a built record_shim.c (else built here with gcc)")
    args = parser.parse_args()

    import multiprocessing as mp

    import torch

    work = tempfile.mkdtemp(prefix="kj-replay-")
    task_dir = os.path.join(work, "task")
    os.mkdir(task_dir)
    record_dir = args.records or os.path.join(work, "records")
    os.makedirs(record_dir, exist_ok=True)
    shim = os.path.abspath(args.shim) if args.shim else build_shim(work)
    case, reference = load_case(args, task_dir)
    seeds = [case["seed"] + 1, case["seed"] + 2, case["seed"] + 3]

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    os.environ["LD_PRELOAD"] = shim
    try:
        proc = ctx.Process(target=child_main, args=(child, task_dir, case, seeds[:2], shim,
                                                    record_dir, args.calls, args.samples))
        proc.start()
    finally:
        del os.environ["LD_PRELOAD"]
    try:
        runner = parent.recv()
    except EOFError:
        proc.join(60)
        raise SystemExit(f"the runner's process ended without a report (exit {proc.exitcode})")
    proc.join(60)

    rec_a, rec_b = (load_record(r["path"]) for r in runner["recordings"])
    tens_a, tens_b = (r["tensors"] for r in runner["recordings"])
    differences = compare(rec_a, tens_a, rec_b, tens_b)
    shape = runner["recordings"][0]["structure"]
    reasons = unsupported(rec_a, tens_a, shape)
    report = {"case": case, "seeds": seeds, "records": record_dir,
              "launches_per_call": sum(op["ev"] == "launch" for op in rec_a["ops"]),
              "calls_per_call": len(rec_a["ops"]), "images": len(rec_a["images"]),
              "image_kinds": sorted({ev.get("kind", "?") for ev in rec_a["images"].values()}),
              "streams": sorted({op.get("stream") for op in rec_a["ops"]}),
              "runner_stream": runner["recordings"][0]["stream"],
              "differences": differences, "unsupported": reasons,
              "in_process": runner["in_process"], "recordings": runner["recordings"]}
    if differences:
        report["timing"] = "host-side data-dependent: falls back to in-process timing"
    elif reasons:
        report["timing"] = "not replayable by this probe: falls back to in-process timing"
    else:
        report["timing"] = "replayed"
        the_plan = plan(rec_a, tens_a, shape)
        report["trusted"] = trusted_replay(torch, reference, case, seeds[2], runner["recordings"][0],
                                           the_plan, read_images(rec_a), args.calls, args.samples)
    print(json.dumps({k: v for k, v in report.items() if k != "recordings"}), flush=True)
    print(table(report))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    if not args.records:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
