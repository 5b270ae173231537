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

from . import compile_cache, cudaipc, guard, protocol, ranks, sealed, timing
from .runner import child_main, describe_exception

PROTOCOL_VERSION = 1
MAX_OUTPUT_PAYLOAD = 8 << 30
MIN_PAIRS = 16
SEALED = "sealed"  # the runner that replays recorded calls
RECHECK_BATCH = 8
STARTED = time.monotonic()


class Reporter:
    """Writes one JSON object per line to the result fd."""

    def __init__(self, fd: int):
        self.fd = fd

    def emit(self, event: str, **fields) -> None:
        # t_s: seconds since the harness started, so a run's time can be split into its stages.
        fields["t_s"] = round(time.monotonic() - STARTED, 4)
        line = json.dumps({"event": event, **fields}, default=str) + "\n"
        view = memoryview(line.encode())
        while view:
            view = view[os.write(self.fd, view):]


class RunnerGone(Exception):
    def __init__(self, status: str, signal: int | None, runner: str):
        super().__init__(status)
        self.status = status
        self.signal = signal
        self.runner = runner

    def error(self, during: str) -> dict:
        return {"type": "ProcessDied", "message": f"the submission's process {self.status}{during}",
                "traceback": "", "signal": self.signal}


class RunnerProcess:
    """The forked child that runs submission code, and the two pipes to it."""

    def __init__(self, name: str, device: str, call_inputs, task_dir: str,
                 kernel_language: str = "any", group: dict | None = None):
        self.name = name
        cmd_r, self.cmd_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        HARNESS_FDS.update((self.cmd_w, self.reply_r))
        protocol.widen_pipe(self.reply_r)
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            # The submission must never hold the result fd, nor any harness end of any runner's
            # pipes (a second submission must not reach the first's channel), nor stdin, where
            # the secret seed of a ranked run waits to be read by the harness.
            close_for_runner({cmd_r, reply_w})
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            child_main(cmd_r, reply_w, device, call_inputs, task_dir, kernel_language, group)
        os.close(cmd_r)
        os.close(reply_w)
        self.status: str | None = None
        self.signal: int | None = None

    def ask(self, header: dict) -> tuple[dict, bytes]:
        self.post(header)
        return self.collect()

    def post(self, header: dict) -> None:
        """Sends a command without waiting for the reply (`collect` reads it)."""
        try:
            protocol.send(self.cmd_w, header)
        except BrokenPipeError:
            raise RunnerGone(self.reap(), self.signal, self.name) from None

    def collect(self) -> tuple[dict, bytes]:
        try:
            return protocol.receive(self.reply_r, MAX_OUTPUT_PAYLOAD)
        except (protocol.ChannelClosed, BrokenPipeError):
            raise RunnerGone(self.reap(), self.signal, self.name) from None
        except protocol.ProtocolError as exc:
            # Only submission code (the runner or its forks) can garble the channel.
            os.kill(self.pid, 9)
            self.reap()
            raise RunnerGone(f"broke the result protocol ({exc})", None, self.name) from None

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


CHECKER_OOM_WAITS = (0.5, 2.0, 5.0, 10.0)  # seconds before each further try of a check


class CheckerOutOfMemory(Exception):
    """The trusted checker found no device memory even after waiting (an infrastructure fault)."""


def is_device_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.OutOfMemoryError) or \
        (isinstance(exc, RuntimeError) and "CUDA out of memory" in str(exc))


def free_device_cache() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def device_memory_note() -> str:
    import torch

    try:
        free, total = torch.cuda.mem_get_info()
        return f"{free >> 20} MiB free of {total >> 20} MiB on the device"
    except Exception:  # noqa: BLE001
        return "device memory unknown"


def seed_global_generators(args: dict) -> None:
    """Seeds torch's global generators (CPU and every GPU) and Python's from the case's arguments
    before each generate_input. Problems that draw part of their inputs from the global
    generators (reference-kernels' bioml/trimul draws its weights so; its eval.py seeds once per
    process and generates and checks the same tensors) then get the same inputs in the runner
    and in the harness, whatever either drew before."""
    import hashlib

    import torch

    text = json.dumps(args, sort_keys=True, default=str).encode()
    seed = int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1
    # What torch.manual_seed seeds on the devices kj runs on, without its cost: it also queues
    # seeds for backends never started here (XPU), each time formatting the caller's stack
    # (~0.05-0.2 ms a call, paid for every input a timed sample generates). A GPU run's
    # processes start CUDA before they generate anything, so its generators are seeded at once.
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_initialized():
        for generator in torch.cuda.default_generators:
            generator.manual_seed(seed)
    else:
        # Queued until CUDA starts in this process, if ever (asking whether it could start
        # would start the driver).
        torch.cuda.manual_seed_all(seed)
    random.seed(seed)


def normalize_check(result) -> tuple[bool, str]:
    """check_implementation may return (bool, msg), a message string ('' = pass) or a bool."""
    if isinstance(result, tuple) and len(result) == 2:
        return bool(result[0]), str(result[1])
    if isinstance(result, str):
        return result == "", result
    if isinstance(result, bool):
        return result, "" if result else "check_implementation returned False"
    raise TypeError(f"check_implementation returned {type(result).__name__}")


