import torch


def embedding_gather(weight: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    return weight[indices]


##### TESTS #####
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
V, D, T = (50000, 1024, 16384) if DEVICE == "cuda" else (100, 48, 37)


def test_embedding_gather():
    torch.manual_seed(42)
    results = {}
    results["test_case_1"] = embedding_gather(torch.randn(V, D, device=DEVICE), torch.randint(0, V, (T,), device=DEVICE))
    results["test_case_2"] = embedding_gather(torch.randn(10, 3, device=DEVICE), torch.randint(0, 10, (4,), device=DEVICE))
    return results


test_results = test_embedding_gather()
print(test_results)
