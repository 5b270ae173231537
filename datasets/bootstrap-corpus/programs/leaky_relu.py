import torch
import torch.nn.functional as F


def leaky_relu(x: torch.Tensor) -> torch.Tensor:
    return F.leaky_relu(x, 0.01)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_leaky_relu():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = leaky_relu(torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = leaky_relu(torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = leaky_relu(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_leaky_relu()
print(test_results)
