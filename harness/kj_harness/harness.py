"""The trusted side of an evaluation, run inside the sandbox.

It reads its job (JSON) on stdin, loads the problem's reference, forks the runner that loads the
submission, and reports facts as JSON lines on the result fd, which only this process holds:
per test whether the output matched (checked here, on inputs generated here), per benchmark the
timing samples. It never decides a verdict; the C++ judge does.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import random
import sys
import time
import traceback

from . import protocol, timing
from .runner import child_main, describe_exception

PROTOCOL_VERSION = 1
MAX_OUTPUT_PAYLOAD = 8 << 30


class Reporter:
    """Writes one JSON object per line to the result fd."""

    def __init__(self, fd: int):
        self.fd = fd

    def emit(self, event: str, **fields) -> None:
        line = json.dumps({"event": event, **fields}, default=str) + "\n"
        view = memoryview(line.encode())
        while view:
            view = view[os.write(self.fd, view):]


class RunnerGone(Exception):
    def __init__(self, status: str, signal: int | None):
        super().__init__(status)
        self.status = status
        self.signal = signal

    def error(self, during: str) -> dict:
        return {"type": "ProcessDied", "message": f"the submission's process {self.status}{during}",
                "traceback": "", "signal": self.signal}


class RunnerProcess:
    """The forked child that runs submission code, and the two pipes to it."""

    def __init__(self, result_fd: int, device: str, call_inputs):
        cmd_r, self.cmd_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            # The submission must never hold the result fd nor our ends of the pipes.
            for fd in (result_fd, self.cmd_w, self.reply_r):
                os.close(fd)
            child_main(cmd_r, reply_w, device, call_inputs)
        os.close(cmd_r)
        os.close(reply_w)
        self.status: str | None = None
        self.signal: int | None = None

    def ask(self, header: dict) -> tuple[dict, bytes]:
        try:
            protocol.send(self.cmd_w, header)
            return protocol.receive(self.reply_r, MAX_OUTPUT_PAYLOAD)
        except (protocol.ChannelClosed, BrokenPipeError):
            raise RunnerGone(self.reap(), self.signal) from None
        except protocol.ProtocolError as exc:
            # Only submission code (the runner or its forks) can garble the channel.
            os.kill(self.pid, 9)
            self.reap()
            raise RunnerGone(f"broke the result protocol ({exc})", None) from None

    def reap(self) -> str:
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            if os.WIFSIGNALED(status):
                self.signal = os.WTERMSIG(status)
                self.status = f"killed by signal {self.signal}"
            else:
                self.status = f"exited with code {os.WEXITSTATUS(status)}"
        return self.status

    def stop(self) -> None:
        if self.status is not None:
            return
        try:
            protocol.send(self.cmd_w, {"cmd": "exit"})
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = "stopped"
                return
            time.sleep(0.01)
        os.kill(self.pid, 9)
        self.reap()


def normalize_check(result) -> tuple[bool, str]:
    """check_implementation may return (bool, msg), a message string ('' = pass) or a bool."""
    if isinstance(result, tuple) and len(result) == 2:
        return bool(result[0]), str(result[1])
    if isinstance(result, str):
        return result == "", result
    if isinstance(result, bool):
        return result, "" if result else "check_implementation returned False"
    raise TypeError(f"check_implementation returned {type(result).__name__}")


class Evaluation:
    def __init__(self, job: dict, reporter: Reporter):
        self.job = job
        self.report = reporter
        self.device = job["device"]
        self.reference = None
        self.accepts_device = False
        self.runner: RunnerProcess | None = None

    def generate(self, args: dict):
        """The problem's generate_input; used here and, after the fork, in the runner."""
        if self.reference is None:
            self.import_reference()
        kwargs = dict(args)
        if self.accepts_device:
            kwargs["device"] = self.device
        return self.reference.generate_input(**kwargs)

    def import_reference(self) -> None:
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.set_device(torch.device(self.device))
        self.reference = importlib.import_module("reference")
        for name in ("generate_input", "ref_kernel", "check_implementation"):
            if not callable(getattr(self.reference, name, None)):
                raise AttributeError(f"reference.py does not define {name}")
        self.accepts_device = "device" in inspect.signature(
            self.reference.generate_input).parameters

    def load_reference(self) -> bool:
        self.report.emit("stage", stage="load_reference")
        try:
            self.import_reference()
        except BaseException as exc:  # noqa: BLE001
            self.report.emit("error", stage="load_reference", kind="problem",
                             error=describe_exception(exc))
            return False
        if self.device.startswith("cuda"):
            import torch

            self.report.emit("device", name=torch.cuda.get_device_name())
        return True

    def fork_runner(self) -> None:
        # Non-dumpable: the runner (same uid) then cannot open /proc/<us>/fd/<result fd>.
        set_non_dumpable()
        # Before any CUDA call here: a CUDA context does not survive fork.
        self.runner = RunnerProcess(self.job["result_fd"], self.device, self.generate)

    def load_submission(self) -> bool:
        self.report.emit("stage", stage="load_submission")
        try:
            reply, _ = self.runner.ask({"cmd": "load"})
        except RunnerGone as gone:
            self.report.emit("error", stage="load_submission", kind="exception",
                             error=gone.error(" while importing"))
            return False
        if not reply.get("ok"):
            kind = "compile" if reply.get("kind") == "compile" else "exception"
            self.report.emit("error", stage="load_submission", kind=kind,
                             error=sanitize_error(reply.get("error")))
            return False
        return True

    def check_case(self, args: dict) -> dict:
        """Runs the submission once on `args` and checks its output here. Returns event fields."""
        reply, blob = self.runner.ask({"cmd": "run", "args": args})
        if not reply.get("ok"):
            return {"status": "error", "error": sanitize_error(reply.get("error"))}
        fields = {"elapsed_ns": as_number(reply.get("elapsed_ns"))}
        if reply.get("unsendable"):
            return {**fields, "status": "fail", "message":
                    f"the output ({str(reply.get('output_type'))[:100]}) is not a tensor or a "
                    "plain container of tensors"}
        if reply.get("output_is_none") is True:
            output = None
        else:
            try:
                output = protocol.load_payload(blob, self.device)
            except BaseException as exc:  # noqa: BLE001
                return {**fields, "status": "fail",
                        "message": f"the output could not be read as tensors: {exc}"[:2000]}
        data = self.generate(args)
        try:
            passed, message = normalize_check(self.reference.check_implementation(data, output))
        except BaseException as exc:  # noqa: BLE001 - a checker crash on odd output is a mismatch
            passed, message = False, f"output rejected by the checker: {type(exc).__name__}: {exc}"
        return {**fields, "status": "pass" if passed else "fail", "message": message[:4000]}

    def run_tests(self) -> bool:
        self.report.emit("stage", stage="tests")
        all_passed = True
        for index, args in enumerate(self.job["tests"]):
            fields = self.check_case(args)
            self.report.emit("test", index=index, spec=args, **fields)
            if fields["status"] != "pass":
                all_passed = False
                if self.job.get("stop_on_failure", True):
                    break
        return all_passed

    def recheck(self, args: dict, kept: list[int], count: int) -> dict | None:
        """Checks outputs of `count` timed calls picked here at random after timing ended
        (the runner cannot know which); returns failure fields, or None when all match."""
        if not kept:
            return {"status": "fail", "message": "no output of a timed call was kept to re-check"}
        picks = sorted(random.SystemRandom().sample(kept, min(count, len(kept))))
        reply, blob = self.runner.ask({"cmd": "outputs", "indices": picks})
        if not reply.get("ok"):
            return {"status": "error", "error": sanitize_error(reply.get("error"))}
        if reply.get("unsendable"):
            return {"status": "fail", "message": "outputs of timed calls are not tensors"}
        try:
            outputs = protocol.load_payload(blob, self.device)
        except BaseException as exc:  # noqa: BLE001
            return {"status": "fail", "message": f"timed outputs could not be read: {exc}"[:2000]}
        if not isinstance(outputs, list) or len(outputs) != len(picks):
            return {"status": "fail", "message": "the runner sent the wrong number of outputs"}
        for iteration, output in zip(picks, outputs):
            data = self.generate(timing.iteration_args(args, iteration))
            try:
                passed, message = normalize_check(self.reference.check_implementation(data, output))
            except BaseException as exc:  # noqa: BLE001
                passed, message = False, f"output rejected by the checker: {exc}"
            if not passed:
                return {"status": "fail", "message":
                        f"timed call {iteration} produced a wrong output: {message}"[:4000]}
        return None

    def run_benchmarks(self) -> bool:
        self.report.emit("stage", stage="benchmarks")
        settings = self.job.get("timing", {})
        recheck_count = int(settings.get("recheck", 1))
        for index, args in enumerate(self.job["benchmarks"]):
            fields = self.check_case(args)
            if fields["status"] != "pass":
                self.report.emit("benchmark", index=index, spec=args, **fields)
                return False
            reply, _ = self.runner.ask({"cmd": "time", "args": args, "settings": settings})
            if not reply.get("ok"):
                self.report.emit("benchmark", index=index, spec=args, status="error",
                                 error=sanitize_error(reply.get("error")))
                return False
            samples = [as_number(x) for x in reply.get("samples_ns", [])][:100000]
            if not samples or min(samples) <= 0 or not all(math.isfinite(x) for x in samples):
                self.report.emit("benchmark", index=index, spec=args, status="error", error={
                    "type": "BadTiming", "message": "timing produced no valid samples",
                    "traceback": ""})
                return False
            kept = [k for k in reply.get("kept", []) if isinstance(k, int)][:100000]
            failure = self.recheck(args, kept, recheck_count)
            if failure is not None:
                self.report.emit("benchmark", index=index, spec=args, **failure)
                return False
            clocks = [as_number(c) if c is not None else None
                      for c in reply.get("sm_clock_mhz", [])][:len(samples)]
            self.report.emit("benchmark", index=index, spec=args, status="pass",
                             samples_ns=samples, sm_clock_mhz=clocks,
                             clock=str(reply.get("clock"))[:32],
                             method=str(reply.get("method"))[:32],
                             stop_reason=str(reply.get("stop_reason"))[:32],
                             batch=int(as_number(reply.get("batch", 1))),
                             at_launch_floor=reply.get("at_launch_floor") is True,
                             rechecked=min(recheck_count, len(kept)))
        return True

    def run(self) -> None:
        self.fork_runner()
        if not self.load_reference() or not self.load_submission():
            self.finish(False)
            return
        try:
            if self.job["mode"] == "benchmark":
                passed = self.run_benchmarks()
            else:
                passed = self.run_tests()
        except RunnerGone as gone:
            self.report.emit("error", stage="run", kind="exception", error=gone.error(""))
            passed = False
        self.finish(passed)

    def finish(self, passed: bool) -> None:
        if self.runner is not None:
            self.runner.stop()
        self.report.emit("done", passed=passed)


