"""The submission runner: the only process that executes submission code.

It is forked from the harness after the result fd has been closed, so nothing the submission
does can reach the judge directly. It answers the harness's commands over two pipes; whatever
it says is treated as untrusted by the harness (outputs are re-checked there against inputs the
harness generated itself).
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import traceback

from . import protocol, timing

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
    def __init__(self, cmd_fd: int, reply_fd: int, device: str, call_inputs):
        self.cmd_fd = cmd_fd
        self.reply_fd = reply_fd
        self.device = device
        self.call_inputs = call_inputs  # (args) -> data, the problem's generate_input
        self.custom_kernel = None
        self.timer: timing.CaseTimer | None = None

    def synchronize(self) -> None:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    def load_submission(self) -> None:
        try:
            module = importlib.import_module("submission")
            kernel = getattr(module, "custom_kernel", None)
            if not callable(kernel):
                protocol.send(self.reply_fd, {"ok": False, "kind": "compile", "error": {
                    "type": "MissingEntryPoint",
                    "message": "the submission does not define a callable custom_kernel(data)",
                    "traceback": ""}})
                return
            self.custom_kernel = kernel
        except BaseException as exc:  # noqa: BLE001 - every failure of user code is reported
            kind = "compile" if is_compile_error(exc) else "exception"
            protocol.send(self.reply_fd, {"ok": False, "kind": kind, "error": describe_exception(exc)})
            return
        protocol.send(self.reply_fd, {"ok": True})

    def run_once(self, args: dict) -> None:
        try:
            data = self.call_inputs(args)
            self.synchronize()
            start = time.perf_counter_ns()
            output = self.custom_kernel(data)
            self.synchronize()
            elapsed = time.perf_counter_ns() - start
        except BaseException as exc:  # noqa: BLE001
            protocol.send(self.reply_fd, {"ok": False, "error": describe_exception(exc)})
            return
        try:
            protocol.send(self.reply_fd, {"ok": True, "elapsed_ns": elapsed,
                                          "output_is_none": output is None}, output)
        except BaseException as exc:  # noqa: BLE001 - e.g. an object torch.save cannot write
            protocol.send(self.reply_fd, {"ok": True, "elapsed_ns": elapsed, "unsendable": True,
                                          "output_type": type(output).__name__,
                                          "message": str(exc)[:2000]})

    def time_calls(self, args: dict, settings: dict) -> None:
        try:
            self.timer = timing.CaseTimer(self.custom_kernel, self.call_inputs, self.device,
                                          timing.settings_from(settings))
            result = self.timer.run(args)
        except BaseException as exc:  # noqa: BLE001
            protocol.send(self.reply_fd, {"ok": False, "error": describe_exception(exc)})
            return
        protocol.send(self.reply_fd, {"ok": True, **result})

    def send_outputs(self, indices: list) -> None:
        """Outputs of earlier timed calls, for the harness to re-check."""
        kept = self.timer.kept_outputs if self.timer is not None else {}
        missing = [i for i in indices if i not in kept]
        if missing:
            protocol.send(self.reply_fd, {"ok": False, "error": {
                "type": "MissingOutputs", "message": f"outputs of calls {missing[:5]} were not kept",
                "traceback": ""}})
            return
        try:
            protocol.send(self.reply_fd, {"ok": True, "count": len(indices)},
                          [kept[i] for i in indices])
        except BaseException as exc:  # noqa: BLE001
            protocol.send(self.reply_fd, {"ok": True, "unsendable": True,
                                          "message": str(exc)[:2000]})

    def serve(self) -> None:
        while True:
            command, _ = protocol.receive(self.cmd_fd, max_payload=0)
            name = command.get("cmd")
            if name == "load":
                self.load_submission()
            elif name == "run":
                self.run_once(command["args"])
            elif name == "time":
                self.time_calls(command["args"], command["settings"])
            elif name == "outputs":
                self.send_outputs(command["indices"])
            else:
                return


def child_main(cmd_fd: int, reply_fd: int, device: str, call_inputs) -> None:
    """Entry point in the forked child; never returns."""
    code = 0
    try:
        Runner(cmd_fd, reply_fd, device, call_inputs).serve()
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
