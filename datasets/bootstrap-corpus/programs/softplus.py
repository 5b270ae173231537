import torch
import torch.nn.functional as F


def softplus(x: torch.Tensor) -> torch.Tensor:
    return F.softplus(x)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_softplus():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = softplus(torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = softplus(torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = softplus(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_softplus()
print(test_results)