def read_output(reply: dict, blob: bytes, device: str):
    """The runner's output, or a failure message when it is not tensors."""
    if reply.get("unsendable") and reply.get("output_problem"):
        return None, f"the output is {str(reply.get('output_problem'))[:300]}"
    if reply.get("unsendable"):
        return None, (f"the output ({str(reply.get('output_type'))[:100]}) is not a tensor or a "
                      "plain container of tensors")
    if reply.get("output_is_none") is True:
        return None, None
    try:
        return protocol.load_payload(blob, device), None
    except cudaipc.IpcUnavailable:
        raise
    except BaseException as exc:  # noqa: BLE001
        return None, f"the output could not be read as tensors: {exc}"[:2000]


class Evaluation:
    def __init__(self, job: dict, reporter: Reporter, cache: dict | None = None):
        self.job = job
        self.report = reporter
        self.cache = cache  # compile_cache.restore's account, when the judge keeps a cache
        self.device = job["device"]
        self.reference = None
        self.accepts_device = False
        self.runners: dict[str, RunnerProcess] = {}
        self.settings = timing.settings_from(job.get("timing", {}))
        self.rechecked = 0
        self.writable: list[int] | None = None  # output buffers among the inputs (output_buffers)
        # One rank on a GPU: the checker's kernels are loaded while the runner makes its first
        # call (warm_checker); multi-rank checks meet in collectives and cannot run ahead.
        self.checker_cold = self.device.startswith("cuda") and not job.get("ranks")
        # Kept outputs reach the checker as CUDA IPC handles on a GPU (no copies through the
        # host); on the first failure of IPC, and on the CPU, as bytes through the pipe.
        self.recheck_ipc = self.device.startswith("cuda") and bool(self.settings["recheck_ipc"])
        self.recheck_ipc_problem = ""
        self.other_stream_samples: dict[str, int] = {}
        # Multi-rank: this harness is one rank of several (ranks.py); None for a single rank.
        self.ranks = ranks.Ranks(job["ranks"], reporter) if job.get("ranks") else None
        if self.ranks is not None:
            # Every rank must make the same calls: a fixed warm-up, no graph batches.
            job["timing"] = {**job.get("timing", {}), "graph_below_ns": 0.0,
                             "warmup_calls": int(job.get("timing", {}).get("warmup_calls", 3))}
            self.settings = timing.settings_from(job["timing"])
        self.sealed_why_not = self.sealed_unavailable()

    def sealed_unavailable(self) -> str | None:
        """Why this run's timed calls cannot be sealed (docs/sealed-timing.md); None if they
        can be tried."""
        if not self.device.startswith("cuda"):
            return "no GPU"
        if self.job["mode"] not in ("benchmark", "leaderboard"):
            return f"mode {self.job['mode']}"
        if not self.settings["sealed"]:
            return "sealed timing is off for this run"
        if self.ranks is not None:
            return "a multi-rank run"
        if sealed.shim_path() is None:
            return "the recording shim is not preloaded"
        return None

    # -- the problem --------------------------------------------------------------------------

    def generate(self, args: dict):
        """The problem's generate_input; used here and, after the fork, in the runners."""
        if self.reference is None:
            self.import_reference()
        kwargs = dict(args)
        if self.accepts_device:
            kwargs["device"] = self.device
        if self.ranks is not None:
            kwargs["rank"] = self.ranks.rank  # reference-kernels: generate_input(**args, rank=rank)
        seed_global_generators(args)
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

    def output_buffers(self, args: dict) -> list[int]:
        """The input tensors the reference writes, found once on the first case's inputs: a
        submission may write them too (upstream allows it), every other input must stay as
        given. When the reference fails here (it fails the check too, which says why; or the
        device is out of memory), every input is left unchecked for this call rather than an
        honest write to an output buffer refused, and the next case tries again."""
        if self.writable is None:
            data = self.generate(args)
            try:
                self.writable = guard.output_buffers(data, self.reference.ref_kernel)
            except Exception:  # noqa: BLE001
                return list(range(len(guard.input_tensors(data))))
            finally:
                del data
                free_device_cache()  # the submission's call comes next, in another process
        return self.writable

    def check(self, args: dict, output) -> tuple[bool, str]:
        if self.ranks is not None:
            # Every rank checks together: references may check with collectives. A rank that
            # failed before its check says so at this same step (ranks.py), so none waits.
            self.ranks.exchange(True)
        # Ranks check together (collectives): one rank cannot try again alone.
        for wait in CHECKER_OOM_WAITS if self.ranks is None else (0.0,):
            data = self.generate(args)
            try:
                return normalize_check(self.reference.check_implementation(data, output))
            except BaseException as exc:  # noqa: BLE001 - a checker crash on odd output is a mismatch
                if not is_device_oom(exc):
                    return False, f"output rejected by the checker: {type(exc).__name__}: {exc}"
                # Several evaluations can share one GPU: its memory, not the output, ran out.
                # Ours is freed and the others are given time to finish, then the check is
                # made again; a check that never fits is the judge's failure, not the
                # submission's (internal_error, retried).
                del data
                free_device_cache()
                time.sleep(wait)
        raise CheckerOutOfMemory(f"the checker ran out of device memory at every try "
                                 f"({device_memory_note()})")

    # -- the runners --------------------------------------------------------------------------

    def fork_runners(self) -> None:
        # Non-dumpable: the runners (same uid) then cannot open /proc/<us>/fd/<result fd>.
        set_non_dumpable()
        # Before any CUDA call here: a CUDA context does not survive fork.
        dirs = self.job.get("submission_dirs") or [self.job["task_dir"]]
        language = str(self.job.get("kernel_language", "any"))
        group = self.ranks.runner_config if self.ranks is not None else lambda _: None
        # Mode `reference` (run_reference) holds no submission: the reference's runner alone.
        alone = self.job["mode"] == "reference"
        for name, task_dir in zip(("a", "b"), [] if alone else dirs):
            self.runners[name] = RunnerProcess(name, self.device, self.generate, task_dir,
                                               language, group(name))
        # From here on (this process and the reference's runner), Triton compiles the
        # reference's kernels itself instead of taking them from its cache directory, which the
        # submission's runners can write: a binary planted there under the key of a reference
        # kernel would run as the reference.
        os.environ["TRITON_ALWAYS_COMPILE"] = "1"
        if alone:
            self.runners["reference"] = RunnerProcess("reference", self.device, self.generate,
                                                      self.job["task_dir"], group=group("reference"))
        elif self.sealed_why_not is None:
            # Sealed timing's runner: replays of the submission's recorded launches, timed here
            # where no submission code runs (sealed.py).
            self.runners[SEALED] = RunnerProcess(SEALED, self.device, self.generate,
                                                 self.job["task_dir"])
        # After the forks: a runner forked while the watchdog thread ran would hang on its lock.
        timing.trace_when_profiling()

    def post_loads(self) -> None:
        """The runners start importing while this process imports the reference: the two
        interpreters' start-up (torch, triton, the submission) overlaps instead of adding up."""
        self.load_failures: dict[str, RunnerGone] = {}
        for name, runner in self.runners.items():
            try:
                runner.post({"cmd": "load", "entry": name if name in ("reference", SEALED)
                             else "submission"})
            except RunnerGone as gone:
                self.load_failures[name] = gone

    def load_runners(self) -> bool:
        self.report.emit("stage", stage="load_submission")
        for name, runner in list(self.runners.items()):
            try:
                if name in self.load_failures:
                    raise self.load_failures[name]
                reply, _ = runner.collect()
            except RunnerGone as gone:
                if name == SEALED:
                    self.drop_sealed_runner(f"the sealed runner {gone.status} while starting")
                    continue
                self.report.emit("error", stage="load_submission", kind="exception",
                                 submission=name, error=gone.error(" while importing"))
                return False
            if not reply.get("ok") and name == SEALED:
                error = sanitize_error(reply.get("error"))
                self.drop_sealed_runner(f"the sealed runner did not start ({error['type']}: "
                                        f"{error['message']})"[:300])
                continue
            if not reply.get("ok"):
                kind = "compile" if reply.get("kind") == "compile" else "exception"
                self.report.emit("error", stage="load_submission", kind=kind, submission=name,
                                 error=sanitize_error(reply.get("error")))
                return False
        return True

    def drop_sealed_runner(self, why: str) -> None:
        """Sealing is not a requirement of a run: without its runner every case is timed in
        the submission's runner, and says why."""
        self.sealed_why_not = why
        self.runners.pop(SEALED).stop()

    # -- correctness --------------------------------------------------------------------------

    def warm_checker(self, args: dict) -> None:
        """The first check in a fresh CUDA context loads the kernels of the reference and the
        comparison (~0.1 s on an H100, docs/perf.md): done once, on the reference's own output
        for `args`, while the runner makes its first call. Only a warm-up: whatever it finds
        is left to the real check."""
        self.checker_cold = False
        try:
            expected = self.reference.ref_kernel(self.generate(args))
            self.reference.check_implementation(self.generate(args), expected)
        except Exception:  # noqa: BLE001 - the check itself reports what is wrong
            pass
        finally:
            expected = None
            free_device_cache()

    def ask_output(self, runner: str, command: dict,
                   meanwhile=None) -> tuple[dict, object, str | None]:
        """Sends a command answered with outputs (run, outputs) and reads them: on a GPU as CUDA
        IPC handles, so a large output is not copied through the host; once a handle does not
        open here (not the submission's doing as far as can be told), the command is sent again
        and this and every later answer come as bytes. `meanwhile` runs once while the runner
        works. Returns the reply, the output and why it is not one (None when it is)."""
        while True:
            header = {**command, "ipc": self.recheck_ipc}
            if meanwhile is None:
                reply, blob = self.runners[runner].ask(header)
            else:
                self.runners[runner].post(header)
                meanwhile()
                meanwhile = None
                reply, blob = self.runners[runner].collect()
            if not reply.get("ok"):
                return reply, None, None
            try:
                return (reply, *read_output(reply, blob, self.device))
            except cudaipc.IpcUnavailable as exc:
                self.recheck_ipc = False
                self.recheck_ipc_problem = str(exc)[:300]

    def check_case(self, args: dict, runner: str = "a") -> dict:
        """Runs a submission once on `args` and checks its output here. Returns event fields."""
        begin = time.monotonic()
        # Should IPC fail, the call is made again (same inputs, same answer), its output as bytes.
        reply, output, problem = self.ask_output(
            runner, {"cmd": "run", "args": args, "writable": self.output_buffers(args)},
            (lambda: self.warm_checker(args)) if self.checker_cold else None)
        if not reply.get("ok"):
            return {"status": "error", "error": sanitize_error(reply.get("error"))}
        fields = {"elapsed_ns": as_number(reply.get("elapsed_ns"))}
        if problem is None and reply.get("violation"):
            problem = str(reply["violation"])[:1000]  # the runner's rules: inputs, kernel language
        received = time.monotonic()
        if problem is not None:
            return {**fields, "status": "fail", "message": problem}
        passed, message = self.check(args, output)
        # The runner and this checker are two processes with two allocators: what the check
        # cached goes back to the GPU before the submission's next call.
        del output
        free_device_cache()
        fields["seconds"] = {"run": round(received - begin, 4),
                             "check": round(time.monotonic() - received, 4)}
        return {**fields, "status": "pass" if passed else "fail", "message": message[:4000]}

    def run_tests(self, cases: list[dict], phase: str, runner: str = "a") -> bool:
        self.report.emit("stage", stage="tests", phase=phase)
        for index, args in enumerate(cases):
            fields = self.check_case(args, runner)
            self.report.emit("test", index=index, phase=phase, **fields)
            if not self.agree(fields["status"] == "pass"):
                return False
        return True

    def agree(self, passed: bool) -> bool:
        """Multi-rank: every rank's step result, so all stop once one failed (ranks.py)."""
        return self.ranks.agree(passed) if self.ranks is not None else passed

    def recheck(self, runner: str, args: dict, count: int) -> dict | None:
        """Checks outputs of timed calls picked here at random after timing ended (the runner
        cannot know which): `count` of them, or every kept one when count is 0. Returns failure
        fields, or None when all match."""
        reply, _ = self.runners[runner].ask({"cmd": "kept"})
        kept = [k for k in reply.get("kept", []) if isinstance(k, int)][:1000000]
        if not kept:
            return {"status": "fail", "message": "no output of a timed call was kept to re-check"}
        picks = self.recheck_picks(kept, count)
        if not picks:
            return {"status": "fail", "message": "no timed call's output was kept on every rank"}
        self.rechecked = len(picks)
        for start in range(0, len(picks), RECHECK_BATCH):
            batch = picks[start:start + RECHECK_BATCH]
            reply, outputs, problem = self.ask_output(runner, {"cmd": "outputs", "indices": batch})
            if not reply.get("ok"):
                return {"status": "error", "error": sanitize_error(reply.get("error"))}
            if problem is not None:
                return {"status": "fail", "message": problem}
            if not isinstance(outputs, list) or len(outputs) != len(batch):
                return {"status": "fail", "message": "the runner sent the wrong number of outputs"}
            for iteration, output in zip(batch, outputs):
                passed, message = self.check(timing.iteration_args(args, iteration), output)
                if not passed:
                    return {"status": "fail", "message":
                            f"timed call {iteration} produced a wrong output: {message}"[:4000]}
        return None

    def recheck_picks(self, kept: list[int], count: int) -> list[int]:
        """Which kept outputs to re-check; multi-rank: the same calls on every rank, from those
        every rank kept (their checks run together)."""
        if self.ranks is not None:
            every = self.ranks.exchange(True, kept)
            kept = sorted(set(every[0]).intersection(*every[1:]))
        picks = sorted(random.SystemRandom().sample(kept, count if 0 < count < len(kept) else len(kept)))
        return self.ranks.exchange(True, picks)[0] if self.ranks is not None else picks

    # -- timing -------------------------------------------------------------------------------

    def prepare(self, runner: str, args: dict) -> dict:
        reply, _ = self.runners[runner].ask({"cmd": "prepare", "args": args,
                                             "settings": self.job.get("timing", {})})
        return reply

    def take_sample(self, runner: str, iteration: int) -> tuple[float, float | None] | dict:
        reply, _ = self.runners[runner].ask({"cmd": "sample", "iteration": iteration})
        if not reply.get("ok"):
            return {"status": "error", "error": sanitize_error(reply.get("error"))}
        if reply.get("violation"):
            return {"status": "fail", "message": str(reply["violation"])[:1000]}
        ns = as_number(reply.get("ns"))
        if not (ns > 0 and math.isfinite(ns)):
            return {"status": "error", "error": {"type": "BadTiming",
                                                 "message": f"a sample of {ns} ns", "traceback": ""}}
        clock = reply.get("sm_clock_mhz")
        self.other_stream_samples[runner] = int(as_number(reply.get("other_stream_samples", 0)))
        return ns, as_number(clock) if clock is not None else None

    def time_rounds(self, names: list[str], args: dict) -> dict:
        """Samples every named runner once per round, in a shuffled order each round, until the
        stopping rule is met for the one series (or for the ratio of the two, kj compare)."""
        infos = {}
        prepared = time.monotonic()
        for name in names:
            info = self.prepare(name, args)
            if not info.get("ok"):
                self.agree(False)
                return {"failed": name, "status": "error", "error": sanitize_error(info.get("error"))}
            if info.get("violation"):
                self.agree(False)
                return {"failed": name, "status": "fail", "message": str(info["violation"])[:1000]}
            self.agree(True)
            infos[name] = info
        samples = {name: [] for name in names}
        slowest = {name: [] for name in names}
        clocks = {name: [] for name in names}
        order = list(names)
        shuffle = random.Random(0x6B6A)
        begin = time.monotonic()
        prepare_s = begin - prepared
        reason = None
        iteration = 0
        while reason is None:
            shuffle.shuffle(order)
            for name in order:
                if self.ranks is not None:
                    self.ranks.exchange(True)  # the barrier before each sample
                sample = self.take_sample(name, iteration)
                if isinstance(sample, dict):
                    self.agree(False)
                    return {"failed": name, **sample}
                samples[name].append(sample[0])
                clocks[name].append(sample[1])
            iteration += 1
            elapsed = time.monotonic() - begin
            if self.ranks is not None:
                # The sample is the slowest rank's time: every rank decides on that series, so
                # all stop together. Each reports its own; the judge takes the maximum again.
                latest = self.ranks.exchange(True, [elapsed, {n: samples[n][-1] for n in names}])
                for name in names:
                    slowest[name].append(max(float(v[1][name]) for v in latest))
                elapsed = max(float(v[0]) for v in latest)
            series_of = slowest if self.ranks is not None else samples
            if len(names) == 2:  # kj compare: the paired ratios decide
                series = [x / y for x, y in zip(series_of[names[0]], series_of[names[1]])]
                reason = timing.stop_reason(series, elapsed, self.settings)
                # A paired comparison needs enough pairs for its interval, caps or not.
                if len(series) < MIN_PAIRS and elapsed < 10 * self.settings["max_seconds"]:
                    reason = None
            else:  # one series: the submission's, or the reference's in its own run
                reason = timing.stop_reason(series_of[names[0]], elapsed, self.settings)
        return {"samples": samples, "clocks": clocks, "infos": infos, "stop_reason": reason,
                "prepare_s": prepare_s}

    def seal(self, case: dict, secret: int | None) -> tuple[str, str, float]:
        """Sealed timing's preparation for one case: the submission's runner records a call on
        each of two fresh inputs, the recordings are compared here, and the sealed runner binds
        the replay, whose output on a third input is checked here. Returns the runner to time
        ("sealed", or "a": in process), why not sealed ("" when sealed), and the seconds spent.
        Whatever goes wrong here times the case in process, as before; it never fails it."""
        begin = time.monotonic()
        if self.sealed_why_not is not None:
            return "a", self.sealed_why_not, 0.0
        draw = random.SystemRandom()
        recorded = [timing.timed_args(case, draw.getrandbits(48), secret) for _ in range(2)]
        reply, _ = self.runners["a"].ask({"cmd": "record", "args": recorded})
        self.runners["a"].ask({"cmd": "release"})  # what the recorded calls left cached
        if not reply.get("ok"):
            error = sanitize_error(reply.get("error"))
            why = f"recording failed ({error['type']}: {error['message']})"
            return "a", why[:300], time.monotonic() - begin
        the_plan, reasons = sealed.examine(reply.get("recordings") or [])
        if the_plan is None:
            more = f" (+{len(reasons) - 2} more)" if len(reasons) > 2 else ""
            return "a", ("; ".join(reasons[:2]) + more)[:300], time.monotonic() - begin
        reply, _ = self.runners[SEALED].ask({"cmd": "bind", "plan": the_plan,
                                             "images": str(reply.get("images", ""))})
        if not reply.get("ok"):
            error = sanitize_error(reply.get("error"))
            why = f"the replay did not load ({error['type']}: {error['message']})"
            return "a", why[:300], time.monotonic() - begin
        checked = timing.timed_args(case, draw.getrandbits(48), secret)
        fields = self.check_case(checked, SEALED)
        if fields["status"] != "pass":
            detail = fields.get("message") or str((fields.get("error") or {}).get("message", ""))
            why = f"the replayed call failed the check ({detail.splitlines()[0] if detail else ''})"
            return "a", why[:300], time.monotonic() - begin
        return SEALED, "", time.monotonic() - begin

    def timed_benchmark(self, index: int, case: dict, phase: str, secret: int | None) -> bool:
        # Timed calls use seeds no file states (benchmark mode too): answers precomputed for the
        # task's public seeds match none of them. Drawn here, after the runner exists, so no
        # memory of the submission ever held it before its timing.
        salt = random.SystemRandom().getrandbits(48)
        if self.ranks is not None:
            salt = self.ranks.exchange(True, salt)[0]  # rank 0's: the ranks' inputs belong together
        args = timing.timed_args(case, salt, secret)
        seal_s = 0.0
        try:
            runner, why, seal_s = self.seal(case, secret)
            # The reference is timed in a run of its own (run_reference).
            outcome = self.time_and_recheck(runner, args)
            if runner == SEALED:
                # Its inputs, graph and kept outputs go: the next case's recording (or this
                # one's fallback) runs in the submission's runner, on the same GPU.
                self.runners[SEALED].ask({"cmd": "release"})
            if runner == SEALED and outcome[0] != "pass":
                error = outcome[1].get("error") or {}
                detail = outcome[1].get("message") or f"{error.get('type')}: {error.get('message')}"
                why = f"the replay failed while timed ({detail.splitlines()[0][:200]})"
        except RunnerGone as gone:
            if gone.runner != SEALED:
                raise
            why = self.sealed_why_not = f"the sealed runner {gone.status}"
            runner, outcome = "a", ("failed", {}, {})
        if runner == SEALED and outcome[0] != "pass":
            runner, outcome = "a", self.time_and_recheck("a", args)
        if outcome[0] == "failed":
            self.report.emit("benchmark", index=index, phase=phase, **outcome[1])
            return False
        if outcome[0] == "recheck":
            self.report.emit("benchmark", index=index, phase=phase, **outcome[1])
            self.agree(False)
            return False
        if runner != SEALED and self.settings["require_sealed"] and self.device.startswith("cuda"):
            self.report.emit("benchmark", index=index, phase=phase, status="fail", message=(
                "this problem ranks only sealed timings (ranked_timing: sealed in its task.yml), "
                f"and this case could not be sealed: {why}")[:4000])
            self.agree(False)
            return False
        self.agree(True)
        result, seconds = outcome[1], outcome[2]
        if seal_s:
            seconds["seal"] = round(seal_s, 4)
        info = result["infos"][runner]
        samples = result["samples"][runner]
        fields = {
            "status": "pass", "samples_ns": samples, "sm_clock_mhz": result["clocks"][runner],
            "clock": str(info.get("clock"))[:32], "method": str(info.get("method"))[:32],
            "batch": int(as_number(info.get("batch", 1))), "stop_reason": result["stop_reason"],
            "at_launch_floor": sorted(samples)[len(samples) // 2] < self.settings["launch_floor_ns"],
            "rechecked": self.rechecked,
            "recheck_path": "cuda_ipc" if self.recheck_ipc else "pipe",
            **({"recheck_ipc_problem": self.recheck_ipc_problem} if self.recheck_ipc_problem else {}),
            "other_stream_samples": self.other_stream_samples.get(runner, 0),
            "seconds": seconds,
            # Where the samples were taken: a replay in the sealed runner, or the submission's
            # own process; on a GPU, why not sealed.
            "timing": "sealed" if runner == SEALED else "in_process",
            **({"timing_note": why} if runner != SEALED and self.device.startswith("cuda") else {}),
        }
        # The salt, now that the timing is over, for the judge only: the reference, timed alone
        # after this run, is timed on these same inputs (run_reference).
        fields["salt"] = salt
        self.report.emit("benchmark", index=index, phase=phase, **fields)
        return True

    def time_and_recheck(self, runner: str, args: dict) -> tuple[str, dict, dict]:
        """One runner timed on `args` (time_rounds), then a sample of its kept outputs
        re-checked. Returns ("pass", time_rounds' result, seconds), or ("failed", fields) when
        the timing failed, or ("recheck", fields) when a re-checked output was wrong."""
        begin = time.monotonic()
        result = self.time_rounds([runner], args)
        timed = time.monotonic()
        if "failed" in result:
            result.pop("failed")
            return "failed", result, {}
        failure = self.recheck(runner, args, self.settings["recheck"])
        if failure is not None:
            return "recheck", failure, {}
        # Where the case's time went: the runner's preparation (warm-up, calibration, graph
        # capture), the samples, the re-check of kept outputs.
        return "pass", result, {"timing": round(timed - begin, 4),
                                "prepare": round(result["prepare_s"], 4),
                                "recheck": round(time.monotonic() - timed, 4)}

    def run_benchmarks(self, cases: list[dict], phase: str, timed: bool = True,
                       secret: int | None = None) -> bool:
        """Each benchmark shape checked once, then timed (untimed: the leaderboard's public
        stage); the ranked run's cases are the same shapes with their seeds mixed with `secret`."""
        self.report.emit("stage", stage="benchmarks", phase=phase)
        for index, case in enumerate(cases):
            args = case if secret is None else timing.secret_args(case, secret)
            fields = self.check_case(args)
            if fields["status"] != "pass":
                self.report.emit("benchmark", index=index, phase=phase, **fields)
            if not self.agree(fields["status"] == "pass"):
                return False
            if timed and not self.timed_benchmark(index, case, phase, secret):
                return False
        return True

    def run_reference(self) -> bool:
        """Mode `reference`: the reference alone, in a sandbox of its own that the judge starts
        after the submission's run ended (docs/timing.md), so no process of the submission exists
        to slow it down. Each benchmark case is timed on the inputs the submission was timed on:
        the salt that run drew for it (`salts`, from its benchmark event) and, for a ranked run,
        the same secret (stdin's second line), through timing.timed_args. At most as many
        samples as the submission got (`samples`), as when both were sampled in the same rounds:
        the stopping rule may end it sooner, the caps of the job's timing later never.
        Multi-rank: one such job per rank (src/judge/ranks.cpp), every rank given rank 0's salts;
        only the reference's runner was forked, in the reference runners' group, and time_rounds
        keeps the ranks in lockstep and stops them together, as in the submission's run."""
        self.report.emit("stage", stage="reference")
        secret = read_secret() if self.job.get("ranked") else None
        cases, salts = self.job["benchmarks"], self.job["salts"]
        counts = self.job.get("samples") or [self.settings["max_samples"]] * len(cases)
        if len(salts) != len(cases) or not all(type(s) is int for s in salts):
            raise ValueError(f"mode reference needs one integer salt per benchmark, got {salts!r}")
        if len(counts) != len(cases) or not all(type(n) is int and n > 0 for n in counts):
            raise ValueError(f"mode reference: a sample count per benchmark, got {counts!r}")
        job_settings = self.settings
        for index, (case, salt, count) in enumerate(zip(cases, salts, counts)):
            self.settings = {**job_settings,
                             "max_samples": min(job_settings["max_samples"], count),
                             "min_samples": min(job_settings["min_samples"], count)}
            begin = time.monotonic()
            result = self.time_rounds(["reference"], timing.timed_args(case, salt, secret))
            seconds = {"timing": round(time.monotonic() - begin, 4)}
            if "failed" in result:
                result.pop("failed")
                self.report.emit("reference", index=index, seconds=seconds, **result)
                return False
            self.report.emit("reference", index=index, status="pass",
                             samples_ns=result["samples"]["reference"],
                             stop_reason=result["stop_reason"], seconds=seconds)
        return True

    def run_compare(self) -> bool:
        """Two submissions, interleaved round robin in this one sitting, per benchmark."""
        self.report.emit("stage", stage="compare")
        for runner in ("a", "b"):
            if not self.run_tests(self.job["tests"], f"tests_{runner}", runner):
                return False
        for index, args in enumerate(self.job["benchmarks"]):
            for runner in ("a", "b"):
                fields = self.check_case(args, runner)
                if fields["status"] != "pass":
                    self.report.emit("benchmark", index=index, phase=f"check_{runner}", **fields)
                    return False
            for trial in range(int(self.job.get("trials", 1))):
                result = self.time_rounds(["a", "b"], timing.secret_args(args, trial))
                if "failed" in result:
                    runner = result.pop("failed")
                    self.report.emit("benchmark", index=index, phase=f"compare_{runner}", **result)
                    return False
                self.report.emit("compare", index=index, trial=trial,
                                 samples_a_ns=result["samples"]["a"],
                                 samples_b_ns=result["samples"]["b"],
                                 stop_reason=result["stop_reason"])
        return True

    # -- modes --------------------------------------------------------------------------------

    def run(self) -> None:
        self.fork_runners()
        self.post_loads()
        try:
            if self.ranks is not None:
                self.ranks.connect()
            loaded = self.load_reference() and self.load_runners()
            if not self.agree(loaded):
                self.finish(False)
                return
        except ranks.PeerFailed as peer:
            self.peer_failed(peer)
            return
        mode = self.job["mode"]
        try:
            if mode == "benchmark":
                passed = self.run_benchmarks(self.job["benchmarks"], "public")
            elif mode == "reference":
                passed = self.run_reference()
            elif mode == "leaderboard":
                passed = self.run_leaderboard()
            elif mode == "compare":
                passed = self.run_compare()
            else:
                passed = self.run_tests(self.job["tests"], "public")
        except RunnerGone as gone:
            self.report.emit("error", stage="run", kind="exception", submission=gone.runner,
                             error=gone.error(""))
            passed = False
        except ranks.PeerFailed as peer:
            self.peer_failed(peer)
            return
        self.finish(passed)

    def peer_failed(self, peer: ranks.PeerFailed) -> None:
        """Another rank failed; this one stops with nothing wrong of its own (the judge names
        the rank that failed)."""
        self.report.emit("error", stage="run", kind="peer", ranks=peer.ranks,
                         error={"type": "PeerFailed", "message": str(peer), "traceback": ""})
        self.finish(False)

    def run_leaderboard(self) -> bool:
        """Public tests, public benchmark shapes (checked), then the ranked run: every case's
        seed mixed with the secret, fresh inputs for every timed call, timed outputs re-checked."""
        if not self.run_tests(self.job["tests"], "public"):
            return False
        if not self.run_benchmarks(self.job["benchmarks"], "public", timed=False):
            return False
        secret = read_secret()
        ranked_tests = [timing.secret_args(a, secret) for a in self.job["tests"]]
        if not self.run_tests(ranked_tests, "ranked"):
            return False
        return self.run_benchmarks(self.job["benchmarks"], "ranked", secret=secret)

    def finish(self, passed: bool) -> None:
        if self.ranks is not None and not passed:
            self.ranks.leave(False)  # before the runners stop: peers must not wait on them
        began = time.monotonic()
        for runner in self.runners.values():
            runner.stop()
        stopped = time.monotonic()
        if self.cache is not None:
            # After the runners stopped: nothing compiles any more.
            try:
                collected = compile_cache.collect(self.cache["files"])
            except Exception as exc:  # noqa: BLE001 - a cache never changes a verdict
                collected = {"files": [], "error": f"{type(exc).__name__}: {exc}"}
            seconds = {"stop_runners": round(stopped - began, 4),
                       "collect": round(time.monotonic() - stopped, 4)}
            self.report.emit("compile_cache", offered=self.cache["offered"],
                             restored=self.cache["restored"], stale=self.cache["stale"],
                             **({"restore_error": self.cache["error"]} if "error" in self.cache
                                else {}), seconds=seconds, **collected)
        self.report.emit("done", passed=passed, age_s=process_age())
        if self.ranks is not None and passed:
            self.ranks.leave(True)


# The harness's own descriptors, which no runner may hold: the result fd and the harness's end
# of every runner's pipes.
HARNESS_FDS: set[int] = set()


def close_for_runner(own: set[int]) -> None:
    """In a runner just forked: closes what the submission must not hold. Normally everything but
    stdout, stderr and the runner's own pipe ends. Under Nsight Compute (profile mode) exactly the
    harness's own descriptors instead: the profiler's injected library opens descriptors of its
    own while the process runs (at CUDA's start, at a fork), and a runner that had closed them
    hung at its first child process (Triton naming its build with `platform.architecture()`), so
    no profile of a Triton kernel ever finished on an H200. A profile is never ranked; the result
    fd, stdin and every pipe of the harness stay closed to it."""
    if timing.PROFILING:
        for fd in HARNESS_FDS - own:
            try:
                os.close(fd)
            except OSError:
                pass  # closed already
    else:
        close_all_but({1, 2} | own)


def close_all_but(keep: set[int]) -> None:
    limit = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536
    low = 0
    for fd in sorted(keep) + [limit]:
        os.closerange(low, fd)
        low = fd + 1


def plain_fork_for_subprocesses() -> None:
    """In profile mode: child processes (Triton's ldconfig and ptxas, a submission's own) are
    started with fork + exec, not vfork or posix_spawn. Added when such children were seen stuck
    before their exec under Nsight Compute; the cause was the profiler's descriptors, closed by
    the runner (close_for_runner), and this stays because the profiles on an H200 were verified
    with it."""
    if not timing.PROFILING:
        return
    import subprocess

    subprocess._USE_VFORK = False  # noqa: SLF001 - CPython's own switches (3.8+, 3.11+)
    subprocess._USE_POSIX_SPAWN = False  # noqa: SLF001


plain_fork_for_subprocesses()


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


def process_age() -> float | None:
    """Seconds since this process was created (procfs start time against the boot clock), so
    the judge can tell interpreter start-up and teardown from the run itself."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return round(time.clock_gettime(time.CLOCK_BOOTTIME) - started, 3)
    except (OSError, ValueError, IndexError):
        return None


def read_line(fd: int) -> bytes:
    """One line of fd, byte by byte: nothing past it may sit in a buffer the runners inherit."""
    out = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            return bytes(out)
        out += byte


def read_secret() -> int:
    """The ranked run's secret: line 2 of stdin, read only after the runners were forked."""
    line = read_line(0).strip()
    if not line:
        raise ValueError("leaderboard mode needs the secret seed on stdin's second line")
    return int(line)


def preload() -> tuple[object, str | None]:
    """Imports what every evaluation needs before the job is read: a harness started ahead of
    its job (a warm start) has this done while the worker waits. The runners inherit it all."""
    import torch
    import numpy  # noqa: F401

    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    # The first operator call initialises the CPU dispatch tables; do it before the clock runs.
    torch.ones(8).add_(1).sum().item()
    # Setting the deterministic-algorithms flag (as references' numerics contexts do) imports
    # torch's compiler configuration, ~2 s; set it to what it is, so that happens here.
    torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled(),
                                       warn_only=torch.is_deterministic_algorithms_warn_only_enabled())
    return torch, triton_version


