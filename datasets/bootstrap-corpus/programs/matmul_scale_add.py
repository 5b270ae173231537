import torch


def matmul_scale_add(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, alpha: float) -> torch.Tensor:
    return alpha * (a @ b) + c


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, K, N = (4096, 4096, 4096) if DEVICE == "cuda" else (96, 80, 72)


def test_matmul_scale_add():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = matmul_scale_add(torch.randn(M, K, device=DEVICE), torch.randn(K, N, device=DEVICE), torch.randn(M, N, device=DEVICE), 0.5)
    results["test_case_2"] = matmul_scale_add(torch.randn(9, 4, device=DEVICE), torch.randn(4, 11, device=DEVICE), torch.randn(9, 11, device=DEVICE), 2.0)
    return results


test_results = test_matmul_scale_add()
print(test_results)
