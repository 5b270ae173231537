import torch
import torch.nn.functional as F


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate='tanh')


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_gelu_tanh():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = gelu_tanh(torch.randn((N,), device=DEVICE, dtype=torch.float32))
    results["test_case_2"] = gelu_tanh(torch.randn((257, 33), device=DEVICE, dtype=torch.float32))
    results["test_case_3"] = gelu_tanh(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float32))
    return results


test_results = test_gelu_tanh()
print(test_results)
