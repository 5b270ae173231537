// expect: wrong_answer
// Off by one: the last element is never written.
#include "task.h"

__global__ void add_kernel(const float* a, const float* b, float* c, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i + 1 < n) c[i] = a[i] + b[i];
}

output_t custom_kernel(const input_t& data) {
  add_kernel<<<static_cast<unsigned>((data.n + 255) / 256), 256>>>(data.a.data(), data.b.data(),
                                                                   data.c.data(), data.n);
  return {data.c.data(), data.n};
}
