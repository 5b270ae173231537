import torch
import torch.nn.functional as F


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    return F.log_softmax(x, dim=1)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, K = (8192, 4096) if DEVICE == "cuda" else (64, 256)


def test_log_softmax():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = log_softmax(torch.randn((M, K), device=DEVICE))
    results["test_case_2"] = log_softmax(torch.randn((37, 100), device=DEVICE))
    results["test_case_3"] = log_softmax(torch.randn((5, 7), device=DEVICE))
    return results


test_results = test_log_softmax()
print(test_results)
