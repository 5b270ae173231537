import torch
import torch.nn.functional as F


def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(F.linear(x, weight, bias), approximate="tanh")


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, K, N = (4096, 4096, 4096) if DEVICE == "cuda" else (96, 80, 72)


def test_linear_gelu():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = linear_gelu(torch.randn(M, K, device=DEVICE), torch.randn(N, K, device=DEVICE) / K ** 0.5, torch.randn(N, device=DEVICE))
    results["test_case_2"] = linear_gelu(torch.randn(3, 16, device=DEVICE), torch.randn(8, 16, device=DEVICE), torch.randn(8, device=DEVICE))
    return results


test_results = test_linear_gelu()
print(test_results)
