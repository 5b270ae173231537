"""Outputs between the runner and the harness: what goes through the pipe comes out equal, and a
hostile runner's frames (bad layouts, bytes out of range, objects that are not tensors) are
refused rather than trusted. Needs torch (run with the harness interpreter)."""

import json
import os
import shutil
import struct
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

import torch  # noqa: E402

from kj_harness import protocol  # noqa: E402


def through_pipe(header, payload=None):
    r, w = os.pipe()
    protocol.widen_pipe(r)
    errors = []

    def writer():
        try:
            protocol.send(w, header, payload)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            os.close(w)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        got = protocol.receive(r, 1 << 34)
    except protocol.ChannelClosed:
        got = None  # the writer refused before sending: its error is the answer
    finally:
        thread.join()
        os.close(r)
    if errors:
        raise errors[0]
    return got


def raw_frame(header: dict, payload: bytes) -> tuple[dict, object]:
    r, w = os.pipe()
    text = json.dumps(header).encode()

    def writer():
        try:
            protocol._write_all(w, struct.pack("<QQ", len(text), len(payload)) + text + payload)
        except BrokenPipeError:
            pass  # the receiver refused the frame before reading it all
        finally:
            os.close(w)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        return protocol.receive(r, 1 << 20)
    finally:
        os.close(r)
        thread.join()


class RoundTrip(unittest.TestCase):
    def test_nested_outputs_of_every_dtype_come_back_equal(self):
        out = {
            "a": torch.randn(3, 5),
            "b": (torch.arange(7, dtype=torch.int64), [torch.ones(2, 2, dtype=torch.float16)]),
            "bf16": torch.randn(4, dtype=torch.bfloat16),
            "flag": torch.tensor([True, False]),
            "scalar": torch.tensor(2.5, dtype=torch.float64),
            "empty": torch.empty(0, 3),
            "transposed": torch.randn(3, 4).t(),
            "int": 3, "float": 0.5, "nan": float("nan"), "none": None, "text": "ok",
        }
        header, payload = through_pipe({"ok": True}, out)
        self.assertEqual(header, {"ok": True})
        back = protocol.load_payload(payload, "cpu")
        self.assertEqual(sorted(back), sorted(out))
        for key in ("a", "bf16", "flag", "scalar", "empty", "transposed"):
            self.assertEqual(back[key].dtype, out[key].dtype, key)
            self.assertTrue(torch.equal(back[key], out[key]), key)
        self.assertIsInstance(back["b"], tuple)
        self.assertIsInstance(back["b"][1], list)
        self.assertTrue(torch.equal(back["b"][1][0], out["b"][1][0]))
        self.assertEqual((back["int"], back["float"], back["none"], back["text"]), (3, 0.5, None, "ok"))
        self.assertNotEqual(back["nan"], back["nan"])

    def test_a_large_output_arrives_whole(self):
        big = torch.randint(0, 255, (48 << 20,), dtype=torch.uint8)
        _, payload = through_pipe({}, [big, big[:5]])
        back = protocol.load_payload(payload, "cpu")
        self.assertTrue(torch.equal(back[0], big))
        self.assertTrue(torch.equal(back[1], big[:5]))

    def test_a_frame_without_payload_has_none(self):
        header, payload = through_pipe({"cmd": "kept"})
        self.assertEqual((header, payload), ({"cmd": "kept"}, b""))
        with self.assertRaises(protocol.ProtocolError):
            protocol.load_payload(payload, "cpu")


