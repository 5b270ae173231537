import torch
import torch.nn.functional as F


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, K = (8192, 4096) if DEVICE == "cuda" else (64, 256)


def test_rms_norm():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = rms_norm(torch.randn((M, K), device=DEVICE), torch.randn((M, K)[1], device=DEVICE), 1e-6)
    results["test_case_2"] = rms_norm(torch.randn((37, 100), device=DEVICE), torch.randn((37, 100)[1], device=DEVICE), 1e-6)
    results["test_case_3"] = rms_norm(torch.randn((5, 7), device=DEVICE), torch.randn((5, 7)[1], device=DEVICE), 1e-6)
    return results


test_results = test_rms_norm()
print(test_results)
