import torch
import torch.nn.functional as F


def sqrt_log1p(x: torch.Tensor) -> torch.Tensor:
    return torch.sqrt(x) + torch.log1p(x)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_sqrt_log1p():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = sqrt_log1p(torch.rand((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = sqrt_log1p(torch.rand((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = sqrt_log1p(torch.rand((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_sqrt_log1p()
print(test_results)
