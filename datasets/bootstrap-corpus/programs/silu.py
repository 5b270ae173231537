import torch
import torch.nn.functional as F


def silu(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_silu():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = silu(torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = silu(torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = silu(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_silu()
print(test_results)