# Hopper, the GPUs kj is run on: the architecture whose ptxas version is asked ahead. Another
# GPU's first Triton compile asks for its own (~25 ms).
WARM_PTXAS_ARCH = 90


def warm_triton_keys() -> dict:
    """What Triton computes, without CUDA, before its first cache lookup in a process: the hash of
    its own sources and of libtriton.so (`triton_key`, a 400 MB file read, 0.3-0.7 s) and ptxas's
    version. Both are cached per process, so a zygote that computes them once spares every run it
    forks (and every runner those fork) the work on their first Triton kernel. Only Triton's own
    files are read: nothing of a job. Returns what was warmed (a failure leaves Triton to do it
    when a kernel needs it). Under Triton's interpreter (a CPU run) nothing is compiled, so
    nothing is warmed."""
    warmed = {}
    if os.environ.get("TRITON_INTERPRET") == "1":
        return warmed
    try:
        from triton.runtime.cache import triton_key

        triton_key()
        warmed["triton_key"] = True
    except Exception:  # noqa: BLE001 - another Triton layout: nothing is spared, nothing breaks
        warmed["triton_key"] = False
    try:
        from triton import knobs
        from triton.backends.nvidia.compiler import get_ptxas_version

        knobs.nvidia.ptxas.version  # noqa: B018 - NvidiaTool.from_path, cached by path
        get_ptxas_version(WARM_PTXAS_ARCH)
        warmed["ptxas"] = True
    except Exception:  # noqa: BLE001 - no NVIDIA backend or no ptxas: Triton reports it itself
        warmed["ptxas"] = False
    return warmed


