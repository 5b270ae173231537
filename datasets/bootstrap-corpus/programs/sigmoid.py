import torch
import torch.nn.functional as F


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_sigmoid():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = sigmoid(torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = sigmoid(torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = sigmoid(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_sigmoid()
print(test_results)
