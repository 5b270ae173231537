// expect: wrong_answer
// Accumulates into the output without zeroing it first: the garbage stays in the sum.
#include "task.h"

__global__ void sum_kernel(const float* x, std::size_t n, float* out) {
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    sum += x[i];
  }
  atomicAdd(out, sum);
}

output_t custom_kernel(const input_t& data) {
  sum_kernel<<<64, 256>>>(data.x.data(), data.n, data.out.data());
  return {data.out.data(), 1};
}