# Modules Triton imports only at a process's first kernel launch (its argument specialisation
# looks for Gluon's types): ~0.2 s on an H100 host, most of it compiling their sources, whose
# bytecode the sandbox cannot cache. Pure Python, no CUDA.
TRITON_LAUNCH_IMPORTS = ("triton.experimental.gluon",)


def warm_triton_imports() -> list[str]:
    """Imports TRITON_LAUNCH_IMPORTS in a zygote, so every run it forks finds them loaded;
    returns those imported (one missing from this Triton is left out)."""
    imported = []
    for name in TRITON_LAUNCH_IMPORTS:
        try:
            importlib.import_module(name)
            imported.append(name)
        except Exception:  # noqa: BLE001 - another Triton layout: its first launch imports it
            pass
    return imported


def main() -> int:
    global STARTED
    try:
        torch, triton_version = preload()
        preload_error = None
    except BaseException as exc:  # noqa: BLE001 - reported once the result fd is known
        torch, triton_version, preload_error = None, None, exc
    preload_s = time.monotonic() - STARTED
    job = json.loads(read_line(0))
    # Event times count from the job's arrival (a warm start may wait long before it).
    STARTED = time.monotonic()
    if job.get("protocol") != PROTOCOL_VERSION:
        print(f"kj harness: unsupported protocol {job.get('protocol')}", file=sys.stderr)
        return 2
    if job.get("mode") == "bootstrap_probe":
        # Not an evaluation: the bootstrap's first step on a row (kj_harness.bootstrap), in a
        # run forked from the zygote, its facts on fd 3.
        if preload_error is not None:
            print(f"kj harness: the imports failed: {preload_error!r}", file=sys.stderr)
            return 1
        from . import bootstrap

        return bootstrap.probe(str(job["task_dir"]))
    HARNESS_FDS.add(int(job["result_fd"]))
    reporter = Reporter(job["result_fd"])
    try:
        if preload_error is not None:
            raise preload_error
        reporter.emit("hello", protocol=PROTOCOL_VERSION, python=sys.version.split()[0],
                      torch=torch.__version__, triton=triton_version, device=job["device"],
                      preload_s=round(preload_s, 4), age_s=process_age())
        sys.path.insert(0, job["task_dir"])
        os.makedirs(job.get("workdir", "/tmp/work"), exist_ok=True)
        os.chdir(job.get("workdir", "/tmp/work"))
        # The earlier runs' compiled kernels, in place before any submission code runs.
        cache = None
        if job.get("compile_cache"):
            try:
                cache = compile_cache.restore()
            except Exception as exc:  # noqa: BLE001 - a cache never changes a verdict
                cache = {"files": {}, "offered": 0, "restored": 0, "stale": 0,
                         "error": f"{type(exc).__name__}: {exc}"}
        Evaluation(job, reporter, cache).run()
    except BaseException as exc:  # noqa: BLE001
        reporter.emit("error", stage="harness", kind="harness", error=describe_exception(exc))
        return 1
    return 0
