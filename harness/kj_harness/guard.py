"""Runtime defences inside the runner, the process that holds the submission.

They are tripwires, not walls: the submission shares this process, so anything here can in
principle be found and undone (docs/security.md lists what cannot hold). They make the plain
cheats fail with a clear message:

- timing and input functions replaced by the submission (checked by identity before and after
  every call) -> the runner reports a SecurityViolation;
- outputs that are not plain tensors (subclasses whose data appears only when serialised,
  lazy proxies) -> refused as outputs;
- outputs finished after the call returned (work left on a thread) -> timed outputs are copied
  as soon as the timed region ends, and the copy is what the harness checks;
- inputs modified by the call -> reported, so the check fails;
- per-problem kernel-language rules: a Triton kernel launched in every call, the reference's
  ref_kernel never called.
"""

from __future__ import annotations

import time

from . import protocol

SECURITY_VIOLATION = "SecurityViolation"


class Tampered(Exception):
    """A function the judge relies on was replaced by the submission."""


def _watched() -> dict:
    """Name -> the object the judge relies on, read now (before any submission code runs)."""
    import torch

    from . import protocol, runner, timing

    found: dict = {}

    def add(owner, owner_name: str, *names: str) -> None:
        for name in names:
            try:
                found[f"{owner_name}.{name}"] = (owner, name, getattr(owner, name))
            except AttributeError:
                pass

    add(time, "time", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
        "time", "time_ns")
    add(torch.cuda, "torch.cuda", "Event", "synchronize", "_sleep", "current_stream", "graph",
        "CUDAGraph", "Stream", "stream", "get_device_properties")
    for cls_name in ("Event", "CUDAGraph", "Stream"):
        cls = getattr(torch.cuda, cls_name, None)
        if cls is not None:
            add(cls, f"torch.cuda.{cls_name}", *(n for n in (
                "record", "elapsed_time", "synchronize", "query", "wait", "replay",
                "capture_begin", "capture_end", "wait_stream") if n in vars(cls)))
    # What the runner calls, untimed, between timed calls: the input generator and the tensor
    # factories it uses. A hook there could do the work off the clock.
    add(torch, "torch", "randn", "rand", "randint", "empty", "zeros", "ones", "full",
        "empty_like", "Generator", "save", "load")  # not manual_seed: torch._dynamo wraps it
    add(torch.Tensor, "torch.Tensor", "copy_", "zero_", "clone", "contiguous", "to")
    add(timing, "timing", "CaseSession", "iteration_args", "derive_seed", "_copy_into")
    add(timing.CaseSession, "timing.CaseSession", "sample", "prepare", "keep",
        "_capture_graph", "_calibrate_tail")
    add(runner.Runner, "runner.Runner", "run_once", "sample", "prepare", "send_output",
        "send_outputs", "serve")
    add(protocol, "protocol", "send", "receive")
    try:
        import reference

        add(reference, "reference", "generate_input")
    except Exception:  # noqa: BLE001 - the harness reports a broken reference itself
        pass
    return found


class TimerGuard:
    """Remembers the functions timing and input generation rely on; `check` raises Tampered
    when any of them is no longer the same object."""

    def __init__(self):
        self.watched = _watched()

    def check(self, when: str) -> None:
        changed = [name for name, (owner, attr, original) in self.watched.items()
                   if getattr(owner, attr, None) is not original]
        if changed:
            raise Tampered(f"the submission replaced {', '.join(sorted(changed)[:5])} "
                           f"(functions the judge times or generates inputs with), {when}")


def output_problem(output, depth: int = 0) -> str | None:
    """None when `output` is a plain torch.Tensor, a plain scalar, or a plain list/tuple/dict of
    those; else what is wrong. Subclasses are refused: their data can be made up when they are
    serialised, after the clock stopped."""
    import torch

    kind = type(output)
    if kind is torch.Tensor:
        if output.layout is not torch.strided:
            return f"a {output.layout} tensor (only dense tensors are outputs)"
        if output.device.type == "meta":
            return "a meta tensor (it holds no data)"
        return None
    if output is None or kind in (bool, int, float, str):
        return None
    if depth > 8:
        return "a container nested too deep"
    if kind in (tuple, list):
        for item in output:
            problem = output_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if kind is dict:
        for item in output.values():
            problem = output_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if protocol.named_tuple_kind(output) is not None:  # torch.return_types, named tuples
        for item in tuple.__iter__(output):
            problem = output_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if isinstance(output, torch.Tensor):
        return f"a subclass of torch.Tensor ({kind.__name__}), not a plain tensor"
    return f"a {kind.__name__}, not a tensor or a plain container of tensors"


def snapshot(output, copy: bool = True):
    """A copy of a plain output, made as soon as the timed region ended: work that finishes
    later (on a thread, say) does not reach what the harness checks. Not plain: kept as the
    problem's text, which the harness reports as a wrong output."""
    import torch

    problem = output_problem(output)
    if problem is not None:
        return NotAnOutput(problem)
    if not copy:
        return output
    if type(output) is torch.Tensor:
        return output.detach().clone()
    if type(output) in (tuple, list):
        return type(output)(snapshot(item) for item in output)
    if type(output) is dict:
        return {key: snapshot(item) for key, item in output.items()}
    named = protocol.named_tuple_kind(output)
    if named is not None:
        # Rebuilt as a type of the judge's: the submission's class (its __new__) never runs.
        items = [snapshot(item) for item in tuple.__iter__(output)]
        if named[0] == "return_type":
            return type(output)(items)
        return protocol.named_tuple_type(named[1], list(named[2]))(*items)
    return output


