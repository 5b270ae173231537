"""The bootstrap pipeline's side inside the sandbox (docs/bootstrap.md).

Two uses:

- `python -m kj_harness.bootstrap probe TASK_DIR`: step 1. Runs TASK_DIR/program.py (the row's
  pt_code followed by its tests_code) as a script, exactly as the dataset defines pt_code_runs,
  stdout and stderr; then, silenced, records the calls the tests make to the entrypoint (or, for
  a KernelBench-style Model, runs one forward pass) and writes one JSON line of facts to fd 3.
- imported by a temporary problem's reference.py and submission (through bootstrap_task.py in
  the task directory): generate_input / ref_kernel / check_implementation for the judge, and
  entry_point(), which wraps the translation's entrypoint as custom_kernel.

Inputs of a case {"case": i, "seed": s}: seed 0 is the tests' own i-th call to the entrypoint;
another seed gives the same call with fresh random tensors of the same shapes and dtypes (a
Model's inputs come from get_inputs() under torch.manual_seed(seed)). Outputs are compared as
objects, tensor by tensor, with tolerances by dtype.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import math
import os
import runpy
import sys
import traceback

ROW_FILE = "row.json"
PROGRAM_MODULE = "pt_program"  # the row's pt_code, written as pt_program.py in the task dir
INIT_SEED = 42  # Model and ModelNew are built under this seed, so their weights match
MAX_CALLS = 16

# (rtol, atol) by dtype; atol is scaled by the output's median magnitude where that is above 1
# (_compare_tensor). Integers and booleans must be equal.
TOLERANCES = {
    "torch.float64": (1e-7, 1e-7),
    "torch.float32": (1e-4, 1e-4),
    "torch.complex64": (1e-4, 1e-4),
    "torch.complex128": (1e-7, 1e-7),
    "torch.float16": (1e-2, 1e-2),
    "torch.bfloat16": (2e-2, 2e-2),
}
DEFAULT_TOLERANCE = (1e-2, 1e-2)  # other floating types (float8 and the like)


# -- the row ----------------------------------------------------------------------------------

_row: dict | None = None
_program = None
_calls: list | None = None
_models: dict = {}


def _find_task_dir() -> str:
    for path in sys.path:
        if path and os.path.isfile(os.path.join(path, ROW_FILE)):
            return path
    raise FileNotFoundError(f"no {ROW_FILE} on the import path")


def row() -> dict:
    global _row
    if _row is None:
        with open(os.path.join(_find_task_dir(), ROW_FILE), encoding="utf-8") as f:
            _row = json.load(f)
    return _row


def program():
    """The row's pt_code as a module (imported from its file: tracebacks show its lines)."""
    global _program
    if _program is None:
        _program = importlib.import_module(PROGRAM_MODULE)
    return _program


def _clone(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def record_calls(module, tests_code: str, entrypoint: str) -> list:
    """Runs tests_code against `module` with the entrypoint wrapped: each call's (args, kwargs),
    cloned before the call. The tests' printing is silenced."""
    calls: list = []
    function = getattr(module, entrypoint)

    def recorder(*args, **kwargs):
        if len(calls) < MAX_CALLS:
            calls.append((_clone(args), _clone(kwargs)))
        return function(*args, **kwargs)

    namespace = dict(vars(module))
    namespace["__name__"] = "__main__"
    namespace[entrypoint] = recorder
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(tests_code, "<tests_code>", "exec"), namespace)  # noqa: S102 - the row's tests
        test = namespace.get(f"test_{entrypoint}")
        if not calls and callable(test):
            test()
    return calls


def kind() -> str:
    return row().get("kind", "function")


def test_calls() -> list:
    global _calls
    if _calls is None:
        _calls = record_calls(program(), row().get("tests_code", ""), row()["entrypoint"])
    return _calls


# -- inputs -----------------------------------------------------------------------------------

# Per recorded tensor (id -> (the tensor, spread, non-negative, mean)): what _randomize needs of
# it, computed once. The recorded calls live as long as the process, and each entry keeps its
# tensor alive, so an id is never reused for another tensor while it is here.
_float_stats: dict[int, tuple] = {}


def _stats_of(value) -> tuple[float, bool, float]:
    """Spread, sign and mean of a recorded floating tensor's finite values (complex: of their
    magnitudes). Every random variant of a call needs them: a timed run makes one per call."""
    import torch

    entry = _float_stats.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1:]
    real = value.detach().to("cpu").abs() if value.dtype.is_complex else value.detach().to("cpu")
    real = real.to(torch.float64)
    finite = real[torch.isfinite(real)]
    spread = float(finite.std()) if finite.numel() > 1 else 1.0
    spread = spread if spread > 0 else 1.0
    non_negative = bool(finite.numel()) and float(finite.min()) >= 0
    mean = float(finite.mean()) if finite.numel() else 0.0
    _float_stats[id(value)] = (value, spread, non_negative, mean)
    return spread, non_negative, mean


