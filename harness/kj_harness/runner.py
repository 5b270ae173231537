"""The submission runner: the only process that executes submission code.

It is forked from the harness after the result fd has been closed, so nothing the submission
does can reach the judge directly. It answers the harness's commands over two pipes; whatever
it says is treated as untrusted by the harness (outputs are re-checked there against inputs the
harness generated itself).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import time
import traceback

from . import guard, protocol, ranks, sealed, timing

COMPILE_ERRORS = (SyntaxError, ImportError)


def describe_exception(exc: BaseException) -> dict:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"type": type(exc).__name__, "message": str(exc)[:4000], "traceback": text[-16000:]}


def is_compile_error(exc: BaseException) -> bool:
    if isinstance(exc, COMPILE_ERRORS):
        return True
    # torch.utils.cpp_extension.load_inline raises RuntimeError("Error building extension ...")
    return isinstance(exc, RuntimeError) and "Error building extension" in str(exc)


class Runner:
    def __init__(self, cmd_fd: int, reply_fd: int, device: str, call_inputs,
                 kernel_language: str = "any", group: dict | None = None):
        self.group = group  # multi-rank: the process group this runner joins before loading
        self.cmd_fd = cmd_fd
        self.reply_fd = reply_fd
        self.device = device
        self.call_inputs = call_inputs  # (args) -> data, the problem's generate_input
        self.custom_kernel = None
        self.session: timing.CaseSession | None = None
        self.kernel_language = kernel_language
        self.guard: guard.TimerGuard | None = None  # set when a submission (not the reference) loads
        self.language: guard.KernelLanguage | None = None
        self.ipc_hold: list = []  # tensors whose IPC handles the harness may still be copying
        self.recorded: list = []  # inputs and outputs of the calls being recorded
        self.modules: dict = {}  # sealed runner: code images loaded, by SHA-256

    def check_guard(self, when: str) -> None:
        if self.guard is not None:
            self.guard.check(when)

    def reply_tampered(self, exc: guard.Tampered) -> None:
        protocol.send(self.reply_fd, {"ok": False, "kind": "security", "error": {
            "type": guard.SECURITY_VIOLATION, "message": str(exc), "traceback": ""}})

    def language_mark(self):
        return self.language.mark() if self.language is not None else None

    def language_violation(self, mark, calls: int = 1) -> str | None:
        return self.language.violation(mark, calls) if self.language is not None else None

    def reply_error(self, exc: BaseException) -> None:
        protocol.send(self.reply_fd, {"ok": False, "error": describe_exception(exc)})

    def synchronize(self) -> None:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    def load(self, entry: str) -> None:
        if self.group is not None:
            try:
                ranks.init_runner_group(self.group, self.device)
            except BaseException as exc:  # noqa: BLE001
                self.reply_error(exc)
                return
        if self.device.startswith("cuda"):
            try:
                import torch

                # The CUDA context now, while the harness is still importing the reference.
                torch.cuda.set_device(torch.device(self.device))
                torch.empty(1, device=self.device)
            except BaseException as exc:  # noqa: BLE001
                self.reply_error(exc)
                return
        if entry == "sealed":  # replays of recorded calls (`bind`); no submission code here
            protocol.send(self.reply_fd, {"ok": True})
            return
        if entry == "reference":  # the reference timed like a submission, for the speedup
            self.custom_kernel = importlib.import_module("reference").ref_kernel
            protocol.send(self.reply_fd, {"ok": True})
            return
        try:
            if self.kernel_language in ("triton", "cuda"):
                self.language = guard.KernelLanguage(self.kernel_language)
            # Taken before any submission code runs: what the judge's clock and inputs rely on.
            self.guard = guard.TimerGuard()
            module = importlib.import_module("submission")
            kernel = getattr(module, "custom_kernel", None)
            if not callable(kernel):
                protocol.send(self.reply_fd, {"ok": False, "kind": "compile", "error": {
                    "type": "MissingEntryPoint",
                    "message": "the submission does not define a callable custom_kernel(data)",
                    "traceback": ""}})
                return
            self.custom_kernel = kernel
            self.guard.check("while the submission was imported")
        except guard.Tampered as exc:
            self.reply_tampered(exc)
            return
        except BaseException as exc:  # noqa: BLE001 - every failure of user code is reported
            kind = "compile" if is_compile_error(exc) else "exception"
            protocol.send(self.reply_fd, {"ok": False, "kind": kind, "error": describe_exception(exc)})
            return
        protocol.send(self.reply_fd, {"ok": True})

    def run_once(self, args: dict, ipc: bool = False, writable=()) -> None:
        try:
            data = self.call_inputs(args)
            self.check_guard("before a call")
            inputs = guard.InputCopy(data, writable) if self.guard is not None else None
            mark = self.language_mark()
            self.synchronize()
            start = time.perf_counter_ns()
            output = self.custom_kernel(data)
            self.synchronize()
            elapsed = time.perf_counter_ns() - start
            self.check_guard("during a call")
        except guard.Tampered as exc:
            self.reply_tampered(exc)
            return
        except BaseException as exc:  # noqa: BLE001
            self.reply_error(exc)
            return
        header = {"elapsed_ns": elapsed, "output_is_none": output is None}
        if self.guard is not None:
            problem = guard.output_problem(output)
            if problem is not None:
                protocol.send(self.reply_fd, {"ok": True, **header, "unsendable": True,
                                              "output_problem": problem})
                return
            violation = self.language_violation(mark)
            modified = inputs.modified(output)
            if modified is not None:
                violation = (f"the submission modified its inputs ({modified}); inputs must stay "
                             "as they were given")
            if violation is not None:
                header["violation"] = violation
        del data, inputs
        self.send_output(header, output, ipc)
        del output
        self.release_cached_memory()

    def release_cached_memory(self) -> None:
        """After a checked call: the device memory this process's allocator keeps cached goes
        back to the GPU, so that the checker (another process, unlike eval.py's one) finds what
        the call used. Only the staged output stays. Never between timed calls."""
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    def send_output(self, header: dict, output, ipc: bool = False) -> None:
        """The output as bytes through the pipe; on a GPU when asked, its CUDA tensors as IPC
        handles, so a large output is not copied through the host to be checked. The buffers
        behind the handles are copies fenced before they leave (protocol.stage_for_ipc), held
        here until the harness's next command: it sends one only after its own copies are
        done and the handles closed."""
        if ipc and self.device.startswith("cuda"):
            try:
                protocol.send(self.reply_fd, {"ok": True, **header}, output,
                              ipc_hold=self.ipc_hold)
                return
            except BaseException:  # noqa: BLE001 - cudaipc.IpcUnavailable or an odd output
                self.ipc_hold = []  # nothing was written: the bytes path sends it or says why not
        try:
            protocol.send(self.reply_fd, {"ok": True, **header}, output)
        except BaseException as exc:  # noqa: BLE001 - e.g. an object torch.save cannot write
            protocol.send(self.reply_fd, {"ok": True, **header, "unsendable": True,
                                          "output_type": type(output).__name__,
                                          "message": str(exc)[:2000]})

    def prepare(self, args: dict, settings: dict) -> None:
        try:
            self.check_guard("before timing")
            mark = self.language_mark()
            self.session = timing.CaseSession(self.custom_kernel, self.call_inputs, self.device,
                                              timing.settings_from(settings), args)
            info = self.session.prepare()
            self.check_guard("while warming up")
        except guard.Tampered as exc:
            self.reply_tampered(exc)
            return
        except BaseException as exc:  # noqa: BLE001
            self.reply_error(exc)
            return
        violation = self.language_violation(mark)
        if violation is not None:
            info["violation"] = violation
        protocol.send(self.reply_fd, {"ok": True, **info})

    def sample(self, iteration: int) -> None:
        try:
            self.check_guard("before a timed call")
            mark = self.language_mark()
            result = self.session.sample(iteration)
            self.check_guard("during a timed call")
        except guard.Tampered as exc:
            self.reply_tampered(exc)
            return
        except BaseException as exc:  # noqa: BLE001
            self.reply_error(exc)
            return
        # A graph replay launches nothing from Python; its calls were counted when captured.
        violation = self.language_violation(mark, 1 if self.session.method == "per_call" else 0)
        if violation is not None:
            result["violation"] = violation
        protocol.send(self.reply_fd, {"ok": True, **result})

    def send_outputs(self, indices: list, ipc: bool = False) -> None:
        """Outputs of earlier timed calls, for the harness to re-check: on a GPU as CUDA IPC
        handles when asked (held here until the next command), else as bytes."""
        self.ipc_hold = []
        kept = self.session.kept_outputs if self.session is not None else {}
        missing = [i for i in indices if i not in kept]
        if missing:
            protocol.send(self.reply_fd, {"ok": False, "error": {
                "type": "MissingOutputs", "message": f"outputs of calls {missing[:5]} were not kept",
                "traceback": ""}})
            return
        outputs = [kept[i] for i in indices]
        problem = guard.find_not_an_output(outputs)
        if problem is not None:
            protocol.send(self.reply_fd, {"ok": True, "count": len(indices), "unsendable": True,
                                          "output_problem": problem})
            return
        if ipc and self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        self.send_output({"count": len(indices)}, outputs, ipc)

    def record(self, args_list: list) -> None:
        """Sealed timing: one call on each of `args_list`'s inputs with the preloaded shim
        recording what reaches the GPU (sealed.py). The harness compares the recordings and
        has the sealed runner replay them; nothing said here is trusted for the ranking."""
        import tempfile

        import torch

        self.recorded = []
        self.session = None  # a case timed here before: its inputs and outputs
        try:
            recorder = sealed.Recorder(sealed.shim_path() or "")
            directory = tempfile.mkdtemp(prefix="kj-record-")
            images = os.path.join(directory, "images")
            self.check_guard("before a recorded call")
            self.custom_kernel(self.call_inputs(args_list[0]))  # compiled, tuned: nothing new
            recordings = []
            for k, args in enumerate(args_list):
                data = self.call_inputs(args)
                torch.cuda.synchronize()
                path = os.path.join(directory, f"{k}.jsonl")
                recorder.begin(path, images)
                try:
                    output = self.custom_kernel(data)
                    torch.cuda.synchronize()
                finally:
                    recorder.end()
                self.recorded.append((data, output))  # alive: the next call's buffers lie elsewhere
                recordings.append({"jsonl": sealed.read_text(path),
                                   "structure": sealed.structure(torch, output),
                                   "tensors": {"input": sealed.describe(data),
                                               "output": sealed.describe(output)}})
            self.check_guard("during a recorded call")
        except guard.Tampered as exc:
            self.reply_tampered(exc)
            return
        except BaseException as exc:  # noqa: BLE001
            self.reply_error(exc)
            return
        protocol.send(self.reply_fd, {"ok": True, "recordings": recordings, "images": images})

    def bind(self, the_plan: dict, image_dir: str) -> None:
        """The sealed runner: `custom_kernel` becomes the replay of `the_plan`."""
        try:
            import torch

            self.custom_kernel = None
            self.session = None
            torch.cuda.synchronize()
            self.custom_kernel = sealed.ReplayKernel(torch, sealed.Driver(), the_plan, image_dir,
                                                     self.modules)
        except BaseException as exc:  # noqa: BLE001
            self.reply_error(exc)
            return
        protocol.send(self.reply_fd, {"ok": True})

    def release(self) -> None:
        """Drops the timing session (its inputs, graph and kept outputs) and gives the memory
        this process's allocator caches back to the GPU: sealed timing has two runners on one
        GPU, and what one keeps cached the other cannot allocate."""
        self.session = None
        self.recorded = []
        gc.collect()
        self.release_cached_memory()
        protocol.send(self.reply_fd, {"ok": True})

    def kept(self) -> None:
        protocol.send(self.reply_fd, {"ok": True, "kept": sorted(self.session.kept_outputs)
                                      if self.session is not None else []})

    def serve(self) -> None:
        while True:
            command, _ = protocol.receive(self.cmd_fd, max_payload=0)
            self.ipc_hold = []  # the harness asks again only after it copied what it was sent
            name = command.get("cmd")
            if name == "load":
                self.load(command.get("entry", "submission"))
            elif name == "run":
                writable = command.get("writable", [])
                self.run_once(command["args"], command.get("ipc") is True,
                              [i for i in writable if type(i) is int] if isinstance(writable, list) else [])
            elif name == "prepare":
                self.prepare(command["args"], command["settings"])
            elif name == "sample":
                self.sample(int(command["iteration"]))
            elif name == "kept":
                self.kept()
            elif name == "release":
                self.release()
            elif name == "record":
                self.record(command["args"])
            elif name == "bind":
                self.bind(command["plan"], str(command["images"]))
            elif name == "outputs":
                self.send_outputs(command["indices"], command.get("ipc") is True)
            else:
                return


def child_main(cmd_fd: int, reply_fd: int, device: str, call_inputs, task_dir: str,
               kernel_language: str = "any", group: dict | None = None) -> None:
    """Entry point in the forked child; never returns."""
    code = 0
    try:
        timing.trace_when_profiling()
        sys.path.insert(0, task_dir)  # this runner's own submission.py comes first
        Runner(cmd_fd, reply_fd, device, call_inputs, kernel_language, group).serve()
    except protocol.ChannelClosed:
        pass
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
