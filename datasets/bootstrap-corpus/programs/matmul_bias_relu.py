import torch


def matmul_bias_relu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(a @ b + bias)


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, K, N = (4096, 4096, 4096) if DEVICE == "cuda" else (96, 80, 72)


def test_matmul_bias_relu():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = matmul_bias_relu(torch.randn(M, K, device=DEVICE), torch.randn(K, N, device=DEVICE), torch.randn(N, device=DEVICE))
    results["test_case_2"] = matmul_bias_relu(torch.randn(5, 3, device=DEVICE), torch.randn(3, 7, device=DEVICE), torch.randn(7, device=DEVICE))
    return results


test_results = test_matmul_bias_relu()
print(test_results)