def _randomize(value, generator, device: str):
    """The same structure with fresh random tensors on `device`, drawn there by `generator` (a
    generator of that device): floats keep their sign range and spread, integers stay within their
    range (indices stay valid), booleans are fair coins. Drawn on the device itself: a timed
    evaluation makes a variant per timed call, and drawing 16 M values on the host and copying
    them over took longer than the calls."""
    import torch

    if isinstance(value, torch.Tensor):
        shape, dtype = tuple(value.shape), value.dtype
        if value.numel() == 0:
            return value.detach().clone().to(device)
        if dtype == torch.bool:
            return torch.rand(shape, generator=generator, device=device) < 0.5
        if dtype.is_floating_point or dtype.is_complex:
            spread, non_negative, mean = _stats_of(value)
            wide = torch.float64 if dtype in (torch.float64, torch.complex128) else torch.float32
            fresh = torch.randn(shape, generator=generator, dtype=wide, device=device) * spread
            fresh = fresh.abs() if non_negative else fresh + mean
            return fresh.to(dtype)
        low, high = int(value.min()), int(value.max())
        return torch.randint(low, high + 1, shape, generator=generator, device=device,
                             dtype=torch.int64).to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_randomize(v, generator, device) for v in value)
    if isinstance(value, dict):
        return {k: _randomize(v, generator, device) for k, v in value.items()}
    return value


def _to_device(value, device: str):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def generate_input(case: int, seed: int, device: str = "cpu"):
    """(args, kwargs) of one call to the entrypoint."""
    import torch

    if kind() == "module" or not row().get("tests_code"):
        torch.manual_seed(seed)
        inputs = list(program().get_inputs())
        return _to_device(tuple(inputs), device), {}
    calls = test_calls()
    if not calls:
        raise RuntimeError("the tests never call the entrypoint")
    args, kwargs = calls[case % len(calls)]
    if seed:
        generator = torch.Generator(device=device).manual_seed(seed)
        return _randomize(args, generator, device), _randomize(kwargs, generator, device)
    return _to_device(_clone(args), device), _to_device(_clone(kwargs), device)


def _device_of(data) -> str:
    import torch

    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            return str(item.device)
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return "cpu"


def _model(cls, device: str):
    """One instance per class and device, built under INIT_SEED from get_init_inputs()."""
    import torch

    key = (cls, device)
    if key not in _models:
        init = list(program().get_init_inputs()) if hasattr(program(), "get_init_inputs") else []
        torch.manual_seed(INIT_SEED)
        model = cls(*init)
        if isinstance(model, torch.nn.Module):
            model = model.to(device).eval()
        _models[key] = model
    return _models[key]


def _call(target, data):
    import torch

    args, kwargs = data
    if inspect.isclass(target):
        target = _model(target, _device_of(data))
    with torch.no_grad():
        return target(*args, **kwargs)


def ref_kernel(data):
    return _call(getattr(program(), row()["entrypoint"]), data)


def entry_point(target):
    """The translation's entrypoint (a function, or a Model-like class) as custom_kernel."""

    def custom_kernel(data):
        return _call(target, data)

    return custom_kernel


# -- comparison -------------------------------------------------------------------------------

class Mismatch(Exception):
    pass


