import torch


def total_sum(x: torch.Tensor) -> torch.Tensor:
    return x.sum()


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = (1 << 24) if DEVICE == "cuda" else 10000


def test_total_sum():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = total_sum(torch.randn(N, device=DEVICE))
    results["test_case_2"] = total_sum(torch.randn(33, 17, device=DEVICE))
    results["test_case_3"] = total_sum(torch.rand(3, device=DEVICE))
    return results


test_results = test_total_sum()
print(test_results)