def set_non_dumpable() -> None:
    import ctypes

    PR_SET_DUMPABLE = 4
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def as_number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def sanitize_error(error) -> dict:
    """Errors come from the untrusted runner: keep only bounded strings."""
    if not isinstance(error, dict):
        return {"type": "Unknown", "message": "the submission failed", "traceback": ""}
    return {key: str(error.get(key, ""))[:limit]
            for key, limit in (("type", 200), ("message", 4000), ("traceback", 16000))}


def main() -> int:
    job = json.loads(sys.stdin.read())
    if job.get("protocol") != PROTOCOL_VERSION:
        print(f"kj harness: unsupported protocol {job.get('protocol')}", file=sys.stderr)
        return 2
    reporter = Reporter(job["result_fd"])
    try:
        import torch
        import numpy  # noqa: F401 - imported once here so the runner inherits it

        try:
            import triton
            triton_version = triton.__version__
        except ImportError:
            triton_version = None
        reporter.emit("hello", protocol=PROTOCOL_VERSION, python=sys.version.split()[0],
                      torch=torch.__version__, triton=triton_version, device=job["device"])
        sys.path.insert(0, job["task_dir"])
        os.makedirs(job.get("workdir", "/tmp/work"), exist_ok=True)
        os.chdir(job.get("workdir", "/tmp/work"))
        Evaluation(job, reporter).run()
    except BaseException as exc:  # noqa: BLE001
        reporter.emit("error", stage="harness", kind="harness", error=describe_exception(exc))
        return 1
    return 0