class NotAnOutput:
    """Stands in for an output that must not be sent: what was wrong with it."""

    def __init__(self, problem: str):
        self.problem = problem


def find_not_an_output(outputs) -> str | None:
    for output in outputs:
        if isinstance(output, NotAnOutput):
            return output.problem
    return None


def _tensors(obj, depth: int = 0):
    import torch

    if isinstance(obj, torch.Tensor):
        yield obj
    elif issubclass(type(obj), (list, tuple)) and depth < 8:
        # The container types' own iterators: a subclass's __iter__ is submission code.
        for item in (tuple.__iter__(obj) if issubclass(type(obj), tuple) else list.__iter__(obj)):
            yield from _tensors(item, depth + 1)
    elif isinstance(obj, dict) and depth < 8:
        for item in obj.values():
            yield from _tensors(item, depth + 1)


def input_tensors(data) -> list:
    """The tensors of a call's input, in the order both sides number them."""
    return list(_tensors(data))


def _unchanged(tensor, before) -> bool:
    """Same shape, dtype and values (NaN where NaN was)."""
    import torch

    if tensor.shape != before.shape or tensor.dtype != before.dtype:
        return False
    same = torch.eq(tensor, before)
    if tensor.is_floating_point() or tensor.is_complex():
        same |= torch.isnan(tensor) & torch.isnan(before)
    return bool(same.all())


def output_buffers(data, ref_kernel) -> list[int]:
    """Which input tensors the reference itself writes (by number): buffers a problem hands over
    for the output (reference-kernels' vectoradd passes (A, B, C) and writes C). Run by the
    harness on inputs of its own, never with submission code."""
    tensors = input_tensors(data)
    before = [t.detach().clone() for t in tensors]
    ref_kernel(data)
    return [i for i, (tensor, old) in enumerate(zip(tensors, before)) if not _unchanged(tensor, old)]


class InputCopy:
    """The call's input tensors as they were before it; `modified` says which changed, leaving
    out inputs whose memory the output shares and the output buffers the problem hands over
    (`writable`, numbered as input_tensors numbers them)."""

    def __init__(self, data, writable=()):
        skip = set(writable)
        self.inputs = [(i, t, t.detach().clone()) for i, t in enumerate(input_tensors(data))
                       if i not in skip]

    def modified(self, output) -> str | None:
        shared = set()
        for out in _tensors(output):
            try:
                shared.add(out.untyped_storage().data_ptr())
            except RuntimeError:
                pass
        for index, tensor, before in self.inputs:
            try:
                if tensor.untyped_storage().data_ptr() in shared:
                    continue
                if tensor.shape != before.shape or tensor.dtype != before.dtype:
                    return f"input tensor {index} changed shape or dtype"
                if not _unchanged(tensor, before):
                    return f"input tensor {index} ({tuple(tensor.shape)}) was modified"
            except RuntimeError as exc:
                return f"input tensor {index} could not be compared: {exc}"[:300]
        return None


class KernelLanguage:
    """A problem's `kernel_language` rule at run time: for `triton`, every call must launch a
    Triton kernel (counted where every launch passes, JITFunction.run, and the interpreter's
    InterpretedFunction.run on the CPU); for any rule, the reference's ref_kernel must not be
    called by the submission."""

    def __init__(self, language: str):
        self.language = language
        self.launches = 0
        self.reference_calls = 0
        if language == "triton":
            self._count_triton_launches()
        self._trip_reference()

    def _count_triton_launches(self) -> None:
        classes = []
        try:
            from triton.runtime.jit import JITFunction

            classes.append(JITFunction)
        except ImportError:
            return
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:
            pass
        for cls in classes:
            original = cls.run

            def run(fn_self, *args, _original=original, **kwargs):
                if not kwargs.get("warmup", False):
                    self.launches += 1
                return _original(fn_self, *args, **kwargs)

            cls.run = run

    def _trip_reference(self) -> None:
        try:
            import reference
        except ImportError:
            return
        original = reference.ref_kernel

        def ref_kernel(*args, **kwargs):
            self.reference_calls += 1
            return original(*args, **kwargs)

        reference.ref_kernel = ref_kernel

    def mark(self) -> tuple[int, int]:
        return self.launches, self.reference_calls

    def violation(self, before: tuple[int, int], calls: int = 1) -> str | None:
        """What the calls since `before` broke, or None."""
        launches, reference_calls = self.launches - before[0], self.reference_calls - before[1]
        if reference_calls:
            return ("the submission called the reference's ref_kernel, which this problem "
                    f"forbids (kernel_language: {self.language})")
        if self.language == "triton" and calls > 0 and launches < 1:
            return ("no Triton kernel was launched during the call; this problem requires one "
                    "(kernel_language: triton)")
        return None
