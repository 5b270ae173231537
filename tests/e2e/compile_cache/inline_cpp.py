# expect: accepted
# vectoradd with an inline C++ extension (torch.utils.cpp_extension.load_inline): the sum in
# float32, rounded to float16 once, as the reference does. Its build takes tens of seconds on a
# CPU; judged again, the same file gets its build back from the compile cache.
import torch
from torch.utils.cpp_extension import load_inline

from task import input_t, output_t

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
  auto x = a.to(torch::kFloat32).contiguous();
  auto y = b.to(torch::kFloat32).contiguous();
  auto out = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  const float* py = y.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) po[i] = px[i] + py[i];
  return out.to(a.scalar_type());
}
"""

extension = load_inline(name="kj_cache_vadd", cpp_sources=[SOURCE], functions=["add"])


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return extension.add(a, b)
