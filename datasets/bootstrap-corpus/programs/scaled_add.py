import torch
import torch.nn.functional as F


def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_scaled_add():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = scaled_add(torch.randn((N,), device=DEVICE, dtype=torch.float32), torch.randn((N,), device=DEVICE, dtype=torch.float32), 0.5)
    results["test_case_2"] = scaled_add(torch.randn((257, 33), device=DEVICE, dtype=torch.float32), torch.randn((257, 33), device=DEVICE, dtype=torch.float32), 0.5)
    results["test_case_3"] = scaled_add(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32), torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32), 0.5)
    return results


test_results = test_scaled_add()
print(test_results)
