"""Sealed replay without a GPU: the recording shim (harness/sealed/record_shim.c) over a stand-in
libcuda (tests/bench/sealed/fake_libcuda.c), its records read by the judge's parser
(harness/kj_harness/sealed.py), and that module's comparison of two calls' records, pointer
classification and replay plan on synthetic records."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sealed")
sys.path.insert(0, os.path.join(ROOT, "harness"))
from kj_harness import sealed  # noqa: E402

CUDA_INCLUDE = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
EXPORTED = {
    "dlsym", "kj_record_begin", "kj_record_end", "cuGetProcAddress", "cuGetProcAddress_v2",
    "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData",
    "cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction", "cuLaunchKernel",
    "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", "cuMemcpyAsync",
    "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async", "cuMemsetD32Async_ptsz",
    "cuGraphLaunch"}
DEVICE = 1 << 40  # fake_libcuda's device memory: [2^40, 2^41) in 1 MiB allocations


@unittest.skipUnless(shutil.which("gcc") and shutil.which("nm")
                     and os.path.isfile(os.path.join(CUDA_INCLUDE, "cuda.h")),
                     "needs gcc, nm and cuda.h")
class Shim(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kj-shim-test-")
        cls.shim = os.path.join(cls.tmp, "kj_record_shim.so")
        fake = os.path.join(cls.tmp, "libcuda.so.1")
        cls.driver = os.path.join(cls.tmp, "driver")
        flags = ["-Wall", "-Wextra", "-Werror", f"-I{CUDA_INCLUDE}"]
        for cmd in (["gcc", "-O2", *flags, "-shared", "-fPIC", os.path.join(ROOT, "harness", "sealed", "record_shim.c"),
                     "-o", cls.shim, "-ldl", "-lpthread"],
                    ["gcc", *flags, "-shared", "-fPIC", os.path.join(HERE, "fake_libcuda.c"),
                     "-o", fake],
                    ["gcc", *flags, os.path.join(HERE, "driver.c"), "-o", cls.driver,
                     f"-L{cls.tmp}", "-l:libcuda.so.1", f"-Wl,-rpath,{cls.tmp}", "-ldl"]):
            subprocess.run(cmd, check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_exports_every_entry_point_it_wraps(self):
        out = subprocess.run(["nm", "-D", "--defined-only", self.shim], capture_output=True,
                             text=True, check=True).stdout
        names = {line.split()[-1] for line in out.splitlines() if line.strip()}
        self.assertEqual(EXPORTED - names, set())

    def test_records_calls_reached_directly_by_dlsym_and_by_cuGetProcAddress(self):
        jsonl, images = os.path.join(self.tmp, "r.jsonl"), os.path.join(self.tmp, "images")
        run = subprocess.run([self.driver, jsonl, images], capture_output=True, text=True,
                             env={**os.environ, "LD_PRELOAD": self.shim})
        self.assertEqual(run.returncode, 0, run.stderr + run.stdout)
        with open(jsonl) as f:
            record = sealed.parse_record(f.read())
        ops = record["ops"]
        self.assertEqual(record["calls"], 7)  # the launch before kj_record_begin is not there
        self.assertEqual([(op["ev"], op["api"], op["ptsz"]) for op in ops], [
            ("launch", "cuLaunchKernel", 0),  # direct
            ("launch", "cuLaunchKernel", 0),  # dlsym
            ("launch", "cuLaunchKernel_ptsz", 1),  # cuGetProcAddress, per-thread stream
            ("launch", "cuLaunchKernelEx", 0),
            ("memset", "cuMemsetD8Async", 0),  # through cuGetProcAddress's own wrapper
            ("memcpy", "cuMemcpyHtoDAsync_v2", 0),
            ("launch", "cuLaunchKernel", 0)])
        names = [record["functions"][op["function"]]["name"] for op in ops if op["ev"] == "launch"]
        self.assertEqual(names, ["add_kernel", "ptx_kernel", "add_kernel", "ptx_kernel",
                                 "unseen_kernel"])
        self.assertIsNone(record["functions"][ops[6]["function"]]["image"])
        kinds = sorted(ev["kind"] for ev in record["images"].values())
        self.assertEqual(kinds, ["cubin", "ptx"])
        for ev in record["images"].values():
            with open(ev["file"], "rb") as f:
                data = f.read()
            self.assertEqual(hashlib.sha256(data).hexdigest(), ev["hash"])
            if ev["kind"] == "cubin":  # copied at load, before the caller overwrote its buffer
                self.assertEqual(data[:4], b"\x7fELF")
                self.assertEqual(len(data), 128)
        first = ops[0]
        self.assertEqual((first["grid"], first["block"], first["smem"]), ([8, 1, 1], [128, 1, 1], 0))
        params = bytes.fromhex(first["params"])
        a, b = DEVICE + 0x100, DEVICE + (5 << 20) + 0x40
        self.assertEqual(params[:16], a.to_bytes(8, "little") + b.to_bytes(8, "little"))
        self.assertEqual([(p["at"], p["value"], p["range"]) for p in first["ptrs"]],
                         [(0, a, [DEVICE, 1 << 20]), (8, b, [DEVICE + (5 << 20), 1 << 20])])
        ex = ops[3]
        self.assertEqual(ex["param_source"], "extra")
        self.assertEqual(bytes.fromhex(ex["params"])[:8], b.to_bytes(8, "little"))
        self.assertEqual([attr["id"] for attr in ex["attrs"]], [4])  # cluster dimension
        self.assertEqual(ops[5]["host_bytes"], (1000).to_bytes(4, "little").hex())
        reasons = sealed.unsupported(record, {"input": [], "output": []}, "tensor")
        self.assertIn("2 streams", reasons)
        self.assertTrue(any("unseen_kernel from an image not recorded" in r for r in reasons))


def tensor(ptr, nbytes):
    return {"storage_ptr": ptr, "storage_nbytes": nbytes, "storage_offset": 0, "shape": [nbytes // 4],
            "stride": [1], "dtype": "float32"}


def record(launches, globals_=()):
    functions = {0: {"id": 0, "name": "add", "image": "h1", "params": [[0, 8], [8, 8], [16, 8],
                                                                        [24, 4]], "attrs": []}}
    ops = []
    for i, (words, n, grid) in enumerate(launches):
        params = b"".join(w.to_bytes(8, "little") for w in words) + n.to_bytes(4, "little")
        ptrs = [{"at": 8 * j, "value": w, "range": [w & ~0xFFFFF, 1 << 20]}
                for j, w in enumerate(words) if w >= DEVICE]
        ops.append({"ev": "launch", "seq": i, "api": "cuLaunchKernel", "function": 0,
                    "grid": grid, "block": [128, 1, 1], "smem": 0, "stream": 0, "result": 0,
                    "param_source": "kernelParams", "params": params.hex(), "ptrs": ptrs})
    return {"images": {"h1": {"hash": "h1", "kind": "cubin", "file": "h1.cubin"}}, "functions": functions,
            "ops": ops, "globals": list(globals_), "calls": len(ops)}


class Sequences(unittest.TestCase):
    A_IN, A_OUT, A_SCRATCH = DEVICE, DEVICE + (4 << 20), DEVICE + (9 << 20)
    B_IN, B_OUT, B_SCRATCH = DEVICE + (20 << 20), DEVICE + (24 << 20), DEVICE + (30 << 20)

    def tensors(self, inp, out):
        return {"input": [tensor(inp, 1 << 20)], "output": [tensor(out, 1 << 20)]}

    def test_calls_that_differ_only_in_where_buffers_lie_agree(self):
        a = record([([self.A_IN, self.A_OUT, self.A_SCRATCH + 64], 4096, [4, 1, 1])])
        b = record([([self.B_IN, self.B_OUT, self.B_SCRATCH + 128], 4096, [4, 1, 1])])
        self.assertEqual(sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                              b, self.tensors(self.B_IN, self.B_OUT)), [])

    def test_a_value_decided_on_the_host_from_the_inputs_is_a_difference(self):
        a = record([([self.A_IN, self.A_OUT, 0], 4096, [4, 1, 1])])
        b = record([([self.B_IN, self.B_OUT, 0], 4000, [4, 1, 1])])
        differences = sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                           b, self.tensors(self.B_IN, self.B_OUT))
        self.assertEqual(differences, ["call 0: parameter bytes other than addresses differ"])
        b = record([([self.B_IN, self.B_OUT, 0], 4096, [5, 1, 1])])
        self.assertIn("call 0: grid [4, 1, 1] vs [5, 1, 1]",
                      sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                           b, self.tensors(self.B_IN, self.B_OUT)))
        b = record([([self.B_IN, self.B_OUT, 0], 4096, [4, 1, 1])] * 2)
        self.assertIn("1 driver calls on one input, 2 on another",
                      sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                           b, self.tensors(self.B_IN, self.B_OUT)))

    def test_an_address_must_point_at_the_same_buffer_and_offset(self):
        a = record([([self.A_IN, self.A_OUT, 0], 4096, [4, 1, 1])])
        b = record([([self.B_OUT, self.B_IN, 0], 4096, [4, 1, 1])])  # swapped
        differences = sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                           b, self.tensors(self.B_IN, self.B_OUT))
        self.assertEqual(len(differences), 2)
        b = record([([self.B_IN + 256, self.B_OUT, 0], 4096, [4, 1, 1])])
        self.assertEqual(sealed.compare(a, self.tensors(self.A_IN, self.A_OUT),
                                              b, self.tensors(self.B_IN, self.B_OUT)),
                         [f"call 0: address ('param', 0) points at ('input', 0, 0) vs "
                          f"('input', 0, 256)"])

    def test_classification(self):
        tensors = self.tensors(self.A_IN, self.A_OUT)
        glob = [{"name": "table", "dptr": DEVICE + (50 << 20), "size": 64}]
        self.assertEqual(sealed.classify(self.A_IN + 8, tensors, glob), ("input", 0, 8))
        self.assertEqual(sealed.classify(self.A_OUT, tensors, glob), ("output", 0, 0))
        self.assertEqual(sealed.classify(DEVICE + (50 << 20) + 4, tensors, glob),
                         ("global", "table", 4))
        self.assertEqual(sealed.classify(self.A_SCRATCH + 8, tensors, glob,
                                               [self.A_SCRATCH, 1 << 20]),
                         ("scratch", self.A_SCRATCH, 1 << 20, 8))
        self.assertIsNone(sealed.classify(12345, tensors, glob))

    def test_the_plan_rewrites_every_address_to_the_trusted_buffers(self):
        a = record([([self.A_IN, self.A_OUT, self.A_SCRATCH + 64], 4096, [4, 1, 1]),
                    ([self.A_OUT, self.A_SCRATCH + 64, self.A_IN + 16], 7, [1, 1, 1])])
        tensors = self.tensors(self.A_IN, self.A_OUT)
        self.assertEqual(sealed.unsupported(a, tensors, "tensor"), [])
        the_plan = sealed.plan(a, tensors, "tensor")
        self.assertEqual(the_plan["scratch"], [1 << 20])
        bases = {("input", 0): 0x1000000, ("output", 0): 0x2000000, ("scratch", 0): 0x3000000}
        first, second = (sealed.patched_params(s, bases) for s in the_plan["steps"])
        words = [int.from_bytes(first[i:i + 8], "little") for i in (0, 8, 16)]
        self.assertEqual(words, [0x1000000, 0x2000000, 0x3000000 + 64])
        self.assertEqual(first[24:28], (4096).to_bytes(4, "little"))
        words = [int.from_bytes(second[i:i + 8], "little") for i in (0, 8, 16)]
        self.assertEqual(words, [0x2000000, 0x3000000 + 64, 0x1000000 + 16])

    def test_what_a_replay_does_not_reproduce(self):
        a = record([([self.A_IN, self.A_OUT, DEVICE + (50 << 20)], 1, [1, 1, 1])],
                   globals_=[{"name": "table", "dptr": DEVICE + (50 << 20), "size": 64}])
        a["ops"].append({"ev": "graph_launch", "api": "cuGraphLaunch", "stream": 7, "result": 0})
        reasons = sealed.unsupported(a, self.tensors(self.A_IN, self.A_OUT), "tensor")
        self.assertIn("2 streams", reasons)
        self.assertIn("call 1 (cuGraphLaunch): graph_launch is not replayed", reasons)
        self.assertIn("call 0 (cuLaunchKernel): address ('param', 16) in the device global table",
                      reasons)


if __name__ == "__main__":
    unittest.main()
