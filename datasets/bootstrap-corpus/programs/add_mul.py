import torch
import torch.nn.functional as F


def add_mul(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return x * y + z


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_add_mul():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = add_mul(torch.randn((N,), device=DEVICE, dtype=torch.float32), torch.randn((N,), device=DEVICE, dtype=torch.float32), torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = add_mul(torch.randn((257, 33), device=DEVICE, dtype=torch.float32), torch.randn((257, 33), device=DEVICE, dtype=torch.float32), torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = add_mul(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32), torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32), torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_add_mul()
print(test_results)
