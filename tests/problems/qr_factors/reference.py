import torch

from task import input_t, output_t


def ref_kernel(data: input_t) -> output_t:
    return torch.geqrf(data)


def generate_input(batch: int, n: int, seed: int, device: str = "cuda") -> input_t:
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return torch.randn(batch, n, n, device=device, dtype=torch.float32, generator=gen)


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    h, tau = output  # unpacks a structseq, a named tuple or a plain tuple alike
    if h.shape != data.shape or tau.shape != data.shape[:-1]:
        return False, f"shapes {tuple(h.shape)}, {tuple(tau.shape)} for input {tuple(data.shape)}"
    q = torch.linalg.householder_product(h, tau)
    r = torch.triu(h)
    n = data.shape[-1]
    eye = torch.eye(n, device=data.device, dtype=data.dtype)
    scale = torch.linalg.matrix_norm(data).clamp(min=1e-30)
    residual = (torch.linalg.matrix_norm(q @ r - data) / scale).max().item()
    orthogonality = torch.linalg.matrix_norm(q.mT @ q - eye).max().item()
    allowed = 1e-4
    if not residual <= allowed:
        return False, f"Q R - A is too large: residual={residual:.3g}, allowed={allowed}"
    if not orthogonality <= allowed:
        return False, f"Q is not orthogonal enough: residual={orthogonality:.3g}, allowed={allowed}"
    return True, ""