class Refused(unittest.TestCase):
    def test_objects_that_are_not_tensors_are_not_sent(self):
        class Lazy(torch.Tensor):
            pass

        for bad in (object(), {1.5: torch.ones(1)}, torch.ones(2).as_subclass(Lazy), [set()]):
            with self.assertRaises(TypeError):
                through_pipe({}, bad)

    def test_hostile_layouts_are_refused(self):
        desc = {"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16}
        cases = {
            "bytes beyond the payload": ({**desc, "shape": [8], "nbytes": 32}, 16),
            "nbytes not matching the shape": ({**desc, "nbytes": 12}, 16),
            "unknown dtype": ({**desc, "dtype": "object"}, 16),
            "negative dimension": ({**desc, "shape": [-4]}, 16),
            "misaligned offset": ({**desc, "offset": 3}, 32),
        }
        for name, (bad, size) in cases.items():
            header = {"_layout": {"root": {"tensor": 0}, "tensors": [bad]}}
            _, payload = raw_frame(header, bytes(size))
            with self.assertRaises(protocol.ProtocolError, msg=name):
                protocol.load_payload(payload, "cpu")
        for root in ({"tensor": 5}, {"eval": "1"}, {"value": [1]}, {"float": "1e999"}, "x"):
            _, payload = raw_frame({"_layout": {"root": root, "tensors": [desc]}}, bytes(16))
            with self.assertRaises(protocol.ProtocolError, msg=str(root)):
                protocol.load_payload(payload, "cpu")

    def test_ipc_handles_are_refused_off_a_gpu_and_when_malformed(self):
        # A runner may claim its output is device memory behind a CUDA IPC handle; on the CPU,
        # or with a handle that is not one, that is a bad frame, never an attempt to map it.
        ipc = {"dtype": "float32", "shape": [4], "nbytes": 16, "ipc": {"handle": "00" * 64, "offset": 0}}
        cases = {
            "an IPC handle for a CPU check": (ipc, "cpu"),
            "an IPC description that is not an object": ({**ipc, "ipc": "x"}, "cpu"),
            "a handle that is not a string": ({**ipc, "ipc": {"handle": 7, "offset": 0}}, "cuda:0"),
            "an offset that is not an integer": ({**ipc, "ipc": {"handle": "00" * 64, "offset": "0"}}, "cuda:0"),
        }
        for name, (bad, device) in cases.items():
            _, payload = raw_frame({"_layout": {"root": {"tensor": 0}, "tensors": [bad]}}, b"")
            with self.assertRaises(protocol.ProtocolError, msg=name):
                protocol.load_payload(payload, device)

    def test_a_runner_asked_for_ipc_on_the_cpu_sends_bytes(self):
        # CPU tensors never travel as handles, whatever the caller asks.
        r, w = os.pipe()
        hold = []
        protocol.send(w, {"ok": True}, [torch.arange(4.0)], ipc_hold=hold)
        os.close(w)
        header, payload = protocol.receive(r, 1 << 20)
        os.close(r)
        self.assertEqual(hold, [])
        self.assertTrue(torch.equal(protocol.load_payload(payload, "cpu")[0], torch.arange(4.0)))

    def test_a_payload_without_layout_or_over_the_limit_is_a_protocol_error(self):
        with self.assertRaises(protocol.ProtocolError):
            raw_frame({"ok": True}, b"1234")
        with self.assertRaises(protocol.ProtocolError):
            raw_frame({"_layout": {"root": {"value": 1}, "tensors": []}}, bytes(2 << 20))


class NamedOutputs(unittest.TestCase):
    """What torch routines return (torch.return_types structseqs) and named tuples are outputs:
    carried as data and rebuilt by the receiver with types of its own."""

    def test_structseqs_come_back_as_torchs_own_types(self):
        a = torch.randn(3, 6, 6)
        for out in (torch.geqrf(a), torch.linalg.qr(a), torch.topk(torch.randn(9), 3),
                    torch.linalg.eigh(a @ a.mT)):
            _, payload = through_pipe({}, out)
            back = protocol.load_payload(payload, "cpu")
            self.assertIs(type(back), type(out))
            for got, want in zip(back, out):
                self.assertTrue(torch.equal(got, want))
        q, r = protocol.load_payload(through_pipe({}, torch.linalg.qr(a))[1], "cpu")
        self.assertTrue(torch.allclose(q @ r, a, atol=1e-4))

    def test_named_tuples_keep_their_fields_as_a_type_of_the_receivers(self):
        from typing import NamedTuple

        class Factors(NamedTuple):
            h: torch.Tensor
            tau: torch.Tensor

        out = Factors(torch.randn(4, 4).t(), torch.arange(4.0))
        back = protocol.load_payload(through_pipe({}, [out])[1], "cpu")[0]
        self.assertIsNot(type(back), Factors)
        self.assertEqual(type(back)._fields, ("h", "tau"))
        self.assertTrue(torch.equal(back.h, out.h) and torch.equal(back.tau, out.tau))

    def test_a_tuple_class_with_methods_of_its_own_is_never_run(self):
        import collections

        calls = []

        class Sneaky(collections.namedtuple("Base", "x y")):
            def __iter__(self):
                calls.append("iter")
                return iter(())

        with self.assertRaises(TypeError):  # not a plain named tuple: its base is one
            through_pipe({}, Sneaky(torch.ones(1), torch.ones(1)))
        self.assertEqual(calls, [])

    def test_hostile_named_layouts_are_refused(self):
        desc = {"dtype": "float32", "shape": [1], "offset": 0, "nbytes": 4}
        for root in ({"return_type": ["Tensor", [{"tensor": 0}]]},
                     {"return_type": ["__builtins__", []]},
                     {"return_type": ["geqrf", [{"tensor": 0}]]},  # two fields, one item
                     {"namedtuple": ["T", ["__class__"], [{"tensor": 0}]]},
                     {"namedtuple": ["T", ["a", "a"], [{"tensor": 0}, {"tensor": 0}]]},
                     {"namedtuple": ["import os", ["a"], [{"tensor": 0}]]},
                     {"namedtuple": ["T", ["a", "b"], [{"tensor": 0}]]}):
            _, payload = raw_frame({"_layout": {"root": root, "tensors": [desc]}}, bytes(64))
            with self.assertRaises(protocol.ProtocolError, msg=str(root)):
                protocol.load_payload(payload, "cpu")


class SlowDevice:
    """A device whose copies land late, as on a GPU shared by several evaluations: each copy is
    queued and lands `delay` seconds later, unless a fence waits for it. Handles name buffers
    in `exported`, which the 'checker' below reads at once, as the harness's own copy would."""

    def __init__(self, delay: float = 0.3):
        self.delay = delay
        self.pending: list[threading.Timer] = []
        self.exported: dict[str, torch.Tensor] = {}

    def wants(self, tensor) -> bool:
        return True

    def copy(self, tensor):
        buffer = torch.full(tuple(tensor.shape), float("nan"), dtype=tensor.dtype)
        source = tensor.detach().clone()
        landing = threading.Timer(self.delay, buffer.copy_, args=(source,))
        landing.start()
        self.pending.append(landing)
        return buffer

    def fence(self, device) -> None:
        for landing in self.pending:
            landing.join()

    def export(self, buffer) -> dict:
        key = f"{len(self.exported):0128x}"
        self.exported[key] = buffer
        return {"handle": key, "offset": 0}


class IpcHandover(unittest.TestCase):
    """Outputs handed over by handle: the checker copies them in another process on its own
    stream, so the runner's copies must have landed before a handle leaves it (the race seen on
    an H200 with several evaluations on one GPU: a column-major output's contiguous copy had not
    run yet when the checker read it)."""

    def hand_over(self, output):
        device = SlowDevice()
        hold: list = []
        r, w = os.pipe()
        protocol.widen_pipe(r)
        protocol.send(w, {"ok": True}, output, ipc_hold=hold, staging=device)
        os.close(w)
        _, payload = protocol.receive(r, 1 << 20)
        os.close(r)
        # The checker copies as soon as the frame arrives.
        read = [device.exported[d["ipc"]["handle"]].clone() for d in payload.layout["tensors"]]
        for landing in device.pending:
            landing.join()
        return read, hold

    def test_the_checker_reads_finished_copies(self):
        output = [torch.randn(64, 32).t(), torch.arange(7.0)]
        read, _ = self.hand_over(output)
        for got, want in zip(read, output):
            self.assertTrue(torch.equal(got, want), "the checker read a copy that had not landed")

    def test_what_is_held_is_the_judges_copy_not_the_submissions_tensor(self):
        output = torch.randn(5, 5)
        read, hold = self.hand_over((output,))
        self.assertEqual(len(hold), 1)
        self.assertNotEqual(hold[0].untyped_storage().data_ptr(), output.untyped_storage().data_ptr())
        output.zero_()  # the submission changing its tensor afterwards reaches nothing held
        self.assertFalse(torch.equal(hold[0], output))
        self.assertTrue(torch.equal(read[0], hold[0]))


class ProfileMode(unittest.TestCase):
    """Under Nsight Compute (KJ_PROFILE=1): child processes start with fork + exec, a runner keeps
    the descriptors the profiler's injected library opens while the process runs (closing them
    hung every Triton profile on an H200) but never the harness's own, and a profiled evaluation
    runs to its end."""

    HARNESS = os.path.join(os.path.dirname(__file__), "..", "..", "harness")

    # Opens a descriptor after the harness's import (as the profiler's library does at CUDA's
    # start), registers a result fd and another runner's pipe end as the harness's, forks, and
    # prints what the runner holds after close_for_runner.
    PROBE = """
import json, os, subprocess, sys
import kj_harness.harness as h
profiler_r, profiler_w = os.pipe()
result_fd = os.open(os.devnull, os.O_WRONLY)
other_cmd_w, other_reply_r = os.pipe()
own_r, own_w = os.pipe()
h.HARNESS_FDS.update((result_fd, other_cmd_w, other_reply_r))
report_r, report_w = os.pipe()
pid = os.fork()
if pid == 0:
    h.close_for_runner({own_r, own_w, report_w})
    listed = [int(fd) for fd in os.listdir("/proc/self/fd")]
    held = []
    for fd in listed:
        try:
            os.fstat(fd)
            held.append(fd)
        except OSError:
            pass  # the listing's own descriptor, closed by now
    os.write(report_w, json.dumps(held).encode())
    os._exit(0)
os.close(report_w)
os.waitpid(pid, 0)
held = json.loads(os.read(report_r, 65536))
print(json.dumps({"held": held, "profiler": profiler_w, "result": result_fd,
                  "other": [other_cmd_w, other_reply_r], "own": [own_r, own_w, report_w],
                  "vfork": subprocess._USE_VFORK, "posix_spawn": subprocess._USE_POSIX_SPAWN,
                  "child": subprocess.check_output(["echo", "child ran"]).decode().strip()}))
"""

    def probe(self, profile: bool) -> dict:
        import subprocess

        env = {k: v for k, v in os.environ.items() if k != "KJ_PROFILE"}
        env["PYTHONPATH"] = self.HARNESS
        if profile:
            env["KJ_PROFILE"] = "1"
        out = subprocess.run([sys.executable, "-c", self.PROBE], env=env, capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def test_a_profiled_runner_keeps_the_profilers_descriptors_and_none_of_the_harnesss(self):
        got = self.probe(profile=True)
        self.assertIn(got["profiler"], got["held"], "the profiler's descriptor was closed")
        self.assertNotIn(got["result"], got["held"], "the runner holds the result fd")
        for fd in got["other"]:
            self.assertNotIn(fd, got["held"], "the runner holds another runner's pipe")
        for fd in got["own"]:
            self.assertIn(fd, got["held"])
        self.assertEqual((got["vfork"], got["posix_spawn"]), (False, False))
        self.assertEqual(got["child"], "child ran")

    def test_outside_profile_mode_a_runner_holds_only_its_own_pipes(self):
        import subprocess

        got = self.probe(profile=False)
        self.assertNotIn(got["profiler"], got["held"])
        self.assertNotIn(got["result"], got["held"])
        self.assertEqual(set(got["held"]) - {0, 1, 2}, set(got["own"]))
        self.assertEqual(got["vfork"], getattr(subprocess, "_USE_VFORK", None))
        self.assertEqual(got["posix_spawn"], subprocess._USE_POSIX_SPAWN)
        self.assertEqual(got["child"], "child ran")

    def test_a_profiled_evaluation_runs_to_its_end(self):
        """The harness's stack traces in profile mode start after the runners are forked: a
        runner forked while the trace's watchdog thread ran hung on the thread's lock."""
        import subprocess
        import tempfile

        problems = os.path.join(os.path.dirname(__file__), "..", "..", "problems")
        with tempfile.TemporaryDirectory() as task:
            for name in ("vectoradd/task.py", "utils.py", "vectoradd/reference.py"):
                shutil.copy(os.path.join(problems, name), task)
            shutil.copy(os.path.join(problems, "vectoradd", "solutions", "correct", "pytorch.py"),
                        os.path.join(task, "submission.py"))
            os.mkdir(os.path.join(task, "work"))
            result_r, result_w = os.pipe()
            job = {"protocol": 1, "mode": "benchmark", "device": "cpu", "task_dir": task,
                   "workdir": os.path.join(task, "work"), "result_fd": result_w, "tests": [],
                   "benchmarks": [{"seed": 31232, "size": 1024}],
                   "timing": {"max_samples": 1, "min_samples": 1, "max_seconds": 1.0}}
            env = {k: v for k, v in os.environ.items()}
            env.update(PYTHONPATH=self.HARNESS, KJ_PROFILE="1", CUDA_VISIBLE_DEVICES="")
            try:
                proc = subprocess.Popen([sys.executable, "-m", "kj_harness"], cwd=task, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, pass_fds=(result_w,))
                os.close(result_w)
                try:
                    _, stderr = proc.communicate(json.dumps(job).encode() + b"\n", timeout=90)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    _, stderr = proc.communicate()
                    self.fail("the profiled evaluation never ended: " + stderr.decode()[-2000:])
                with os.fdopen(result_r, "rb") as results:
                    result_r = -1
                    events = [json.loads(line) for line in results.read().splitlines() if line]
            finally:
                if result_r >= 0:
                    os.close(result_r)
            done = [e for e in events if e.get("event") == "done"]
            self.assertEqual(len(done), 1, stderr.decode()[-2000:])
            self.assertTrue(done[0]["passed"], events)


SEED_LOGGING_REFERENCE = """
import os

import vectoradd_reference as _real
from vectoradd_reference import check_implementation, ref_kernel  # noqa: F401


def generate_input(size, seed, device="cuda"):
    with open(os.environ["KJ_TEST_SEED_LOG"], "a") as log:
        log.write(f"{size} {seed}\\n")
    return _real.generate_input(size=size, seed=seed, device=device)
"""


class ReferenceAlone(unittest.TestCase):
    """Mode `reference` (the reference timed in a job of its own after the submission's run) is
    timed on exactly the inputs the submission's run was timed on: the salt that run reports in
    its benchmark event and, for a ranked run, the same secret. Every seed generate_input sees is
    logged (the harness unsandboxed, on the CPU)."""

    HARNESS = os.path.join(os.path.dirname(__file__), "..", "..", "harness")
    CASE = {"size": 256, "seed": 7311}
    # Exactly 5 timed calls on either side (the sample cap), whatever the machine's speed.
    TIMING = {"max_samples": 5, "min_samples": 5, "max_seconds": 60.0, "min_seconds": 0.0}

    def run_harness(self, task, job, secret):
        import subprocess

        result_r, result_w = os.pipe()
        job = {"protocol": 1, "device": "cpu", "task_dir": task, "workdir": os.path.join(task, "work"),
               "result_fd": result_w, "tests": [], "benchmarks": [self.CASE], "timing": self.TIMING,
               **job}
        env = {**os.environ, "PYTHONPATH": self.HARNESS, "CUDA_VISIBLE_DEVICES": "",
               "KJ_TEST_SEED_LOG": os.path.join(task, "seeds.log")}
        open(env["KJ_TEST_SEED_LOG"], "w").close()
        try:
            proc = subprocess.Popen([sys.executable, "-m", "kj_harness"], cwd=task, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, pass_fds=(result_w,))
            os.close(result_w)
            stdin = json.dumps(job).encode() + b"\n" + (f"{secret}\n".encode() if secret else b"")
            _, stderr = proc.communicate(stdin, timeout=120)
            with os.fdopen(result_r, "rb") as results:
                result_r = -1
                events = [json.loads(line) for line in results.read().splitlines() if line]
        finally:
            if result_r >= 0:
                os.close(result_r)
        done = [e for e in events if e.get("event") == "done"]
        self.assertTrue(done and done[0]["passed"], (events, stderr.decode()[-2000:]))
        with open(env["KJ_TEST_SEED_LOG"]) as log:
            seeds = {int(line.split()[1]) for line in log if line.strip()}
        return events, seeds

    def test_the_reference_alone_is_timed_on_the_submissions_inputs(self):
        import tempfile

        problems = os.path.join(os.path.dirname(__file__), "..", "..", "problems")
        for mode, secret in (("benchmark", None), ("leaderboard", 987654321)):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as task:
                for name in ("vectoradd/task.py", "utils.py"):
                    shutil.copy(os.path.join(problems, name), task)
                shutil.copy(os.path.join(problems, "vectoradd", "reference.py"),
                            os.path.join(task, "vectoradd_reference.py"))
                with open(os.path.join(task, "reference.py"), "w") as f:
                    f.write(SEED_LOGGING_REFERENCE)
                shutil.copy(os.path.join(problems, "vectoradd", "solutions", "correct", "pytorch.py"),
                            os.path.join(task, "submission.py"))
                os.mkdir(os.path.join(task, "work"))
                events, submission_seeds = self.run_harness(
                    task, {"mode": mode}, secret)
                timed = [e for e in events if e.get("event") == "benchmark"
                         and e.get("status") == "pass"]
                self.assertEqual(len(timed), 1, events)
                self.assertNotIn("reference_samples_ns", timed[0])  # not timed beside it
                salt = timed[0]["salt"]
                events, reference_seeds = self.run_harness(
                    task, {"mode": "reference", "salts": [salt], "samples": [5],
                           "ranked": secret is not None}, secret)
                reference = [e for e in events if e.get("event") == "reference"]
                self.assertEqual([e["index"] for e in reference], [0], events)
                self.assertEqual(len(reference[0]["samples_ns"]), 5)
                self.assertTrue(all(ns > 0 for ns in reference[0]["samples_ns"]))
                # Its warm-up call and 5 timed calls, every one an input the submission got; none
                # is the public seed task.yml states.
                self.assertEqual(len(reference_seeds), 6, reference_seeds)
                self.assertLessEqual(reference_seeds, submission_seeds)
                self.assertNotIn(self.CASE["seed"], reference_seeds)
                if secret is not None:
                    continue
                # Another salt: other inputs (the check above can fail); and no more samples
                # than the submission got (here 3).
                events, other = self.run_harness(
                    task, {"mode": "reference", "salts": [salt + 1], "samples": [3],
                           "ranked": False}, None)
                self.assertFalse(other & submission_seeds)
                reference = [e for e in events if e.get("event") == "reference"]
                self.assertEqual(len(reference[0]["samples_ns"]), 3)


if __name__ == "__main__":
    unittest.main()
