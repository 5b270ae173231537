"""Helpers shared by the bundled problems: strict output comparison and a reference context.

The judge copies this file next to each problem's reference.py (task.yml lists it as
"../utils.py"), so problems import it as `utils`.
"""
import os

import torch


def make_generator(device, seed: int) -> torch.Generator:
    """A generator on `device` seeded with `seed`, so inputs are a function of (seed, device)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return f"torch.Tensor(shape={tuple(value.shape)}, dtype={value.dtype}, device={value.device})"
    return type(value).__name__


def _format_index(index: tuple) -> str:
    return "(" + ", ".join(str(i) for i in index) + ("," if len(index) == 1 else "") + ")"


@torch.no_grad()
def check_close(output, expected: torch.Tensor, rtol: float, atol: float,
                name: str = "output", max_print: int = 5) -> tuple[bool, str]:
    """Strict elementwise comparison of one output tensor against the expected tensor.

    Requires a tensor of the same shape, dtype and device type. An element matches when
    |out - exp| <= atol + rtol * |exp|; where the expected value is NaN or +-inf the output
    must hold the same non-finite value, and anywhere else a non-finite output is a mismatch.
    """
    if output is None:
        return False, f"{name} is None: custom_kernel must return its result"
    if not isinstance(output, torch.Tensor):
        return False, f"{name} must be a torch.Tensor, got {_describe(output)}"
    if tuple(output.shape) != tuple(expected.shape):
        return False, f"{name} has shape {tuple(output.shape)}, expected {tuple(expected.shape)}"
    if output.dtype != expected.dtype:
        return False, f"{name} has dtype {output.dtype}, expected {expected.dtype}"
    if output.device.type != expected.device.type:
        return False, f"{name} is on device {output.device}, expected a {expected.device.type} tensor"
    if output.numel() == 0:
        return True, ""

    got = output.detach()
    exp = expected.detach()
    if got.device.type == "mps":  # MPS has no float64
        got, exp = got.cpu(), exp.cpu()
    exp = exp.to(device=got.device)
    got64 = got.to(torch.float64)
    exp64 = exp.to(torch.float64)

    exp_finite = torch.isfinite(exp64)
    diff = (got64 - exp64).abs()
    within = diff <= atol + rtol * exp64.abs()  # False for NaN/inf outputs
    same_nonfinite = (got64 == exp64) | (torch.isnan(got64) & torch.isnan(exp64))
    mismatched = torch.where(exp_finite, ~within, ~same_nonfinite)

    count = int(mismatched.count_nonzero().item())
    if count == 0:
        return True, ""

    got_finite = torch.isfinite(got64)
    nonfinite_where_finite = int((exp_finite & ~got_finite).count_nonzero().item())
    both_finite = exp_finite & got_finite
    parts = [
        f"{name} mismatch: {count} of {exp.numel()} elements differ "
        f"(tolerance |out-exp| <= {atol:.3g} + {rtol:.3g}*|exp|)",
    ]
    if bool(both_finite.any()):
        parts.append(f"max abs error {float(diff[both_finite].max().item()):.6g} over finite elements")
    if nonfinite_where_finite:
        parts.append(f"{nonfinite_where_finite} non-finite values (NaN/inf) where a finite one was expected")
    examples = []
    flat_indices = mismatched.flatten().nonzero().flatten()[:max_print].tolist()
    got_cpu = got64.flatten().cpu()
    exp_cpu = exp64.flatten().cpu()
    shape = tuple(exp.shape)
    for flat in flat_indices:
        index = []
        rest = flat
        for dim in reversed(shape):
            index.append(rest % dim)
            rest //= dim
        index = tuple(reversed(index))
        examples.append(f"at {_format_index(index)} got {got_cpu[flat].item():.8g} "
                        f"expected {exp_cpu[flat].item():.8g}")
    parts.append("; ".join(examples))
    if count > max_print:
        parts.append(f"... and {count - max_print} more")
    return False, "; ".join(parts)


def check_structure(output, expected, rtol: float, atol: float, name: str = "output") -> tuple[bool, str]:
    """check_close over a tensor or a (nested) tuple/list of tensors."""
    if isinstance(expected, (tuple, list)):
        if output is None:
            return False, f"{name} is None: custom_kernel must return its result"
        if not isinstance(output, (tuple, list)):
            return False, f"{name} must be a tuple of {len(expected)} tensors, got {_describe(output)}"
        if len(output) != len(expected):
            return False, f"{name} has {len(output)} elements, expected {len(expected)}"
        for i, (o, e) in enumerate(zip(output, expected)):
            ok, message = check_structure(o, e, rtol, atol, name=f"{name}[{i}]")
            if not ok:
                return ok, message
        return True, ""
    return check_close(output, expected, rtol=rtol, atol=atol, name=name)


def match_reference(data, output, reference, rtol: float = 1e-5, atol: float = 1e-8) -> tuple[bool, str]:
    """Default check_implementation: run the reference on `data` and compare strictly."""
    expected = reference(data)
    return check_structure(output, expected, rtol=rtol, atol=atol)


def make_match_reference(reference, **kwargs):
    def check_implementation(data, output):
        return match_reference(data, output, reference=reference, **kwargs)
    return check_implementation


class DeterministicContext:
    """Reference-side numerics: no TF32 anywhere, deterministic algorithms where they exist."""

    def __enter__(self):
        self._saved = (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.backends.cudnn.deterministic,
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_float32_matmul_precision(),
            os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        )
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        torch.set_float32_matmul_precision("highest")
        # warn_only: a missing deterministic kernel must not turn the reference into an error.
        torch.use_deterministic_algorithms(True, warn_only=True)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        (matmul_tf32, cudnn_tf32, cudnn_det, det, warn_only, precision, cublas) = self._saved
        torch.set_float32_matmul_precision(precision)
        torch.backends.cuda.matmul.allow_tf32 = matmul_tf32
        torch.backends.cudnn.allow_tf32 = cudnn_tf32
        torch.backends.cudnn.deterministic = cudnn_det
        torch.use_deterministic_algorithms(det, warn_only=warn_only)
        if cublas is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
        else:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = cublas
        return False
