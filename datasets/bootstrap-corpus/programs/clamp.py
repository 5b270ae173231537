import torch
import torch.nn.functional as F


def clamp(x: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return torch.clamp(x, lo, hi)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_clamp():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = clamp(torch.randn((N,), device=DEVICE, dtype=torch.float32), -0.5, 0.75)
    results["test_case_2"] = clamp(torch.randn((257, 33), device=DEVICE, dtype=torch.float32), -0.5, 0.75)
    results["test_case_3"] = clamp(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32), -0.5, 0.75)
    return results


test_results = test_clamp()
print(test_results)
