// expect: wrong_answer
// Sums only what the first block of 256 threads covers once: wrong beyond 256 elements.
#include "task.h"

__global__ void sum_kernel(const float* x, std::size_t n, float* out) {
  __shared__ float partial[256];
  partial[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int i = 0; i < 256; ++i) sum += partial[i];
    *out = sum;
  }
}

output_t custom_kernel(const input_t& data) {
  sum_kernel<<<1, 256>>>(data.x.data(), data.n, data.out.data());
  return {data.out.data(), 1};
}
