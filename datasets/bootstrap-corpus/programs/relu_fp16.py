import torch
import torch.nn.functional as F


def relu_fp16(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 5000


def test_relu_fp16():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = relu_fp16(torch.randn((N,), device=DEVICE, dtype=torch.float16))
    results["test_case_2"] = relu_fp16(torch.randn((257, 33), device=DEVICE, dtype=torch.float16))
    results["test_case_3"] = relu_fp16(torch.randn((4, 8, 64), device=DEVICE, dtype=torch.float16))
    return results


test_results = test_relu_fp16()
print(test_results)