def _compare_tensor(got, expected, where: str) -> float:
    import torch

    if not isinstance(got, torch.Tensor) or type(got) is not torch.Tensor:
        raise Mismatch(f"{where}: expected a tensor, got {type(got).__name__}")
    if tuple(got.shape) != tuple(expected.shape):
        raise Mismatch(f"{where}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    if got.dtype != expected.dtype:
        raise Mismatch(f"{where}: dtype {got.dtype}, expected {expected.dtype}")
    if got.numel() == 0:
        return 0.0
    # Compared where the expected output is (the device, for a GPU row): copying both to the host
    # and widening them there took longer than the calls they check.
    expected = expected.detach()
    got = got.detach().to(expected.device)
    if not (expected.dtype.is_floating_point or expected.dtype.is_complex):
        differ = got != expected
        count = int(differ.count_nonzero())
        if count:
            first = tuple(int(i) for i in differ.nonzero()[0])
            raise Mismatch(f"{where}: {count} of {got.numel()} elements differ (exact dtype "
                           f"{expected.dtype}); at {first} got {got[first].item()} expected "
                           f"{expected[first].item()}")
        return 0.0
    rtol, atol = TOLERANCES.get(str(expected.dtype), DEFAULT_TOLERANCE)
    wide = torch.complex128 if expected.dtype.is_complex else torch.float64
    g, e = got.to(wide), expected.to(wide)
    finite = torch.isfinite(e)
    # The absolute tolerance is relative to the output's typical magnitude (the median |expected|)
    # when that exceeds 1: an element near zero in an output of large values (a prefix sum's, a
    # long dot product's) carries the rounding of the large values it was computed from, whatever
    # order the sum took. The median, so that a few huge elements do not loosen the others.
    scale = float(e[finite].abs().median()) if bool(finite.any()) else 0.0
    atol = atol * max(1.0, scale)
    diff = (g - e).abs()
    within = diff <= atol + rtol * e.abs()
    same_nonfinite = (g == e) | (torch.isnan(g) & torch.isnan(e))
    bad = torch.where(finite, ~within, ~same_nonfinite)
    both = finite & torch.isfinite(g)
    max_error = float(diff[both].max()) if bool(both.any()) else 0.0
    count = int(bad.count_nonzero())
    if count:
        first = tuple(int(i) for i in bad.nonzero()[0])
        raise Mismatch(f"{where}: {count} of {got.numel()} elements differ (tolerance "
                       f"|got-expected| <= {atol:g} + {rtol:g}*|expected| for {expected.dtype}, "
                       f"median |expected| {scale:.4g}); "
                       f"max abs error {max_error:.6g}; at {first} got {g[first].item():.8g} "
                       f"expected {e[first].item():.8g}")
    return max_error


def compare(got, expected, where: str = "output") -> float:
    """The largest absolute error over every tensor and float in the output; raises Mismatch."""
    import torch

    if isinstance(expected, torch.Tensor):
        return _compare_tensor(got, expected, where)
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            raise Mismatch(f"{where}: expected a {type(expected).__name__} of {len(expected)} "
                           f"items, got {_describe(got)}")
        return max([compare(g, e, f"{where}[{i}]") for i, (g, e) in
                    enumerate(zip(got, expected))], default=0.0)
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise Mismatch(f"{where}: expected a dict with keys {sorted(map(str, expected))}, got "
                           f"{_describe(got)}")
        return max([compare(got[k], expected[k], f"{where}[{k!r}]") for k in expected],
                   default=0.0)
    if isinstance(expected, float) and not isinstance(got, bool) and isinstance(got, (int, float)):
        if math.isnan(expected) and math.isnan(got):
            return 0.0
        if not math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-6):
            raise Mismatch(f"{where}: got {got!r}, expected {expected!r}")
        return abs(got - expected) if math.isfinite(expected) else 0.0
    if type(got) is not type(expected) or got != expected:
        raise Mismatch(f"{where}: got {_describe(got)}, expected {_describe(expected)}")
    return 0.0


def _describe(value) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} items"
    return repr(value)[:100]


def check_implementation(data, output):
    """(passed, message): the message of a pass carries the largest error, for the dataset."""
    expected = ref_kernel(data)
    try:
        max_error = compare(output, expected)
    except Mismatch as mismatch:
        return False, str(mismatch)
    return True, f"max_abs_error={max_error:.9g}"


# -- step 1 -----------------------------------------------------------------------------------

def _facts(**fields) -> None:
    os.write(3, (json.dumps(fields) + "\n").encode())


def probe(directory: str) -> int:
    with open(os.path.join(directory, ROW_FILE), encoding="utf-8") as f:
        facts_row = json.load(f)
    sys.path.insert(0, directory)
    sys.argv = [os.path.join(directory, "program.py")]
    try:
        runpy.run_path(os.path.join(directory, "program.py"), run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            traceback.print_exc()
            _facts(runs=False, error=f"the program exited with status {exit_.code}")
            return 1
    except BaseException as exc:  # noqa: BLE001 - the row's code failed: that is the fact
        traceback.print_exc()
        _facts(runs=False, error=f"{type(exc).__name__}: {exc}"[:2000])
        return 1
    sys.stdout.flush()
    # What the judge will call: recorded silently, after the program's own run.
    try:
        global _row
        _row = facts_row
        module = program()
        entrypoint = facts_row["entrypoint"]
        if not hasattr(module, entrypoint):
            _facts(runs=True, calls=0, error=f"pt_code defines no {entrypoint}")
            return 0
        if facts_row.get("kind") == "module" or not facts_row.get("tests_code"):
            if not callable(getattr(module, "get_inputs", None)):
                _facts(runs=True, calls=0,
                       error="no tests_code and no get_inputs(): nothing to call the entrypoint with")
                return 0
            with contextlib.redirect_stdout(io.StringIO()):
                ref_kernel(generate_input(0, 0, "cuda" if _cuda() else "cpu"))
            _facts(runs=True, calls=1, biggest=0)
            return 0
        calls = test_calls()
        if not calls:
            _facts(runs=True, calls=0, error=f"the tests never call {entrypoint}")
            return 0
        sizes = [_numel((args, kwargs)) for args, kwargs in calls]
        _facts(runs=True, calls=len(calls), biggest=sizes.index(max(sizes)))
    except BaseException as exc:  # noqa: BLE001
        traceback.print_exc()
        _facts(runs=False, error=f"recording the entrypoint's calls: {type(exc).__name__}: {exc}"[:2000])
        return 1
    return 0


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _numel(value) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (list, tuple)):
        return sum(_numel(v) for v in value)
    if isinstance(value, dict):
        return sum(_numel(v) for v in value.values())
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "probe":
        print("usage: python -m kj_harness.bootstrap probe TASK_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(probe(sys.argv[2]))
