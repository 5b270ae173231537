"""Outputs between the runner and the harness: what goes through the pipe comes out equal, and a
hostile runner's frames (bad layouts, bytes out of range, objects that are not tensors) are
refused rather than trusted. Needs torch (run with the harness interpreter)."""

import json
import os
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


class ProfileMode(unittest.TestCase):
    """Under Nsight Compute (KJ_PROFILE=1) the harness starts child processes with fork + exec:
    vfork and posix_spawn children were seen stuck before their exec under ncu's process
    tracking (Triton's `ldconfig -p`, then the run never ended). It also keeps the descriptors
    it started with, which are the profiler's."""

    PROBE = ("import os, subprocess, kj_harness.harness as h; "
             "print(subprocess._USE_VFORK, subprocess._USE_POSIX_SPAWN, sorted(h.PROFILER_FDS), "
             "subprocess.check_output(['echo', 'child ran']).decode().strip(), sep='|')")

    def probe(self, profile: bool) -> list[str]:
        import subprocess

        env = {k: v for k, v in os.environ.items() if k != "KJ_PROFILE"}
        env["PYTHONPATH"] = os.path.join(os.path.dirname(__file__), "..", "..", "harness")
        if profile:
            env["KJ_PROFILE"] = "1"
        r, w = os.pipe()  # stands for the profiler's descriptor: open when the harness starts
        try:
            os.dup2(w, 7)
            out = subprocess.run([sys.executable, "-c", self.PROBE], env=env, pass_fds=(7,),
                                 capture_output=True, text=True, timeout=120)
        finally:
            os.close(7)
            os.close(r)
            os.close(w)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip().split("|")

    def test_profile_mode_forks_and_execs_and_keeps_the_profilers_descriptors(self):
        vfork, posix_spawn, fds, child = self.probe(profile=True)
        self.assertEqual((vfork, posix_spawn), ("False", "False"))
        self.assertIn(7, json.loads(fds))
        self.assertEqual(child, "child ran")

    def test_outside_profile_mode_nothing_changes(self):
        import subprocess

        vfork, posix_spawn, fds, child = self.probe(profile=False)
        self.assertEqual(vfork, str(getattr(subprocess, "_USE_VFORK", None)))
        self.assertEqual(posix_spawn, str(subprocess._USE_POSIX_SPAWN))
        self.assertEqual(fds, "[]")
        self.assertEqual(child, "child ran")


if __name__ == "__main__":
    unittest.main()
